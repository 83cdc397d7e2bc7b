package dev.depot.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.depot.client.DepotClient;
import dev.depot.client.ObjectId;
import dev.depot.client.testing.ClientStores;
import dev.depot.client.testing.TempStore;
import dev.depot.core.index.IndexEntryDescriptor;
import dev.depot.core.index.ObjectIndex;
import dev.depot.core.store.StoreFile;
import dev.depot.core.store.StoreLayout;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code depot doctor --check} on a store of 10^5 objects whose ids are made of related words (a counter and its
 * complement, as a program numbering its objects makes them) finds exactly the entries recovery would drop.
 */
class DoctorScaleTest {
    private static final int OBJECTS = 100_000;
    private static final int INDEX_SLOTS = 1 << 18;

    private static ObjectId id(long n) {
        byte[] raw = new byte[ObjectId.LENGTH];
        ByteBuffer.wrap(raw).order(ByteOrder.LITTLE_ENDIAN).putLong(n).putLong(~n);
        return ObjectId.fromBytes(raw);
    }

    /** The index slot holding {@code id}. */
    private static int slotOf(ObjectIndex index, ObjectId id) {
        byte[] want = id.toBytes();
        byte[] seen = new byte[IndexEntryDescriptor.ID_LENGTH];
        for (int slot = 0; slot < index.slots(); slot++) {
            index.readId(slot, seen);
            if (Arrays.equals(want, seen)) {
                return slot;
            }
        }
        throw new AssertionError("no slot holds " + id);
    }

    @Test
    @Timeout(120)
    void shouldFindTheOverlapAndTheBlockOutsideTheHeapAmongAHundredThousandObjects() throws Exception {
        try (TempStore temp = new TempStore()) {
            StoreLayout layout = StoreLayout.forCapacity(64 << 20, 8, 16, INDEX_SLOTS);
            try (DepotClient depot = ClientStores.over(temp.create(layout))) {
                byte[] data = new byte[64];
                for (long n = 0; n < OBJECTS; n++) {
                    depot.put(id(n), data);
                }
            }
            int overlapping;
            int outside;
            try (StoreFile file = StoreFile.open(temp.dir())) {
                var index = new ObjectIndex(file.index(), file.layout().indexSlots());
                int a = slotOf(index, id(10));
                int b = slotOf(index, id(20));
                // The later of two entries at one offset is the one reported as overlapping.
                overlapping = Math.max(a, b);
                int kept = Math.min(a, b);
                file.index().set(ValueLayout.JAVA_LONG, IndexEntryDescriptor.entryOffset(overlapping)
                    + IndexEntryDescriptor.BLOCK_OFFSET_OFFSET, index.blockOffset(kept));
                outside = slotOf(index, id(30));
                file.index().set(ValueLayout.JAVA_LONG, IndexEntryDescriptor.entryOffset(outside)
                    + IndexEntryDescriptor.BLOCK_OFFSET_OFFSET, file.layout().heapLength() + 4096);
            }
            CliRunner.Result check = new CliRunner(temp.dir()).run("doctor", "--check");
            assertEquals(1, check.status(), check::toString);
            List<String> found = check.stdout().lines().filter(l -> l.startsWith("found: ")).toList();
            assertEquals(2, found.size(), check::toString);
            assertTrue(found.stream().anyMatch(f -> f.startsWith("found: index slot " + outside + ": block offset ")
                && f.endsWith("does not fit the heap of " + layout.heapLength() + " bytes; recovery drops the entry")),
                check::toString);
            assertTrue(found.stream().anyMatch(f -> f.startsWith("found: index slot " + overlapping + ": block ")
                && f.endsWith("overlaps another object; recovery drops the entry")), check::toString);
        }
    }
}
