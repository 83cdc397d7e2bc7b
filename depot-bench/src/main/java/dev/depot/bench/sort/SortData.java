package dev.depot.bench.sort;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;

/**
 * The numbers the sort demo sorts, as raw 64-bit words: {@code count} values generated in blocks of
 * {@link #BLOCK} from {@code (seed, block)}, so that every run (one process, one worker, N workers) sorts the
 * same multiset whatever its split. The order is that of {@code Arrays.sort}: {@link #key} maps a word to a long
 * whose signed order is {@code Double.compare}'s (so -0.0 before 0.0, every NaN last) or the int64 order.
 */
public enum SortData {
    FLOAT64("<f8") {
        @Override
        long value(SplittableRandom rnd) {
            return Double.doubleToRawLongBits((rnd.nextDouble() - 0.5) * 2e9);
        }

        @Override
        long special(int i) {
            return switch (i % 8) {
                case 0 -> Double.doubleToRawLongBits(Double.NaN);
                case 1 -> 0xfff8_0000_0000_0001L;  // a negative NaN with a payload: still sorts last
                case 2 -> Double.doubleToRawLongBits(-0.0);
                case 3 -> Double.doubleToRawLongBits(0.0);
                case 4 -> Double.doubleToRawLongBits(Double.POSITIVE_INFINITY);
                case 5 -> Double.doubleToRawLongBits(Double.NEGATIVE_INFINITY);
                case 6 -> Double.doubleToRawLongBits(Double.MIN_VALUE);
                default -> Double.doubleToRawLongBits(1.0);
            };
        }

        @Override
        public long key(long bits) {
            return floatKey(bits);
        }
    },
    INT64("<i8") {
        @Override
        long value(SplittableRandom rnd) {
            return rnd.nextLong();
        }

        @Override
        long special(int i) {
            return switch (i % 5) {
                case 0 -> Long.MIN_VALUE;
                case 1 -> Long.MAX_VALUE;
                case 2 -> 0;
                case 3 -> -1;
                default -> 42;
            };
        }

        @Override
        public long key(long value) {
            return value;
        }
    };

    /** {@link #FLOAT64}'s {@link #key}, static so that hot loops call it directly. */
    static long floatKey(long bits) {
        long canonical = Double.doubleToLongBits(Double.longBitsToDouble(bits));  // one NaN, greatest
        return canonical ^ ((canonical >> 63) & Long.MAX_VALUE);
    }

    /** Values per generated block. */
    public static final int BLOCK = 1 << 20;
    /** With specials on, one value in this many is a special one (NaN, ±0.0, infinities, duplicates). */
    public static final int SPECIAL_EVERY = 16;

    private final String dtype;

    SortData(String dtype) {
        this.dtype = dtype;
    }

    /** The NumPy type string, also the shuffle's dtype. */
    public String dtype() {
        return dtype;
    }

    public static SortData parse(String name) {
        return switch (name) {
            case "float64", "f8", "double" -> FLOAT64;
            case "int64", "i8", "long" -> INT64;
            default -> throw new IllegalArgumentException("--dtype is float64 or int64, got '" + name + "'");
        };
    }

    abstract long value(SplittableRandom rnd);

    abstract long special(int i);

    /** A long whose signed order is the sort order of the value whose raw bits are {@code word}. */
    public abstract long key(long word);

    public static long blocks(long count) {
        return (count + BLOCK - 1) / BLOCK;
    }

    /** First value of the blocks worker {@code w} of {@code workers} generates. */
    public static long firstValueOf(long count, int w, int workers) {
        return Math.min(count, blocks(count) * w / workers * BLOCK);
    }

    /**
     * Writes values {@code [from, to)} into {@code out} (as 64-bit words from index 0) and returns their
     * {@link #checksum}.
     */
    public long generate(long seed, long from, long to, boolean specials, MemorySegment out) {
        long sum = 0;
        long i = from;
        while (i < to) {
            long block = i / BLOCK;
            long blockEnd = Math.min(to, (block + 1) * BLOCK);
            SplittableRandom rnd = new SplittableRandom(seed * 0x9E37_79B9_7F4A_7C15L + block);
            for (long skip = block * BLOCK; skip < i; skip++) {
                value(rnd);  // only when a range starts inside a block (not in the demo's split)
            }
            for (; i < blockEnd; i++) {
                long v = value(rnd);
                if (specials && i % SPECIAL_EVERY == 0) {
                    v = special((int) (i / SPECIAL_EVERY));
                }
                out.setAtIndex(ValueLayout.JAVA_LONG, i - from, v);
                sum += mix(v);
            }
        }
        return sum;
    }

    /** One term of the order-independent checksum: the sum of {@code mix(word)} over all values, mod 2^64. */
    public static long mix(long z) {
        z = (z ^ (z >>> 33)) * 0xff51_afd7_ed55_8ccdL;
        z = (z ^ (z >>> 33)) * 0xc4ce_b9fe_1a85_ec53L;
        return z ^ (z >>> 33);
    }
}
