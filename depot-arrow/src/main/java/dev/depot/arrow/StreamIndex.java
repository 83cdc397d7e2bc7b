package dev.depot.arrow;

import static dev.depot.arrow.ArrowStreamDescriptor.*;

import dev.depot.arrow.DepotArrow.BadStreamException;
import dev.depot.arrow.DepotArrow.UnsupportedStreamException;
import dev.depot.client.ObjectId;
import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.flatbuf.Buffer;
import org.apache.arrow.flatbuf.FieldNode;
import org.apache.arrow.flatbuf.Message;
import org.apache.arrow.flatbuf.MessageHeader;
import org.apache.arrow.flatbuf.RecordBatch;
import org.apache.arrow.vector.ipc.message.MessageSerializer;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * The messages of an Arrow stream held in an object, found and checked before anything is loaded: every length
 * and offset is untrusted and checked against the object's size (in {@code long}), so a bad object is a
 * {@link BadStreamException}, never a read outside it.
 */
final class StreamIndex {
    /** A record batch message: its parsed flatbuffer and where its body lies in the object. */
    record Batch(Message message, long bodyOffset, long bodyLength, long rows) {
    }

    private final Schema schema;
    private final List<Batch> batches;

    private StreamIndex(Schema schema, List<Batch> batches) {
        this.schema = schema;
        this.batches = batches;
    }

    Schema schema() {
        return schema;
    }

    List<Batch> batches() {
        return batches;
    }

    static StreamIndex of(MemorySegment data, ObjectId id) {
        return of(data, "object " + id);
    }

    /** As {@link #of(MemorySegment, ObjectId)} for a stream that {@code what} names in messages ("object ..."). */
    static StreamIndex of(MemorySegment data, String what) {
        String id = what;
        long size = data.byteSize();
        Schema schema = null;
        List<Batch> batches = new ArrayList<>();
        long at = 0;
        while (true) {
            if (at + PREFIX_LENGTH > size) {
                throw new BadStreamException(where(id, at) + (at == 0 ? "is not an Arrow IPC stream: it has only "
                    + size + " bytes" : "ends without the end-of-stream marker: the stream is truncated"));
            }
            int marker = data.get(INT_LE, at + CONTINUATION_OFFSET);
            if (marker != CONTINUATION_MARKER) {
                throw new BadStreamException(where(id, at) + (at == 0 ? "is not an Arrow IPC stream" : "is corrupt")
                    + ": found 0x" + Integer.toHexString(marker) + " where a message starts with 0xffffffff");
            }
            long metadataLength = Integer.toUnsignedLong(data.get(INT_LE, at + METADATA_LENGTH_OFFSET));
            if (metadataLength == 0) {
                break;
            }
            long metadataStart = at + PREFIX_LENGTH;
            if (metadataStart + metadataLength > size) {
                throw new BadStreamException(where(id, at) + "announces " + metadataLength
                    + " bytes of metadata but the object ends at " + size + ": the stream is truncated");
            }
            Message message = parse(data.asSlice(metadataStart, metadataLength), id, at);
            long bodyOffset = metadataStart + metadataLength;
            long bodyLength = message.bodyLength();
            if (bodyLength < 0 || bodyOffset + bodyLength > size) {
                throw new BadStreamException(where(id, at) + "announces a body of " + bodyLength + " bytes at "
                    + bodyOffset + " but the object ends at " + size + ": the stream is truncated");
            }
            byte type = message.headerType();
            if (schema == null && type != MessageHeader.Schema) {
                throw new BadStreamException(where(id, at) + "is a " + typeName(type)
                    + " message where the stream must begin with its schema");
            }
            switch (type) {
                case MessageHeader.Schema -> {
                    if (schema != null) {
                        throw new BadStreamException(where(id, at) + "is a second schema message");
                    }
                    schema = schemaOf(message, id, at);
                }
                case MessageHeader.RecordBatch -> batches.add(batchOf(message, bodyOffset, bodyLength, id, at));
                case MessageHeader.DictionaryBatch -> throw new UnsupportedStreamException(where(id, at)
                    + "is a dictionary batch; Depot reads streams without dictionary encoding");
                default -> throw new BadStreamException(where(id, at) + "is a " + typeName(type)
                    + " message, which an Arrow IPC stream cannot hold");
            }
            at = bodyOffset + bodyLength;
        }
        if (schema == null) {
            throw new BadStreamException(id + " holds an empty Arrow stream: no schema message");
        }
        return new StreamIndex(schema, List.copyOf(batches));
    }

    private static Message parse(MemorySegment metadata, String id, long at) {
        try {
            Message m = Message.getRootAsMessage(metadata.asByteBuffer().order(ByteOrder.LITTLE_ENDIAN));
            m.headerType();
            m.bodyLength();
            return m;
        } catch (RuntimeException e) {
            throw new BadStreamException(where(id, at) + "has malformed metadata: " + e, e);
        }
    }

    private static Schema schemaOf(Message message, String id, long at) {
        Schema schema;
        try {
            schema = MessageSerializer.deserializeSchema(message);
        } catch (RuntimeException e) {
            throw new BadStreamException(where(id, at) + "has a malformed schema: " + e, e);
        }
        checkNoDictionaries(schema.getFields(), id);
        return schema;
    }

    private static Batch batchOf(Message message, long bodyOffset, long bodyLength, String id, long at) {
        try {
            RecordBatch rb = (RecordBatch) message.header(new RecordBatch());
            if (rb == null) {
                throw new BadStreamException(where(id, at) + "is a record batch message without its header");
            }
            if (rb.compression() != null) {
                throw new UnsupportedStreamException(where(id, at) + "is compressed (codec "
                    + rb.compression().codec() + "); Depot reads uncompressed streams only, so that reads are "
                    + "zero-copy: write it without compression");
            }
            for (int i = 0; i < rb.buffersLength(); i++) {
                Buffer b = rb.buffers(i);
                if (b.offset() < 0 || b.length() < 0 || b.offset() + b.length() > bodyLength) {
                    throw new BadStreamException(where(id, at) + "puts buffer " + i + " at " + b.offset() + ".."
                        + (b.offset() + b.length()) + ", outside its body of " + bodyLength + " bytes");
                }
            }
            // Arrow Java allocates a validity bitmap for a node whose writer left it out: bound node lengths by
            // what the body can hold (a bit per value at least), so that a corrupt length cannot allocate much.
            long maxValues = Math.max(bodyLength, 1) * Byte.SIZE;
            if (rb.length() < 0 || rb.length() > Math.min(maxValues, Integer.MAX_VALUE)) {
                throw new BadStreamException(where(id, at) + "claims " + rb.length() + " rows in a body of "
                    + bodyLength + " bytes");
            }
            for (int i = 0; i < rb.nodesLength(); i++) {
                FieldNode node = rb.nodes(i);
                if (node.length() < 0 || node.length() > maxValues || node.nullCount() < 0
                    || node.nullCount() > node.length()) {
                    throw new BadStreamException(where(id, at) + "has field node " + i + " of " + node.length()
                        + " values with " + node.nullCount() + " nulls, impossible in a body of " + bodyLength
                        + " bytes");
                }
            }
            return new Batch(message, bodyOffset, bodyLength, rb.length());
        } catch (BadStreamException e) {
            throw e;
        } catch (RuntimeException e) {
            throw new BadStreamException(where(id, at) + "has a malformed record batch header: " + e, e);
        }
    }

    private static void checkNoDictionaries(List<Field> fields, String id) {
        for (Field f : fields) {
            if (f.getDictionary() != null) {
                throw new UnsupportedStreamException("field '" + f.getName() + "' of the Arrow stream in "
                    + id + " is dictionary-encoded; Depot reads streams without dictionary encoding");
            }
            checkNoDictionaries(f.getChildren(), id);
        }
    }

    private static String typeName(byte type) {
        return type >= 0 && type < MessageHeader.names.length ? MessageHeader.name(type) : "unknown (" + type + ")";
    }

    private static String where(String id, long at) {
        return id + (at == 0 ? " " : ", message at byte " + at + ", ");
    }
}
