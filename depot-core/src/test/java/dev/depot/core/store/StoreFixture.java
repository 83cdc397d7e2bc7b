package dev.depot.core.store;

import static dev.depot.core.index.IndexEntryDescriptor.state;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.depot.core.clients.ClientTableDescriptor;
import dev.depot.core.index.EntryState;
import dev.depot.core.memory.Atomics;
import dev.depot.core.testing.ShmDir;
import dev.depot.core.testing.TestId;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;

/** A real store file in its own /dev/shm directory with this process registered; both go on close. */
final class StoreFixture implements AutoCloseable {
    static final long CAPACITY = 64 * 1024;

    final ShmDir dir = new ShmDir();
    final Store store;
    final SplittableRandom random = new SplittableRandom(99);

    StoreFixture() {
        this(StoreLayout.forCapacity(CAPACITY, 8, 64, 64));
    }

    StoreFixture(StoreLayout layout) {
        try {
            store = Store.create(dir.path(), layout, ClientTableDescriptor.KIND_JAVA);
        } catch (IOException e) {
            dir.close();
            throw new UncheckedIOException(e);
        } catch (RuntimeException e) {
            dir.close();
            throw e;
        }
    }

    TestId newId() {
        return TestId.random(random);
    }

    /** Creates an object filled with a pattern derived from its id; returns its record (unsealed). */
    long create(TestId id, long size, byte[] metadata) {
        long record = store.create(id.w0(), id.w1(), id.w2(), size, metadata, false, id.text());
        MemorySegment data = store.data(ClientTableDescriptor.pinnedSlot(record));
        for (long i = 0; i < size; i++) {
            data.set(ValueLayout.JAVA_BYTE, i, pattern(id, i));
        }
        return record;
    }

    /** Creates and seals; returns the record. */
    long put(TestId id, long size) {
        long record = create(id, size, new byte[0]);
        store.seal(record);
        return record;
    }

    static byte pattern(TestId id, long i) {
        return (byte) (id.w0() + i * 31);
    }

    static void assertPattern(TestId id, MemorySegment data) {
        for (long i = 0; i < data.byteSize(); i++) {
            if (data.get(ValueLayout.JAVA_BYTE, i) != pattern(id, i)) {
                throw new AssertionError("byte " + i + " of " + id.text() + " differs");
            }
        }
    }

    Pin pin(TestId id) {
        return store.tryPin(id.w0(), id.w1(), id.w2());
    }

    boolean delete(TestId id) {
        return store.delete(id.w0(), id.w1(), id.w2());
    }

    static int slot(long record) {
        return ClientTableDescriptor.pinnedSlot(record);
    }

    EntryState stateOf(long record) {
        return state(store.index.stateWordVolatile(slot(record)));
    }

    long headerLong(int offset) {
        return Atomics.getLongVolatile(store.header, offset);
    }

    /** Puts a (dead) process identity into a free client slot, as a client that crashed would leave it. */
    void registerIdentity(int client, long identity) {
        MemorySegment slot = store.clients.slot(client);
        if (!Atomics.compareAndSetLong(slot, ClientTableDescriptor.IDENTITY_OFFSET, 0, identity)) {
            throw new IllegalStateException("client slot " + client + " is taken");
        }
    }

    /** Checks the statistics against a walk of the index: used bytes are the blocks of the live entries. */
    StoreStatistics assertConsistent() {
        var index = store.index;
        long used = 0;
        long count = 0;
        long sealed = 0;
        long unsealedBytes = 0;
        for (int slot = 0; slot < index.slots(); slot++) {
            EntryState st = state(index.stateWordVolatile(slot));
            if (!st.isLive()) {
                continue;
            }
            count++;
            if (st.isSpilled()) {
                continue;
            }
            used += store.allocator.blockSize(index.blockOffset(slot));
            if (st == EntryState.SEALED) {
                sealed++;
            } else if (st == EntryState.CREATING) {
                unsealedBytes += index.dataLength(slot);
            }
        }
        store.heapLock.lockAndRecover();
        try {
            assertEquals(java.util.List.of(), store.allocator.check(), "allocator check");
        } finally {
            store.heapLock.release();
        }
        StoreStatistics s = store.statistics();
        assertEquals(used, s.usedBytes(), "used bytes");
        assertEquals(s.capacityBytes() - used, s.freeBytes(), "free bytes");
        assertEquals(count, s.objectCount(), "object count");
        assertEquals(sealed, s.sealedCount(), "sealed count");
        assertEquals(unsealedBytes, s.unsealedBytes(), "unsealed bytes");
        return s;
    }

    @Override
    public void close() {
        try {
            store.close();
        } finally {
            dir.close();
        }
    }
}
