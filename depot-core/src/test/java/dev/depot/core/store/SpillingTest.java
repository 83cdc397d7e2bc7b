package dev.depot.core.store;

import static dev.depot.core.index.IndexEntryDescriptor.state;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.depot.core.heap.HeapBlockDescriptor;
import dev.depot.core.index.EntryState;
import dev.depot.core.testing.TestId;
import dev.depot.errors.StoreFullException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The shared-memory steps of spilling, one at a time, in one process (the spiller's file I/O is not here). */
class SpillingTest {
    private static final long SIZE = 6 * 1024;

    /** Fills the fixture's store with sealed KEEP objects of {@link #SIZE} bytes, oldest first. */
    private static List<TestId> fillWithKeptObjects(StoreFixture f) {
        List<TestId> ids = new ArrayList<>();
        while (true) {
            TestId id = f.newId();
            long record;
            try {
                record = f.store.create(id.w0(), id.w1(), id.w2(), SIZE, new byte[0], Store.CREATE_KEEP, 0, id.text());
            } catch (StoreFullException e) {
                return ids;
            }
            f.store.seal(record);
            ids.add(id);
        }
    }

    @Test
    void shouldSayUnderTheLockOfTheFreeWhetherASpillMadeTheRoomAskedFor() {
        try (StoreFixture f = new StoreFixture()) {
            List<TestId> ids = fillWithKeptObjects(f);
            assertTrue(ids.size() >= 4, "the store holds " + ids.size() + " objects");
            Spilling spilling = f.store.spilling();
            long block = HeapBlockDescriptor.blockSizeFor(SIZE, 0);
            assertTrue(!spilling.hasRoomFor(block), "the store is full");
            int[] oldest = spilling.spillCandidates(2);

            // Asked for more than the store holds: spilled, but no room made. Asked for one block: the free made it.
            long tooLarge = StoreFixture.CAPACITY + 1;
            assertEquals(Spilling.Commit.SPILLED,
                spilling.commitSpill(oldest[0], spilling.stateWord(oldest[0]), tooLarge));
            assertEquals(Spilling.Commit.MADE_ROOM,
                spilling.commitSpill(oldest[1], spilling.stateWord(oldest[1]), block));
            assertTrue(spilling.hasRoomFor(block));
            for (int slot : oldest) {
                assertEquals(EntryState.SPILLED, state(spilling.stateWord(slot)));
            }
            assertEquals(2 * block, spilling.spilledBytes());
        }
    }

    @Test
    void shouldRefuseToSpillAPinnedObjectAndLeaveItSealed() {
        try (StoreFixture f = new StoreFixture()) {
            List<TestId> ids = fillWithKeptObjects(f);
            Spilling spilling = f.store.spilling();
            Pin pin = f.pin(ids.get(0));
            int slot = pin.slot();
            long sealed = spilling.stateWord(slot);
            assertEquals(Spilling.Commit.REFUSED, spilling.commitSpill(slot, sealed, 1));
            assertEquals(sealed, spilling.stateWord(slot), "still SEALED, as it was");
            f.store.unpin(pin);
            assertEquals(Spilling.Commit.MADE_ROOM, spilling.commitSpill(slot, sealed, 1));
            assertEquals(Spilling.Commit.REFUSED, spilling.commitSpill(slot, sealed, 1),
                "a stale state word is refused");
        }
    }
}
