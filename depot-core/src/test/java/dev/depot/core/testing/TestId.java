package dev.depot.core.testing;

import java.util.HexFormat;
import java.util.random.RandomGenerator;

/** An object id as the three words the core takes: bytes 0..7, 8..15 and 16..19, little-endian. */
public record TestId(long w0, long w1, int w2) {
    public static TestId random(RandomGenerator random) {
        return new TestId(random.nextLong(), random.nextLong(), random.nextInt());
    }

    public String text() {
        return HexFormat.of().toHexDigits(w0) + HexFormat.of().toHexDigits(w1) + HexFormat.of().toHexDigits(w2);
    }
}
