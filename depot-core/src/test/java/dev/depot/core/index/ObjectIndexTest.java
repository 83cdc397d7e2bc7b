package dev.depot.core.index;

import static dev.depot.core.index.IndexEntryDescriptor.ENTRY_LENGTH;
import static dev.depot.core.index.IndexEntryDescriptor.generation;
import static dev.depot.core.index.IndexEntryDescriptor.owner;
import static dev.depot.core.index.IndexEntryDescriptor.state;
import static dev.depot.core.index.IndexEntryDescriptor.stateWord;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.depot.core.clients.ClientTableDescriptor;
import dev.depot.core.testing.TestId;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class ObjectIndexTest {
    private static final int SLOTS = 16;

    private final SplittableRandom random = new SplittableRandom(1234);
    private Arena arena;
    private ObjectIndex index;

    @BeforeEach
    void allocate() {
        arena = Arena.ofConfined();
        index = newIndex(SLOTS);
    }

    @AfterEach
    void release() {
        arena.close();
    }

    private ObjectIndex newIndex(int slots) {
        return new ObjectIndex(arena.allocate((long) slots * ENTRY_LENGTH, ENTRY_LENGTH), slots);
    }

    /** A random id whose home slot is {@code home}. */
    private TestId idWithHome(ObjectIndex idx, int home) {
        while (true) {
            TestId id = TestId.random(random);
            if (idx.home(id.w0(), id.w1()) == home) {
                return id;
            }
        }
    }

    private long insert(ObjectIndex idx, TestId id) {
        return idx.insert(id.w0(), id.w1(), id.w2(), 4096, 100, 7, 3);
    }

    private void seal(ObjectIndex idx, int slot) {
        long sw = idx.stateWordVolatile(slot);
        idx.putStateWordRelease(slot, stateWord(generation(sw), 0, EntryState.SEALED));
    }

    private int find(ObjectIndex idx, TestId id) {
        return idx.findBlocking(id.w0(), id.w1(), id.w2());
    }

    @Test
    void shouldInsertACreatingEntryWithItsFieldsAndOwner() {
        TestId id = TestId.random(random);
        long record = insert(index, id);
        int slot = ClientTableDescriptor.pinnedSlot(record);
        assertEquals(index.home(id.w0(), id.w1()), slot);
        long sw = index.stateWordAcquire(slot);
        assertEquals(EntryState.CREATING, state(sw));
        assertEquals(3, owner(sw));
        assertEquals(1, generation(sw));
        assertEquals(1, (int) record);
        assertEquals(4096, index.blockOffset(slot));
        assertEquals(100, index.dataLength(slot));
        assertEquals(7, index.metadataLength(slot));
        assertEquals(index.createTime(slot), index.lastUseMicros(slot) / 1000, "created (ms), first used (µs)");
        byte[] expected = ByteBuffer.allocate(20).order(ByteOrder.LITTLE_ENDIAN)
            .putLong(id.w0()).putLong(id.w1()).putInt(id.w2()).array();
        byte[] actual = new byte[20];
        index.readId(slot, actual);
        assertArrayEquals(expected, actual);
        assertEquals(slot, index.homeOfSlot(slot));
    }

    @Test
    void shouldFindAnEntryForReadersOnlyOnceSealed() {
        TestId id = TestId.random(random);
        long record = insert(index, id);
        int slot = ClientTableDescriptor.pinnedSlot(record);
        assertEquals(0, index.findSealed(id.w0(), id.w1(), id.w2()), "CREATING is invisible to readers");
        assertEquals(slot, find(index, id), "CREATING blocks another create of the id");
        seal(index, slot);
        assertEquals(record, index.findSealed(id.w0(), id.w1(), id.w2()));
        assertEquals(slot, index.findInState(id.w0(), id.w1(), id.w2(), EntryState.SEALED));
        assertEquals(-1, index.findInState(id.w0(), id.w1(), id.w2(), EntryState.CREATING));
    }

    @Test
    void shouldNotMatchAnIdThatDiffersInAnyWord() {
        TestId id = TestId.random(random);
        int slot = ClientTableDescriptor.pinnedSlot(insert(index, id));
        seal(index, slot);
        assertEquals(0, index.findSealed(id.w0(), id.w1(), id.w2() ^ 1));
        assertEquals(-1, index.findBlocking(id.w0(), id.w1(), id.w2() + 1));
        assertTrue(index.idEquals(slot, id.w0(), id.w1(), id.w2()));
        assertTrue(!index.idEquals(slot, id.w0(), id.w1() ^ (1L << 63), id.w2()));
    }

    @Test
    void shouldHideDeletedEntriesFromReadersAndCreators() {
        TestId id = TestId.random(random);
        int slot = ClientTableDescriptor.pinnedSlot(insert(index, id));
        for (EntryState st : new EntryState[] {EntryState.DELETING, EntryState.DELETE_PENDING}) {
            index.putStateWordRelease(slot, stateWord(1, 0, st));
            assertEquals(0, index.findSealed(id.w0(), id.w1(), id.w2()), st.name());
            assertEquals(-1, find(index, id), st + " does not block a new create of the id");
        }
        index.putStateWordRelease(slot, stateWord(1, 2, EntryState.EVICTING));
        assertNotEquals(0, index.findSealed(id.w0(), id.w1(), id.w2()), "EVICTING may still be put back");
        assertEquals(slot, find(index, id));
    }

    @Test
    void shouldProbePastCollidingEntriesAndWrapAround() {
        int home = SLOTS - 2;
        List<TestId> ids = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            TestId id = idWithHome(index, home);
            ids.add(id);
            assertEquals((home + i) % SLOTS, ClientTableDescriptor.pinnedSlot(insert(index, id)));
        }
        for (int i = 0; i < ids.size(); i++) {
            assertEquals((home + i) % SLOTS, find(index, ids.get(i)), "id " + i);
        }
        assertEquals(-1, find(index, idWithHome(index, home)), "a missing id with the same home ends at the EMPTY slot");
    }

    @Test
    void shouldReuseATombstoneInTheMiddleOfAChainWithTheNextGeneration() {
        int home = 5;
        TestId a = idWithHome(index, home);
        TestId b = idWithHome(index, home);
        TestId c = idWithHome(index, home);
        insert(index, a);
        insert(index, b);
        insert(index, c);
        index.remove(6);
        assertEquals(EntryState.TOMBSTONE, state(index.stateWordAcquire(6)), "c follows: b stays a tombstone");
        assertEquals(7, find(index, c), "c is found across the tombstone");
        assertEquals(-1, find(index, b));
        TestId d = idWithHome(index, home);
        long record = insert(index, d);
        assertEquals(6, ClientTableDescriptor.pinnedSlot(record));
        assertEquals(2, generation(index.stateWordAcquire(6)));
        assertEquals(2, (int) record);
    }

    @Test
    void shouldTurnTombstonesBeforeAnEmptySlotBackIntoEmpty() {
        int home = 9;
        TestId a = idWithHome(index, home);
        TestId b = idWithHome(index, home);
        TestId c = idWithHome(index, home);
        insert(index, a);
        insert(index, b);
        insert(index, c);
        index.remove(9);
        index.remove(10);
        assertEquals(EntryState.TOMBSTONE, state(index.stateWordAcquire(9)));
        assertEquals(EntryState.TOMBSTONE, state(index.stateWordAcquire(10)));
        index.remove(11);
        for (int s = 9; s <= 11; s++) {
            assertEquals(EntryState.EMPTY, state(index.stateWordAcquire(s)), "slot " + s);
            assertEquals(1, generation(index.stateWordAcquire(s)), "generation survives EMPTY");
        }
    }

    @Test
    void shouldIncrementTheGenerationEachTimeASlotIsReused() {
        TestId id = TestId.random(random);
        List<Long> records = new ArrayList<>();
        for (int i = 1; i <= 5; i++) {
            long record = insert(index, id);
            records.add(record);
            assertEquals(i, (int) record);
            index.remove(ClientTableDescriptor.pinnedSlot(record));
        }
        assertEquals(5, records.stream().distinct().count(), "a stale pin record never names a new object");
    }

    @Test
    void shouldFailLoudlyWhenEverySlotIsTaken() {
        for (int i = 0; i < SLOTS; i++) {
            insert(index, TestId.random(random));
        }
        var e = assertThrows(IllegalStateException.class, () -> insert(index, TestId.random(random)));
        assertEquals("object index has no free slot among 16", e.getMessage());
    }

    @Test
    void shouldPlaceNoEntryBeyondTheProbeLimitFromItsHome() {
        ObjectIndex big = newIndex(2 * IndexEntryDescriptor.MAX_PROBE);
        int home = 100;
        List<TestId> ids = new ArrayList<>();
        for (int i = 0; i < IndexEntryDescriptor.MAX_PROBE; i++) {
            TestId id = idWithHome(big, home);
            ids.add(id);
            assertTrue(big.hasRoomFor(id.w0(), id.w1()));
            insert(big, id);
        }
        TestId oneTooMany = idWithHome(big, home);
        assertFalse(big.hasRoomFor(oneTooMany.w0(), oneTooMany.w1()), "the window of this home is full");
        var e = assertThrows(IllegalStateException.class, () -> insert(big, oneTooMany));
        assertTrue(e.getMessage().contains("from this id's home"), e.getMessage());
        assertEquals(-1, find(big, oneTooMany), "a missing id is not found, and the lookup stops at the limit");
        assertEquals(home + IndexEntryDescriptor.MAX_PROBE - 1, find(big, ids.getLast()));
        TestId elsewhere = idWithHome(big, home + IndexEntryDescriptor.MAX_PROBE + 10);
        assertTrue(big.hasRoomFor(elsewhere.w0(), elsewhere.w1()));
    }

    @Test
    void shouldRejectARegionThatDoesNotHoldAPowerOfTwoEntries() {
        assertThrows(IllegalArgumentException.class, () -> new ObjectIndex(arena.allocate(12 * ENTRY_LENGTH, 64), 12));
        assertThrows(IllegalArgumentException.class, () -> new ObjectIndex(arena.allocate(16 * ENTRY_LENGTH, 64), 32));
    }

    @Test
    void shouldKeepEveryEntryFindableUnderRandomInsertsAndRemovals() {
        int slots = 64;
        ObjectIndex idx = newIndex(slots);
        int max = (int) IndexEntryDescriptor.maxObjects(slots);
        // Homes from a narrow range make long chains, many tombstones and wrap-around.
        int[] homes = {slots - 3, slots - 2, slots - 1, 0, 1, 20, 21, 22};
        Map<TestId, Integer> live = new HashMap<>();
        List<TestId> removed = new ArrayList<>();
        for (int step = 0; step < 20_000; step++) {
            if (live.size() < max && (live.isEmpty() || random.nextInt(100) < 55)) {
                TestId id = idWithHome(idx, homes[random.nextInt(homes.length)]);
                assertEquals(-1, find(idx, id));
                int slot = ClientTableDescriptor.pinnedSlot(insert(idx, id));
                live.put(id, slot);
            } else {
                TestId id = new ArrayList<>(live.keySet()).get(random.nextInt(live.size()));
                idx.remove(live.remove(id));
                removed.add(id);
                if (removed.size() > 50) {
                    removed.remove(0);
                }
            }
            for (Map.Entry<TestId, Integer> e : live.entrySet()) {
                assertEquals(e.getValue(), find(idx, e.getKey()), "step " + step + ": live id lost");
            }
            for (TestId id : removed) {
                if (!live.containsKey(id)) {
                    assertEquals(-1, find(idx, id), "step " + step + ": removed id still found");
                }
            }
            for (int s = 0; s < slots; s++) {
                if (state(idx.stateWordAcquire(s)) == EntryState.TOMBSTONE) {
                    assertNotEquals(EntryState.EMPTY, state(idx.stateWordAcquire((s + 1) % slots)),
                        "step " + step + ": tombstone in slot " + s + " before an EMPTY slot was not cleaned up");
                }
            }
        }
    }
}
