package dev.depot.arrow;

import static dev.depot.arrow.ArrowStreamDescriptor.*;

import dev.depot.client.DepotClient;
import dev.depot.client.ObjectId;
import dev.depot.client.ObjectWriter;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.compression.NoCompressionCodec;
import org.apache.arrow.vector.ipc.message.ArrowBuffer;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.ipc.message.IpcOption;
import org.apache.arrow.vector.ipc.message.MessageSerializer;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Writes an Arrow IPC stream into one object: plans every message first (so the object is created at its exact
 * size), then copies each buffer once, with {@link MemorySegment#copy}, to the offset its message names. Arrow's
 * own {@code WriteChannel} is not used: on Java 25 it needs {@code --add-opens java.base/java.nio}.
 */
final class StreamWriter {
    /** One message to write: its flatbuffer, where it starts, and for a record batch its buffers. */
    record Planned(ByteBuffer flatbuffer, long offset, long metadataLength, ArrowRecordBatch batch) {
        long bodyOffset() {
            return offset + PREFIX_LENGTH + metadataLength;
        }

        long end() {
            return bodyOffset() + (batch == null ? 0 : batch.computeBodyLength());
        }
    }

    private StreamWriter() {
    }

    /** Every message of a stream, placed: {@link #writeTo} writes them at these offsets. */
    record Plan(List<Planned> messages, long endOfStream) {
        long size() {
            return endOfStream + END_OF_STREAM_LENGTH;
        }

        /** Writes the whole stream at offset 0 of {@code out}, which has at least {@link #size} bytes. */
        void writeTo(MemorySegment out) {
            if (out.byteSize() < size()) {
                throw new IllegalArgumentException("an Arrow stream of " + size() + " bytes does not fit in "
                    + out.byteSize() + " bytes");
            }
            for (Planned p : messages) {
                copy(p, out);
            }
            out.set(INT_LE, endOfStream + CONTINUATION_OFFSET, CONTINUATION_MARKER);
            out.set(INT_LE, endOfStream + METADATA_LENGTH_OFFSET, 0);
        }
    }

    static long write(DepotClient client, ObjectId id, VectorSchemaRoot... roots) {
        List<ArrowRecordBatch> batches = unload("object " + id, roots);
        try {
            return write(client, id, roots[0].getSchema(), batches);
        } finally {
            close(batches);
        }
    }

    /**
     * The record batches of {@code roots} (all of one schema, at least one), sharing the roots' buffers (no copy);
     * the caller closes them.
     */
    static List<ArrowRecordBatch> unload(String what, VectorSchemaRoot... roots) {
        if (roots.length == 0) {
            throw new IllegalArgumentException("writing " + what + " needs at least one VectorSchemaRoot");
        }
        Schema schema = roots[0].getSchema();
        checkNoDictionaries(schema.getFields(), what);
        List<ArrowRecordBatch> batches = new ArrayList<>(roots.length);
        try {
            for (int i = 0; i < roots.length; i++) {
                if (!roots[i].getSchema().equals(schema)) {
                    throw new IllegalArgumentException("batch " + i + " of " + what + " has schema "
                        + roots[i].getSchema() + ", not the first batch's " + schema);
                }
                batches.add(new VectorUnloader(roots[i], true, NoCompressionCodec.INSTANCE, true).getRecordBatch());
            }
        } catch (RuntimeException e) {
            close(batches);
            throw e;
        }
        return batches;
    }

    static void close(List<ArrowRecordBatch> batches) {
        for (ArrowRecordBatch b : batches) {
            b.close();
        }
    }

    /** Writes {@code schema} and {@code batches} as they are (the caller keeps and closes the batches). */
    static long write(DepotClient client, ObjectId id, Schema schema, List<ArrowRecordBatch> batches) {
        Plan plan = plan(schema, batches);
        try (ObjectWriter w = client.create(id, plan.size(), MEDIA_TYPE_BYTES)) {
            plan.writeTo(w.data());
            w.seal();
        }
        return plan.size();
    }

    static Plan plan(Schema schema, List<ArrowRecordBatch> batches) {
        List<Planned> plan = new ArrayList<>(batches.size() + 1);
        Planned schemaMessage = plan(0, MessageSerializer.serializeMetadata(schema, IpcOption.DEFAULT), null);
        plan.add(schemaMessage);
        long at = schemaMessage.end();
        for (ArrowRecordBatch batch : batches) {
            Planned p = plan(at, MessageSerializer.serializeMetadata(batch, IpcOption.DEFAULT), batch);
            plan.add(p);
            at = p.end();
        }
        return new Plan(List.copyOf(plan), at);
    }

    private static Planned plan(long offset, ByteBuffer flatbuffer, ArrowRecordBatch batch) {
        long metadataLength = paddedMetadataLength(offset, flatbuffer.remaining());
        if (metadataLength > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("message metadata of " + metadataLength + " bytes is too large");
        }
        return new Planned(flatbuffer, offset, metadataLength, batch);
    }

    /**
     * Writes one message; padding is zeroed (the object's memory may hold an older object's bytes). Arrow buffers
     * are read through their addresses ({@code reinterpret} is restricted: it needs {@code --enable-native-access},
     * which Depot needs anyway).
     */
    @SuppressWarnings("restricted")
    private static void copy(Planned p, MemorySegment out) {
        long at = p.offset();
        out.set(INT_LE, at + CONTINUATION_OFFSET, CONTINUATION_MARKER);
        out.set(INT_LE, at + METADATA_LENGTH_OFFSET, (int) p.metadataLength());
        long flatbufferStart = at + PREFIX_LENGTH;
        int flatbufferLength = p.flatbuffer().remaining();
        MemorySegment.copy(MemorySegment.ofBuffer(p.flatbuffer()), 0, out, flatbufferStart, flatbufferLength);
        out.asSlice(flatbufferStart + flatbufferLength, p.metadataLength() - flatbufferLength).fill((byte) 0);
        if (p.batch() == null) {
            return;
        }
        long body = p.bodyOffset();
        List<ArrowBuf> buffers = p.batch().getBuffers();
        List<ArrowBuffer> layout = p.batch().getBuffersLayout();
        long written = 0;
        for (int i = 0; i < buffers.size(); i++) {
            ArrowBuffer place = layout.get(i);
            out.asSlice(body + written, place.getOffset() - written).fill((byte) 0);
            long length = place.getSize();
            if (length > 0) {
                ArrowBuf source = buffers.get(i);
                MemorySegment from = MemorySegment.ofAddress(source.memoryAddress() + source.readerIndex())
                    .reinterpret(length);
                MemorySegment.copy(from, 0, out, body + place.getOffset(), length);
            }
            written = place.getOffset() + length;
        }
        out.asSlice(body + written, p.batch().computeBodyLength() - written).fill((byte) 0);
    }

    private static void checkNoDictionaries(List<Field> fields, String id) {
        for (Field f : fields) {
            if (f.getDictionary() != null) {
                throw new DepotArrow.UnsupportedStreamException("field '" + f.getName() + "' of " + id
                    + " is dictionary-encoded; Depot stores plain (decoded) vectors: decode it first");
            }
            checkNoDictionaries(f.getChildren(), id);
        }
    }
}
