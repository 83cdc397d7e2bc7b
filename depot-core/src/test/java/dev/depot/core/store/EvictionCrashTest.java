package dev.depot.core.store;

import static dev.depot.core.index.IndexEntryDescriptor.FLAG_KEEP;
import static dev.depot.core.index.IndexEntryDescriptor.isKept;
import static dev.depot.core.index.IndexEntryDescriptor.state;
import static dev.depot.core.index.IndexEntryDescriptor.stateWord;
import static dev.depot.core.index.IndexEntryDescriptor.generation;
import static dev.depot.core.store.StoreFixture.slot;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.depot.core.heap.HeapBlockDescriptor;
import dev.depot.core.index.EntryState;
import dev.depot.core.testing.DeadProcess;
import dev.depot.core.testing.TestId;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * What a holder killed inside an eviction leaves (made by hand: an entry EVICTING by a dead client, owner slots
 * that name the wrong entry), and that the rebuild repairs it.
 */
class EvictionCrashTest {
    private static final int DEAD = 5;

    @Test
    void shouldRepairTheOwnersAndEvictingEntriesOfADeadEvictor() throws Exception {
        try (var f = new StoreFixture()) {
            f.registerIdentity(DEAD, DeadProcess.identity());
            long size = 7000;
            List<TestId> ids = new ArrayList<>();
            List<Long> records = new ArrayList<>();
            int n = (int) (StoreFixture.CAPACITY / HeapBlockDescriptor.blockSizeFor(size, 0));
            for (int i = 0; i < n; i++) {
                TestId id = f.newId();
                ids.add(id);
                records.add(f.put(id, size));
            }
            int victim = slot(records.get(2));
            long sw = f.store.index.stateWordVolatile(victim);
            f.store.index.putStateWordRelease(victim, stateWord(generation(sw), DEAD, EntryState.EVICTING, FLAG_KEEP));
            // Mid-update garbage: an owner naming another entry.
            f.store.allocator.setOwner(f.store.index.blockOffset(slot(records.get(3))), slot(records.get(4)));
            assertEquals(List.of(), f.store.recover());
            long repaired = f.store.index.stateWordVolatile(victim);
            assertEquals(EntryState.SEALED, state(repaired));
            assertTrue(isKept(repaired), "the KEEP flag survives the repair");
            f.assertConsistent();
            // Eviction works again and never takes the KEEP object.
            for (int i = 0; i < 2 * n; i++) {
                TestId id = f.newId();
                f.store.seal(f.store.create(id.w0(), id.w1(), id.w2(), size, new byte[0], true, id.text()));
            }
            assertTrue(f.store.index.findSealed(ids.get(2).w0(), ids.get(2).w1(), ids.get(2).w2()) != 0);
            assertFalse(f.store.statistics().evictionCount() == 0);
            f.assertConsistent();
        }
    }
}
