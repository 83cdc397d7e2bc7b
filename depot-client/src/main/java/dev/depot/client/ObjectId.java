package dev.depot.client;

import dev.depot.core.index.IndexEntryDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.HexFormat;

/**
 * A 20-byte object id, as in Plasma: random ({@link #random()}), parsed from 40 hex digits ({@link #fromHex}),
 * or derived from a name ({@link #of}: the first 20 bytes of SHA-256 of the name's UTF-8 bytes; the Python
 * client derives the same). Immutable. Ordered as their hex forms are (bytes compared unsigned, first to last).
 */
public final class ObjectId implements Comparable<ObjectId> {
    public static final int LENGTH = 20;
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final ValueLayout.OfLong LONG_LE = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt INT_LE = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private final byte[] bytes;
    private final long w0;
    private final long w1;
    private final int w2;

    private ObjectId(byte[] bytes) {
        this.bytes = bytes;
        MemorySegment s = MemorySegment.ofArray(bytes);
        this.w0 = s.get(LONG_LE, 0);
        this.w1 = s.get(LONG_LE, IndexEntryDescriptor.ID_W1_POSITION);
        this.w2 = s.get(INT_LE, IndexEntryDescriptor.ID_W2_POSITION);
    }

    /** A random id (from a {@link SecureRandom}). */
    public static ObjectId random() {
        byte[] b = new byte[LENGTH];
        RANDOM.nextBytes(b);
        return new ObjectId(b);
    }

    /** The id named {@code name}: SHA-256 of its UTF-8 bytes, first 20 bytes. */
    public static ObjectId of(String name) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(name.getBytes(StandardCharsets.UTF_8));
            return new ObjectId(Arrays.copyOf(digest, LENGTH));
        } catch (NoSuchAlgorithmException e) {
            throw new AssertionError("every JDK has SHA-256", e);
        }
    }

    /** Parses 40 hex digits. */
    public static ObjectId fromHex(String hex) {
        if (hex.length() != 2 * LENGTH) {
            throw new IllegalArgumentException("an object id is " + 2 * LENGTH + " hex digits, got " + hex.length()
                + ": '" + hex + "'");
        }
        try {
            return new ObjectId(HexFormat.of().parseHex(hex));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("not a hex object id: '" + hex + "'", e);
        }
    }

    /** An id from exactly 20 bytes (copied). */
    public static ObjectId fromBytes(byte[] bytes) {
        if (bytes.length != LENGTH) {
            throw new IllegalArgumentException("an object id is " + LENGTH + " bytes, got " + bytes.length);
        }
        return new ObjectId(bytes.clone());
    }

    public byte[] toBytes() {
        return bytes.clone();
    }

    public String toHex() {
        return HexFormat.of().formatHex(bytes);
    }

    long w0() {
        return w0;
    }

    long w1() {
        return w1;
    }

    int w2() {
        return w2;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ObjectId other && w0 == other.w0 && w1 == other.w1 && w2 == other.w2;
    }

    /**
     * Every word weighed by its own odd multiplier, then mixed (the finaliser of MurmurHash3): ids built from
     * related words (a counter and its complement, a prefix and a counter) spread as well as random ones. Folding
     * the words together with xor would give every id {@code (n, ~n)} the same value, and a {@code HashMap} of such
     * ids would search linearly on every lookup ({@code depot doctor} keeps every id of the store in one).
     */
    @Override
    public int hashCode() {
        long h = w0 * 0x9E3779B97F4A7C15L + w1 * 0xC2B2AE3D27D4EB4FL + w2 * 0x165667B19E3779F9L;
        h = (h ^ (h >>> 33)) * 0xFF51AFD7ED558CCDL;
        h = (h ^ (h >>> 33)) * 0xC4CEB9FE1A85EC53L;
        return (int) (h ^ (h >>> 33));
    }

    /** The order of {@link #toHex()}: bytes compared unsigned, first to last. */
    @Override
    public int compareTo(ObjectId other) {
        return Arrays.compareUnsigned(bytes, other.bytes);
    }

    @Override
    public String toString() {
        return toHex();
    }
}
