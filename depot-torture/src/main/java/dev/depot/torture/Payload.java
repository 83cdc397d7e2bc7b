package dev.depot.torture;

import dev.depot.client.ObjectId;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Self-checking object contents: a pseudo-random stream seeded by the object's id, so any process can verify
 * any object from its id and size alone, with no shared bookkeeping.
 */
final class Payload {
    private Payload() {
    }

    static long seed(ObjectId id) {
        return ByteBuffer.wrap(id.toBytes()).order(ByteOrder.LITTLE_ENDIAN).getLong(0) | 1;
    }

    static void fill(MemorySegment s, ObjectId id) {
        long x = seed(id);
        long n = s.byteSize();
        long i = 0;
        for (; i + 8 <= n; i += 8) {
            x = next(x);
            s.set(ValueLayout.JAVA_LONG_UNALIGNED, i, x);
        }
        for (; i < n; i++) {
            s.set(ValueLayout.JAVA_BYTE, i, (byte) (x >>> (8 * (i & 7))));
        }
    }

    /** Null when {@code s} holds the payload of {@code id}, else where it differs. */
    static String verify(MemorySegment s, ObjectId id) {
        long x = seed(id);
        long n = s.byteSize();
        long i = 0;
        for (; i + 8 <= n; i += 8) {
            x = next(x);
            if (s.get(ValueLayout.JAVA_LONG_UNALIGNED, i) != x) {
                return "object " + id + " (" + n + " bytes) is corrupt at byte " + i;
            }
        }
        for (; i < n; i++) {
            if (s.get(ValueLayout.JAVA_BYTE, i) != (byte) (x >>> (8 * (i & 7)))) {
                return "object " + id + " (" + n + " bytes) is corrupt at byte " + i;
            }
        }
        return null;
    }

    private static long next(long x) {
        x ^= x << 13;
        x ^= x >>> 7;
        x ^= x << 17;
        return x;
    }
}
