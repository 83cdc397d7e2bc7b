package dev.depot.core.store;

import static dev.depot.core.index.IndexEntryDescriptor.BLOCK_OFFSET_OFFSET;
import static dev.depot.core.index.IndexEntryDescriptor.entryOffset;
import static dev.depot.core.index.IndexEntryDescriptor.generation;
import static dev.depot.core.index.IndexEntryDescriptor.stateWord;
import static dev.depot.core.store.StoreFixture.slot;
import static dev.depot.core.store.StoreHeaderDescriptor.ALLOC_LOCK_OFFSET;
import static dev.depot.core.store.StoreHeaderDescriptor.OBJECT_COUNT_OFFSET;
import static dev.depot.core.store.StoreHeaderDescriptor.PENDING_DELETES_OFFSET;
import static dev.depot.core.store.StoreHeaderDescriptor.USED_BYTES_OFFSET;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.depot.core.clients.ClientTableDescriptor;
import dev.depot.core.heap.HeapBlockDescriptor;
import dev.depot.core.index.EntryState;
import dev.depot.core.memory.Atomics;
import dev.depot.core.testing.DeadProcess;
import dev.depot.core.testing.TestId;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** States a crashed client leaves behind, made by hand in one process, and what recovery makes of them. */
class RecoveryTest {
    private static final int DEAD = 5;

    private static StoreFixture withDeadClient() throws Exception {
        var f = new StoreFixture();
        try {
            f.registerIdentity(DEAD, DeadProcess.identity());
            assertFalse(f.store.clients.isAlive(DEAD));
            return f;
        } catch (Exception | Error e) {
            f.close();
            throw e;
        }
    }

    private static void setState(StoreFixture f, long record, int owner, EntryState st) {
        int slot = slot(record);
        long sw = f.store.index.stateWordVolatile(slot);
        f.store.index.putStateWordRelease(slot, stateWord(generation(sw), owner, st));
    }

    @Test
    void shouldReclaimAnUnsealedObjectOfADeadClient() throws Exception {
        try (var f = withDeadClient()) {
            TestId kept = f.newId();
            f.put(kept, 2000);
            TestId orphan = f.newId();
            long record = f.create(orphan, 5000, new byte[0]);
            setState(f, record, DEAD, EntryState.CREATING);
            assertEquals(List.of(), f.store.recover());
            assertFalse(f.stateOf(record).isLive());
            var s = f.assertConsistent();
            assertEquals(HeapBlockDescriptor.blockSizeFor(2000, 0), s.usedBytes());
            assertEquals(1, s.objectCount());
            f.put(orphan, 5000);
        }
    }

    @Test
    void shouldKeepUnsealedObjectsOfLiveClients() throws Exception {
        try (var f = withDeadClient()) {
            TestId id = f.newId();
            long record = f.create(id, 100, new byte[0]);
            assertEquals(List.of(), f.store.recover());
            assertEquals(EntryState.CREATING, f.stateOf(record));
            f.store.seal(record);
            assertNotNull(f.pin(id));
        }
    }

    @Test
    void shouldPutBackAnObjectThatADeadClientWasEvicting() throws Exception {
        try (var f = withDeadClient()) {
            TestId id = f.newId();
            long record = f.put(id, 3000);
            setState(f, record, DEAD, EntryState.EVICTING);
            assertEquals(List.of(), f.store.recover());
            assertEquals(EntryState.SEALED, f.stateOf(record));
            Pin p = f.pin(id);
            StoreFixture.assertPattern(id, f.store.data(p.slot()));
            f.store.unpin(p);
            f.assertConsistent();
        }
    }

    @Test
    void shouldFinishADeleteThatADeadClientStarted() throws Exception {
        try (var f = withDeadClient()) {
            TestId id = f.newId();
            long record = f.put(id, 3000);
            setState(f, record, DEAD, EntryState.DELETING);
            assertEquals(List.of(), f.store.recover());
            assertEquals(EntryState.DELETE_PENDING, f.stateOf(record));
            assertEquals(1, f.headerLong(PENDING_DELETES_OFFSET));
            assertNull(f.pin(id));
            f.store.sweepPendingDeletes();
            assertFalse(f.stateOf(record).isLive());
            assertEquals(0, f.headerLong(PENDING_DELETES_OFFSET));
            assertEquals(0, f.assertConsistent().usedBytes());
        }
    }

    @Test
    void shouldDropAnEntryWhoseBlockLiesOutsideTheHeap() {
        try (var f = new StoreFixture()) {
            f.put(f.newId(), 100);
            long record = f.put(f.newId(), 100);
            MemorySegment entries = f.store.file.index();
            entries.set(ValueLayout.JAVA_LONG, entryOffset(slot(record)) + BLOCK_OFFSET_OFFSET, StoreFixture.CAPACITY);
            List<String> problems = f.store.recover();
            assertEquals(List.of("index slot " + slot(record) + ": block offset " + StoreFixture.CAPACITY
                + " data 100 metadata 0 does not fit the heap of " + StoreFixture.CAPACITY + " bytes; entry dropped"),
                problems);
            assertFalse(f.stateOf(record).isLive());
            assertEquals(1, f.assertConsistent().objectCount());
        }
    }

    @Test
    void shouldDropAnEntryWhoseDataLengthWouldOverflowTheBlockSize() {
        try (var f = new StoreFixture()) {
            TestId kept = f.newId();
            f.put(kept, 100);
            long record = f.put(f.newId(), 100);
            long huge = Long.MAX_VALUE - 100;
            f.store.file.index().set(ValueLayout.JAVA_LONG,
                entryOffset(slot(record)) + dev.depot.core.index.IndexEntryDescriptor.DATA_LENGTH_OFFSET, huge);
            List<String> problems = f.store.recover();
            assertEquals(1, problems.size(), problems.toString());
            assertTrue(problems.getFirst().startsWith("index slot " + slot(record) + ": block offset "), problems.getFirst());
            assertFalse(f.stateOf(record).isLive());
            assertEquals(-1, f.store.lock.holder(), "the lock is free again");
            assertEquals(1, f.assertConsistent().objectCount());
            assertNotNull(f.pin(kept));
        }
    }

    @Test
    void shouldDropOneOfTwoEntriesWhoseBlocksOverlap() {
        try (var f = new StoreFixture()) {
            long a = f.put(f.newId(), 100);
            long b = f.put(f.newId(), 100);
            MemorySegment entries = f.store.file.index();
            entries.set(ValueLayout.JAVA_LONG, entryOffset(slot(b)) + BLOCK_OFFSET_OFFSET, f.store.index.blockOffset(slot(a)));
            List<String> problems = f.store.recover();
            assertEquals(1, problems.size(), problems.toString());
            assertTrue(problems.getFirst().endsWith("overlaps another object; entry dropped"), problems.getFirst());
            assertEquals(1, f.assertConsistent().objectCount());
        }
    }

    @Test
    void shouldRebuildTheHeapFromTheIndex() {
        try (var f = new StoreFixture()) {
            List<TestId> live = new ArrayList<>();
            for (int i = 0; i < 12; i++) {
                TestId id = f.newId();
                f.put(id, 500 + 300 * i);
                if (i % 3 == 0) {
                    f.delete(id);
                } else {
                    live.add(id);
                }
            }
            long used = f.assertConsistent().usedBytes();
            long largest = f.store.statistics().largestFreeBlock();
            // A crash inside the allocator: counters, free lists and block headers are garbage.
            Atomics.putLongVolatile(f.store.header, USED_BYTES_OFFSET, 123);
            Atomics.putLongVolatile(f.store.header, OBJECT_COUNT_OFFSET, 77);
            for (int bin = 0; bin < StoreHeaderDescriptor.FREE_BINS; bin++) {
                f.store.header.set(ValueLayout.JAVA_LONG, StoreHeaderDescriptor.freeBinOffset(bin), 64L * bin);
            }
            for (TestId id : live) {
                long block = f.store.index.blockOffset(f.store.index.findBlocking(id.w0(), id.w1(), id.w2()));
                f.store.heap.asSlice(block, HeapBlockDescriptor.HEADER_LENGTH).fill((byte) 0x5a);
            }
            assertEquals(List.of(), f.store.recover());
            var s = f.assertConsistent();
            assertEquals(used, s.usedBytes());
            assertEquals(live.size(), s.objectCount());
            assertEquals(largest, s.largestFreeBlock());
            for (TestId id : live) {
                Pin p = f.pin(id);
                StoreFixture.assertPattern(id, f.store.data(p.slot()));
                f.store.unpin(p);
                assertTrue(f.delete(id));
            }
            assertEquals(0, f.assertConsistent().usedBytes());
            assertEquals(StoreFixture.CAPACITY, f.store.statistics().largestFreeBlock());
        }
    }

    @Test
    void shouldStealTheAllocationLockFromADeadClientAndRebuildTheHeap() throws Exception {
        try (var f = withDeadClient()) {
            TestId before = f.newId();
            f.put(before, 1000);
            // The dead client died holding the lock, half-way through an allocation.
            Atomics.putLongVolatile(f.store.header, ALLOC_LOCK_OFFSET, DEAD + 1);
            Atomics.putLongVolatile(f.store.header, USED_BYTES_OFFSET, StoreFixture.CAPACITY);
            for (int bin = 0; bin < StoreHeaderDescriptor.FREE_BINS; bin++) {
                f.store.header.set(ValueLayout.JAVA_LONG, StoreHeaderDescriptor.freeBinOffset(bin), HeapBlockDescriptor.NONE);
            }
            TestId after = f.newId();
            f.put(after, 1000);
            assertEquals(-1, f.store.lock.holder());
            assertNotNull(f.pin(before));
            assertNotNull(f.pin(after));
            assertEquals(2 * HeapBlockDescriptor.blockSizeFor(1000, 0), f.assertConsistent().usedBytes());
        }
    }

    @Test
    void shouldHandOnARebuildThatFailedToTheNextHolder() {
        try (var f = new StoreFixture()) {
            TestId kept = f.newId();
            f.put(kept, 1000);
            // A holder whose rebuild failed left the lock marked; the next holder rebuilds at once, without
            // waiting for a liveness check.
            Atomics.putLongVolatile(f.store.header, ALLOC_LOCK_OFFSET, AllocationLock.NEEDS_REBUILD);
            Atomics.putLongVolatile(f.store.header, USED_BYTES_OFFSET, 12345);
            f.put(f.newId(), 10);
            assertEquals(-1, f.store.lock.holder());
            assertNotNull(f.pin(kept));
            f.assertConsistent();
        }
    }

    @Test
    void shouldStealTheAllocationLockNamingAFreeClientSlot() {
        try (var f = new StoreFixture()) {
            Atomics.putLongVolatile(f.store.header, ALLOC_LOCK_OFFSET, 7 + 1);
            f.put(f.newId(), 10);
            assertEquals(-1, f.store.lock.holder());
        }
    }

    @Test
    void shouldReapADeadClientsUnsealedObjectsAndPins() throws Exception {
        try (var f = withDeadClient()) {
            TestId unsealed = f.newId();
            long orphan = f.create(unsealed, 1000, new byte[0]);
            setState(f, orphan, DEAD, EntryState.CREATING);
            TestId pinnedByDead = f.newId();
            long record = f.put(pinnedByDead, 2000);
            MemorySegment deadSlot = f.store.clients.slot(DEAD);
            Atomics.putIntRelease(deadSlot, ClientTableDescriptor.PIN_HIGH_WATER_OFFSET, 1);
            Atomics.putLongVolatile(deadSlot, ClientTableDescriptor.pinRecordOffset(0), record);
            assertTrue(f.delete(pinnedByDead));
            assertEquals(EntryState.DELETE_PENDING, f.stateOf(record), "the dead client's pin defers the delete");
            assertEquals(1, f.store.reapDeadClients());
            assertEquals(0, f.store.clients.identity(DEAD));
            assertFalse(f.stateOf(orphan).isLive());
            assertFalse(f.stateOf(record).isLive(), "the sweep finished the delete");
            assertEquals(0, f.headerLong(PENDING_DELETES_OFFSET));
            assertEquals(0, f.assertConsistent().usedBytes());
            assertEquals(0, f.store.reapDeadClients(), "reaping is idempotent");
        }
    }

    @Test
    void shouldTakeOverAndSettleADeadClientsSlotWhenTheTableIsFullWithoutADaemon() throws Exception {
        try (var f = new StoreFixture()) {
            long dead = DeadProcess.identity();
            int max = f.store.clients.maxClients();
            for (int c = 1; c < max; c++) {
                f.registerIdentity(c, dead);
            }
            // The first dead slot (1) left an unsealed object and a pin that holds back a delete.
            TestId unsealed = f.newId();
            long orphan = f.create(unsealed, 1000, new byte[0]);
            setState(f, orphan, 1, EntryState.CREATING);
            TestId pinnedByDead = f.newId();
            long record = f.put(pinnedByDead, 2000);
            MemorySegment deadSlot = f.store.clients.slot(1);
            Atomics.putIntRelease(deadSlot, ClientTableDescriptor.PIN_HIGH_WATER_OFFSET, 1);
            Atomics.putLongVolatile(deadSlot, ClientTableDescriptor.pinRecordOffset(0), record);
            assertTrue(f.delete(pinnedByDead));
            assertEquals(EntryState.DELETE_PENDING, f.stateOf(record));

            // No daemon reaps here: the newcomer itself takes the dead slot over, settling it first.
            try (Store newcomer = Store.open(f.dir.path(), ClientTableDescriptor.KIND_JAVA)) {
                assertEquals(1, newcomer.clientSlot());
                assertTrue(newcomer.clients().isAlive(1));
                assertFalse(f.stateOf(orphan).isLive(), "the dead client's unsealed object is freed");
                assertFalse(f.stateOf(record).isLive(), "its pin is dropped and the deferred delete finished");
                assertEquals(0, f.store.clients.countPins(record));
                assertEquals(0, f.assertConsistent().usedBytes());
                // and the newcomer works in its slot
                TestId mine = f.newId();
                long r = newcomer.create(mine.w0(), mine.w1(), mine.w2(), 10, new byte[0], false, mine.text());
                newcomer.seal(r);
                assertNotNull(f.pin(mine));
            }
            assertEquals(0, f.store.clients.identity(1), "closing frees the slot again");
            for (int c = 2; c < max; c++) {
                assertEquals(dead, f.store.clients.identity(c), "only one slot is taken over per registration");
            }
        }
    }

    @Test
    void shouldCallOnlyLiveProcessesRunningWhenTheTableIsFull() throws Exception {
        try (var f = new StoreFixture()) {
            int max = f.store.clients.maxClients();
            List<Store> sessions = new java.util.ArrayList<>();
            try {
                for (int c = 1; c < max; c++) {
                    sessions.add(f.store.openSession(ClientTableDescriptor.KIND_JAVA));
                }
                var e = assertThrows(dev.depot.errors.ResourceLimitException.class,
                    () -> Store.open(f.dir.path(), ClientTableDescriptor.KIND_JAVA));
                assertTrue(e.getMessage().contains("client slots taken by live processes (pids "
                    + ProcessHandle.current().pid()), e.getMessage());
            } finally {
                sessions.forEach(Store::close);
            }
        }
    }

    @Test
    void shouldOrderBlocksByOffsetWhetherPackedOrCompared() {
        java.util.SplittableRandom random = new java.util.SplittableRandom(3);
        for (long bound : new long[] {1L << 20, 1L << 62}) { // the second leaves no room to pack a position beside
            int count = 1_000;
            long[] blocks = new long[2 * count];
            for (int i = 0; i < count; i++) {
                blocks[2 * i] = random.nextLong(bound);
                blocks[2 * i + 1] = i;
            }
            int[] order = Recovery.orderByOffset(blocks, count);
            assertEquals(count, order.length);
            boolean[] seen = new boolean[count];
            for (int k = 0; k < count; k++) {
                assertFalse(seen[order[k]], "position " + order[k] + " twice");
                seen[order[k]] = true;
                if (k > 0) {
                    assertTrue(blocks[2 * order[k - 1]] <= blocks[2 * order[k]], "out of order at " + k);
                }
            }
        }
        assertEquals(0, Recovery.orderByOffset(new long[0], 0).length);
    }
}
