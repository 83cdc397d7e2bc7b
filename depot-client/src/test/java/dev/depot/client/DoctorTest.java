package dev.depot.client;

import static org.junit.jupiter.api.Assertions.*;

import dev.depot.client.testing.TempStore;
import dev.depot.core.clients.ClientTableDescriptor;
import dev.depot.core.index.IndexEntryDescriptor;
import dev.depot.core.index.ObjectIndex;
import dev.depot.core.store.Doctor;
import dev.depot.core.store.StoreFile;
import dev.depot.errors.StoreFormatException;
import java.io.RandomAccessFile;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.Test;

/** {@code depot doctor}: finds corruption, repairs what is safe, and refuses a bad header precisely. */
class DoctorTest {
    @Test
    void shouldDropCorruptEntryRebuildHeapAndKeepTheRest() throws Exception {
        try (TempStore temp = new TempStore()) {
            try (DepotClient depot = DepotClient.wrap(temp.create(1 << 20))) {
                depot.put(ObjectId.of("good"), new byte[] {1, 2, 3});
                depot.put(ObjectId.of("bad"), new byte[100]);
            }
            int victimSlot;
            try (StoreFile file = StoreFile.open(temp.dir())) {
                var index = new ObjectIndex(file.index(), file.layout().indexSlots());
                ObjectId bad = ObjectId.of("bad");
                victimSlot = ClientTableDescriptor.pinnedSlot(index.findSealed(bad.w0(), bad.w1(), bad.w2()));
                // Corrupt: the entry's block points far past the heap.
                file.index().set(ValueLayout.JAVA_LONG, IndexEntryDescriptor.entryOffset(victimSlot)
                    + IndexEntryDescriptor.BLOCK_OFFSET_OFFSET, 1L << 40);
            }
            Doctor.Report report = Doctor.examine(temp.dir(), true);
            assertFalse(report.fatal());
            assertTrue(report.findings().stream().anyMatch(f -> f.contains("index slot " + victimSlot)), report.toString());
            try (DepotClient depot = DepotClient.open(temp.dir())) {
                try (ObjectView v = depot.get(ObjectId.of("good"), 0)) {
                    assertEquals(3, v.data().get(ValueLayout.JAVA_BYTE, 2));
                }
                assertFalse(depot.contains(ObjectId.of("bad")));
                depot.put(ObjectId.of("after"), new byte[200_000]);
            }
            assertTrue(Doctor.examine(temp.dir(), false).healthy());
        }
    }

    @Test
    void shouldReportBadMagicAsFatal() throws Exception {
        try (TempStore temp = new TempStore()) {
            temp.create(1 << 20).close();
            try (RandomAccessFile f = new RandomAccessFile(StoreFile.fileIn(temp.dir()).toFile(), "rw")) {
                f.writeLong(0x1234);
            }
            Doctor.Report report = Doctor.examine(temp.dir(), true);
            assertTrue(report.fatal());
            assertTrue(report.findings().getFirst().contains("is not a Depot store"), report.toString());
            assertThrows(StoreFormatException.class, () -> DepotClient.open(temp.dir()));
        }
    }
}
