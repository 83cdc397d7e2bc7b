package dev.depot.core.store;

import static dev.depot.core.store.RestoreFailureDescriptor.*;
import static dev.depot.core.store.StoreHeaderDescriptor.RESTORE_FAILURES;
import static dev.depot.core.store.StoreHeaderDescriptor.RESTORE_FAILURE_COUNT_OFFSET;

import dev.depot.core.memory.Atomics;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetEncoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * The ring of restore failure records in the store header ({@link RestoreFailureDescriptor}): written by the
 * daemon's spiller, read lock-free by any get that waited for a restore. A record names its index entry by slot
 * and generation, which no later object in that slot shares, so a record is never taken for another object's.
 * The spiller keeps at most one record per entry (a later failure of the same entry rewrites it).
 */
public final class RestoreFailures {
    /** A failure as read: {@code kind} is {@link RestoreFailureDescriptor#KIND_LOST} or {@code KIND_NO_ROOM}. */
    public record Failure(int kind, int slot, int generation, String reason) {
        public boolean lost() {
            return kind == KIND_LOST;
        }
    }

    private final MemorySegment header;

    RestoreFailures(MemorySegment header) {
        this.header = header;
    }

    /**
     * Records (the spiller only) that the entry {@code (slot, generation)} with id {@code id} could not be
     * restored, and why ({@code reason}, cut to {@link RestoreFailureDescriptor#REASON_MAX} UTF-8 bytes).
     */
    public void record(int slot, int generation, byte[] id, int kind, String reason) {
        int index = indexOf(slot, generation);
        if (index < 0) {
            long count = Atomics.getLongPlain(header, RESTORE_FAILURE_COUNT_OFFSET);
            index = (int) Long.remainderUnsigned(count, RESTORE_FAILURES);
            Atomics.putLongRelease(header, RESTORE_FAILURE_COUNT_OFFSET, count + 1);
        }
        byte[] text = utf8Prefix(reason, REASON_MAX);
        write(recordOffset(index), r -> {
            header.set(ValueLayout.JAVA_INT_UNALIGNED, r + SLOT_OFFSET, slot);
            header.set(ValueLayout.JAVA_INT_UNALIGNED, r + GENERATION_OFFSET, generation);
            header.set(ValueLayout.JAVA_INT_UNALIGNED, r + KIND_OFFSET, kind);
            header.set(ValueLayout.JAVA_INT_UNALIGNED, r + REASON_LENGTH_OFFSET, text.length);
            MemorySegment.copy(id, 0, header, ValueLayout.JAVA_BYTE, r + ID_OFFSET, Math.min(id.length, ID_LENGTH));
            MemorySegment.copy(text, 0, header, ValueLayout.JAVA_BYTE, r + REASON_OFFSET, text.length);
        });
    }

    /** Withdraws (the spiller only) the record of {@code (slot, generation)}, if any: it was restored after all. */
    public void clear(int slot, int generation) {
        int index = indexOf(slot, generation);
        if (index >= 0) {
            write(recordOffset(index), r -> header.set(ValueLayout.JAVA_INT_UNALIGNED, r + KIND_OFFSET, 0));
        }
    }

    /** The record of the entry {@code (slot, generation)}, or null. Lock-free; retries a record being written. */
    public Failure find(int slot, int generation) {
        for (int i = 0; i < RESTORE_FAILURES; i++) {
            Failure f = read(recordOffset(i));
            if (f != null && f.slot() == slot && f.generation() == generation) {
                return f;
            }
        }
        return null;
    }

    private int indexOf(int slot, int generation) {
        for (int i = 0; i < RESTORE_FAILURES; i++) {
            int r = recordOffset(i);
            if (header.get(ValueLayout.JAVA_INT_UNALIGNED, r + KIND_OFFSET) != 0
                && header.get(ValueLayout.JAVA_INT_UNALIGNED, r + SLOT_OFFSET) == slot
                && header.get(ValueLayout.JAVA_INT_UNALIGNED, r + GENERATION_OFFSET) == generation) {
                return i;
            }
        }
        return -1;
    }

    private interface Fields {
        void write(int recordOffset);
    }

    /** Seqlock write: odd sequence, fields, next even sequence (release). */
    private void write(int r, Fields fields) {
        long sequence = Atomics.getLongPlain(header, r + SEQUENCE_OFFSET);
        long odd = (sequence | 1) == sequence ? sequence + 2 : sequence + 1;
        Atomics.putLongVolatile(header, r + SEQUENCE_OFFSET, odd);
        VarHandle.storeStoreFence();  // readers that see a field written below see the odd sequence
        fields.write(r);
        Atomics.putLongRelease(header, r + SEQUENCE_OFFSET, odd + 1);
    }

    private Failure read(int r) {
        for (int attempt = 0; attempt < 100; attempt++) {
            long before = Atomics.getLongAcquire(header, r + SEQUENCE_OFFSET);
            if (before == 0) {
                return null;  // never written
            }
            if ((before & 1) != 0) {
                Thread.onSpinWait();
                continue;
            }
            int slot = header.get(ValueLayout.JAVA_INT_UNALIGNED, r + SLOT_OFFSET);
            int generation = header.get(ValueLayout.JAVA_INT_UNALIGNED, r + GENERATION_OFFSET);
            int kind = header.get(ValueLayout.JAVA_INT_UNALIGNED, r + KIND_OFFSET);
            int length = header.get(ValueLayout.JAVA_INT_UNALIGNED, r + REASON_LENGTH_OFFSET);
            byte[] text = new byte[Math.clamp(length, 0, REASON_MAX)];
            MemorySegment.copy(header, ValueLayout.JAVA_BYTE, r + REASON_OFFSET, text, 0, text.length);
            VarHandle.loadLoadFence();  // the copies above are done before the sequence is read again
            if (Atomics.getLongAcquire(header, r + SEQUENCE_OFFSET) != before) {
                continue;
            }
            if (kind != KIND_LOST && kind != KIND_NO_ROOM) {
                return null;  // withdrawn, or not a record this version knows
            }
            if (length < 0 || length > REASON_MAX) {
                throw new IllegalStateException("restore failure record at header offset " + r + " is corrupt: reason"
                    + " length " + length + " exceeds its capacity of " + REASON_MAX + " bytes; run `depot doctor`");
            }
            return new Failure(kind, slot, generation, new String(text, StandardCharsets.UTF_8));
        }
        return null;  // a writer stuck mid-record (killed): nothing trustworthy to report
    }

    /** The longest prefix of {@code s} that encodes in at most {@code max} UTF-8 bytes, whole characters only. */
    static byte[] utf8Prefix(String s, int max) {
        CharsetEncoder e = StandardCharsets.UTF_8.newEncoder().onMalformedInput(CodingErrorAction.REPLACE)
            .onUnmappableCharacter(CodingErrorAction.REPLACE);
        ByteBuffer out = ByteBuffer.allocate(max);
        e.encode(CharBuffer.wrap(s), out, true);
        byte[] b = new byte[out.position()];
        out.flip().get(b);
        return b;
    }
}
