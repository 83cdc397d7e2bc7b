package dev.depot.torture;

import dev.depot.client.ObjectId;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * Contents that tell one put of an id from the next: the metadata is a random 64-bit stamp (8 bytes,
 * little-endian) chosen at each put, and the data is SHA-256 in counter mode over {@code id || stamp ||
 * block number} (little-endian 32-bit), truncated to the size. A view checked against the stamp it was got with
 * detects any byte that is not that very put's: another object's, or a later put of the same id. The Python
 * worker ({@code overlap_worker.py}) computes the same bytes.
 */
final class StampedPayload {
    static final int STAMP_LENGTH = Long.BYTES;
    private static final int DIGEST_LENGTH = 32;

    private StampedPayload() {
    }

    static byte[] metadata(long stamp) {
        return ByteBuffer.allocate(STAMP_LENGTH).order(ByteOrder.LITTLE_ENDIAN).putLong(0, stamp).array();
    }

    /** The stamp in an object's metadata; throws when it is not one (not an object of this workload). */
    static long stampOf(byte[] metadata) {
        if (metadata.length != STAMP_LENGTH) {
            throw new IllegalStateException("metadata of " + metadata.length + " bytes is not a stamp");
        }
        return ByteBuffer.wrap(metadata).order(ByteOrder.LITTLE_ENDIAN).getLong(0);
    }

    static void fill(MemorySegment data, ObjectId id, long stamp) {
        MessageDigest sha = sha256();
        byte[] block = new byte[DIGEST_LENGTH];
        for (long offset = 0, n = 0; offset < data.byteSize(); offset += DIGEST_LENGTH, n++) {
            digest(sha, id, stamp, n, block);
            int len = (int) Math.min(DIGEST_LENGTH, data.byteSize() - offset);
            MemorySegment.copy(block, 0, data, ValueLayout.JAVA_BYTE, offset, len);
        }
    }

    /** Null when {@code data} holds exactly the put of {@code id} with {@code stamp}, else where it differs. */
    static String verify(MemorySegment data, ObjectId id, long stamp) {
        MessageDigest sha = sha256();
        byte[] block = new byte[DIGEST_LENGTH];
        for (long offset = 0, n = 0; offset < data.byteSize(); offset += DIGEST_LENGTH, n++) {
            digest(sha, id, stamp, n, block);
            int len = (int) Math.min(DIGEST_LENGTH, data.byteSize() - offset);
            for (int i = 0; i < len; i++) {
                if (data.get(ValueLayout.JAVA_BYTE, offset + i) != block[i]) {
                    return "object " + id + " (" + data.byteSize() + " bytes, stamp " + Long.toHexString(stamp)
                        + ") differs at byte " + (offset + i);
                }
            }
        }
        return null;
    }

    private static void digest(MessageDigest sha, ObjectId id, long stamp, long blockNumber, byte[] out) {
        sha.update(id.toBytes());
        sha.update(ByteBuffer.allocate(STAMP_LENGTH + Integer.BYTES).order(ByteOrder.LITTLE_ENDIAN)
            .putLong(0, stamp).putInt(STAMP_LENGTH, (int) blockNumber).array());
        try {
            sha.digest(out, 0, DIGEST_LENGTH);
        } catch (java.security.DigestException e) {
            throw new IllegalStateException(e);
        }
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("this JVM has no SHA-256", e);
        }
    }
}
