package dev.depot.shuffle;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_SHORT_UNALIGNED;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * A shuffle's manifest ({@link ManifestDescriptor}), encoded by {@link Shuffle#create} and decoded, untrusted,
 * by {@link Shuffle#open} and by the sweep of abandoned shuffles. The manifest object's metadata is the shuffle
 * id in UTF-8: object ids are hashes, so that is how a sweep that finds a manifest learns the names of the
 * shuffle's other objects.
 */
record Manifest(Shuffle.Layout layout, String dtype, int maps, int partitions, long creator) {
    private static final ValueLayout.OfInt INT = JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfShort SHORT = JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong LONG = JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    MemorySegment encode() {
        MemorySegment m = MemorySegment.ofArray(new byte[ManifestDescriptor.LENGTH]);
        m.set(INT, ManifestDescriptor.MAGIC_OFFSET, ManifestDescriptor.MAGIC);
        m.set(SHORT, ManifestDescriptor.VERSION_OFFSET, ManifestDescriptor.VERSION);
        m.set(JAVA_BYTE, ManifestDescriptor.LAYOUT_OFFSET, layout == Shuffle.Layout.PER_SLICE
            ? ManifestDescriptor.LAYOUT_PER_SLICE : ManifestDescriptor.LAYOUT_PER_MAP);
        m.set(JAVA_BYTE, ManifestDescriptor.DTYPE_LENGTH_OFFSET, (byte) dtype.length());
        m.set(INT, ManifestDescriptor.MAPS_OFFSET, maps);
        m.set(INT, ManifestDescriptor.PARTITIONS_OFFSET, partitions);
        m.set(LONG, ManifestDescriptor.CREATOR_OFFSET, creator);
        MemorySegment.copy(MemorySegment.ofArray(dtype.getBytes(StandardCharsets.US_ASCII)), 0, m,
            ManifestDescriptor.DTYPE_OFFSET, dtype.length());
        return m;
    }

    /** True when {@code m} starts like a manifest: the length and magic. */
    static boolean looksLikeOne(MemorySegment m) {
        return m.byteSize() >= ManifestDescriptor.LENGTH
            && m.get(INT, ManifestDescriptor.MAGIC_OFFSET) == ManifestDescriptor.MAGIC;
    }

    /**
     * Decodes the manifest of shuffle {@code shuffleId} found in {@code what}.
     *
     * @throws IllegalStateException naming the object and what is wrong when it is not a manifest this version reads
     */
    static Manifest decode(MemorySegment m, String shuffleId, Object what) {
        if (!looksLikeOne(m)) {
            throw new IllegalStateException("object " + what + " (" + m.byteSize() + " bytes) is not the"
                + " manifest of a shuffle (magic DSH1, " + ManifestDescriptor.LENGTH + " bytes)");
        }
        short version = m.get(SHORT, ManifestDescriptor.VERSION_OFFSET);
        byte layout = m.get(JAVA_BYTE, ManifestDescriptor.LAYOUT_OFFSET);
        int dtypeLength = Byte.toUnsignedInt(m.get(JAVA_BYTE, ManifestDescriptor.DTYPE_LENGTH_OFFSET));
        int maps = m.get(INT, ManifestDescriptor.MAPS_OFFSET);
        int partitions = m.get(INT, ManifestDescriptor.PARTITIONS_OFFSET);
        if (version != ManifestDescriptor.VERSION || maps <= 0 || partitions <= 0
            || dtypeLength > ManifestDescriptor.MAX_DTYPE_LENGTH
            || (layout != ManifestDescriptor.LAYOUT_PER_SLICE && layout != ManifestDescriptor.LAYOUT_PER_MAP)) {
            throw new IllegalStateException("the manifest of shuffle " + shuffleId + " is not one this version"
                + " reads: version " + version + " (expected " + ManifestDescriptor.VERSION + "), layout " + layout
                + ", " + maps + " maps, " + partitions + " partitions, dtype length " + dtypeLength);
        }
        String dtype = new String(m.asSlice(ManifestDescriptor.DTYPE_OFFSET, dtypeLength).toArray(JAVA_BYTE),
            StandardCharsets.US_ASCII);
        return new Manifest(layout == ManifestDescriptor.LAYOUT_PER_SLICE ? Shuffle.Layout.PER_SLICE
            : Shuffle.Layout.PER_MAP, dtype, maps, partitions, m.get(LONG, ManifestDescriptor.CREATOR_OFFSET));
    }

    /** The manifest object's metadata: the shuffle id, which names every other object of the shuffle. */
    static byte[] metadataFor(String shuffleId) {
        return shuffleId.getBytes(StandardCharsets.UTF_8);
    }
}
