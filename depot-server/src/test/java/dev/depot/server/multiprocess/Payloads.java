package dev.depot.server.multiprocess;

import dev.depot.client.ObjectId;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Deterministic object contents: the bytes of object {@code name} of {@code size} are a function of both, so
 * any process can verify any object without shared state. The size is part of the name ({@code name#size}).
 */
final class Payloads {
    private Payloads() {
    }

    static ObjectId id(String name, long size) {
        return ObjectId.of(name + "#" + size);
    }

    static long seed(String name) {
        return name.hashCode() * 0x9E3779B97F4A7C15L;
    }

    /** Fills {@code s} with the payload of {@code name}. */
    static void fill(MemorySegment s, String name) {
        long x = seed(name);
        long n = s.byteSize();
        long i = 0;
        for (; i + 8 <= n; i += 8) {
            x = x * 6364136223846793005L + 1442695040888963407L;
            s.set(ValueLayout.JAVA_LONG_UNALIGNED, i, x);
        }
        for (; i < n; i++) {
            s.set(ValueLayout.JAVA_BYTE, i, (byte) i);
        }
    }

    /** Returns null when {@code s} holds the payload of {@code name}, else a description of the first difference. */
    static String verify(MemorySegment s, String name) {
        long x = seed(name);
        long n = s.byteSize();
        long i = 0;
        for (; i + 8 <= n; i += 8) {
            x = x * 6364136223846793005L + 1442695040888963407L;
            if (s.get(ValueLayout.JAVA_LONG_UNALIGNED, i) != x) {
                return "object " + name + " differs at byte " + i;
            }
        }
        for (; i < n; i++) {
            if (s.get(ValueLayout.JAVA_BYTE, i) != (byte) i) {
                return "object " + name + " differs at byte " + i;
            }
        }
        return null;
    }
}
