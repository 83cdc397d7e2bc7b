package dev.depot.server.protocol;

import static dev.depot.server.protocol.FrameDescriptor.*;
import static dev.depot.server.protocol.MessageDescriptor.*;

import dev.depot.client.ObjectInfo;
import dev.depot.client.ObjectView;
import dev.depot.client.StoreStats;
import dev.depot.core.store.Store;
import java.nio.ByteBuffer;
import java.util.List;

/** Encodes reply frames; every field is written at its {@link MessageDescriptor} offset. */
final class Replies {
    private Replies() {
    }

    /** A reply to {@code request} with an empty body (SEAL, ABORT, RELEASE). */
    static ByteBuffer empty(Frame request) {
        return FrameWriter.frame(replyType(request.type()), 0, request.requestId(), 0);
    }

    static ByteBuffer welcome(Frame request, ControlServer.Context context) {
        ByteBuffer reply = FrameWriter.frame(replyType(TYPE_HELLO), 0, request.requestId(), WELCOME_LENGTH);
        ByteBuffer r = FrameWriter.body(reply);
        r.putShort(WELCOME_MAJOR_OFFSET, (short) VERSION_MAJOR);
        r.putShort(WELCOME_MINOR_OFFSET, (short) VERSION_MINOR);
        r.putInt(WELCOME_DAEMON_PID_OFFSET, context.daemonPid());
        r.putLong(WELCOME_FILE_LENGTH_OFFSET, context.fileLength());
        r.putLong(WELCOME_HEAP_OFFSET_OFFSET, context.heapOffset());
        r.putLong(WELCOME_HEAP_LENGTH_OFFSET, context.heapLength());
        r.putInt(WELCOME_MAX_BODY_OFFSET, MAX_BODY_LENGTH);
        r.putInt(WELCOME_MAX_METADATA_OFFSET, Store.MAX_METADATA_LENGTH);
        r.putInt(WELCOME_MAX_GET_MANY_OFFSET, GET_MANY_MAX_IDS);
        r.putLong(WELCOME_STORE_DEVICE_OFFSET, context.storeDevice());
        r.putLong(WELCOME_STORE_INODE_OFFSET, context.storeInode());
        return reply;
    }

    static ByteBuffer created(Frame request, long dataOffset, long size) {
        ByteBuffer reply = FrameWriter.frame(replyType(request.type()), 0, request.requestId(), CREATED_LENGTH);
        ByteBuffer r = FrameWriter.body(reply);
        r.putLong(CREATED_DATA_OFFSET_OFFSET, dataOffset);
        r.putLong(CREATED_SIZE_OFFSET, size);
        return reply;
    }

    /** Writes the location of a viewed object, whose data lies at {@code dataOffset} in the store file. */
    static void putLocation(ByteBuffer r, int at, long dataOffset, ObjectView v, long handle) {
        r.putLong(at + LOCATION_DATA_OFFSET_OFFSET, dataOffset);
        r.putLong(at + LOCATION_DATA_SIZE_OFFSET, v.size());
        // The metadata lies right after the data in the object's heap block (Store.metadata).
        r.putLong(at + LOCATION_METADATA_OFFSET_OFFSET, dataOffset + v.size());
        r.putInt(at + LOCATION_METADATA_LENGTH_OFFSET, v.metadata().length);
        r.putInt(at + LOCATION_FOUND_OFFSET, 1);
        r.putLong(at + LOCATION_HANDLE_OFFSET, handle);
    }

    static ByteBuffer bool(Frame request, boolean value) {
        ByteBuffer reply = FrameWriter.frame(replyType(request.type()), 0, request.requestId(), BOOLEAN_LENGTH);
        FrameWriter.body(reply).putInt(BOOLEAN_VALUE_OFFSET, value ? 1 : 0);
        return reply;
    }

    static ByteBuffer evicted(Frame request, long bytes) {
        ByteBuffer reply = FrameWriter.frame(replyType(TYPE_EVICT), 0, request.requestId(), EVICT_LENGTH);
        FrameWriter.body(reply).putLong(EVICT_BYTES_OFFSET, bytes);
        return reply;
    }

    /** One LIST frame with entries {@code [start, start + n)} of {@code all}; {@code FLAG_MORE} unless the last. */
    static ByteBuffer listFrame(Frame request, List<ObjectInfo> all, int start, int n) {
        boolean last = start + n == all.size();
        ByteBuffer reply = FrameWriter.frame(replyType(TYPE_LIST), last ? 0 : FLAG_MORE, request.requestId(),
            COUNT_ENTRIES_OFFSET + n * ENTRY_LENGTH);
        ByteBuffer r = FrameWriter.body(reply);
        r.putInt(COUNT_OFFSET, n);
        for (int i = 0; i < n; i++) {
            ObjectInfo o = all.get(start + i);
            int at = COUNT_ENTRIES_OFFSET + i * ENTRY_LENGTH;
            r.put(at + ENTRY_ID_OFFSET, o.id().toBytes());
            r.putInt(at + ENTRY_STATE_OFFSET, o.state().ordinal());
            r.putInt(at + ENTRY_METADATA_LENGTH_OFFSET, o.metadataSize());
            r.putInt(at + ENTRY_PINS_OFFSET, o.pinCount());
            r.putLong(at + ENTRY_DATA_SIZE_OFFSET, o.dataSize());
            r.putLong(at + ENTRY_CREATED_MILLIS_OFFSET, o.created().toEpochMilli());
            r.putLong(at + ENTRY_ACCESS_MILLIS_OFFSET, o.lastAccess().toEpochMilli());
        }
        return reply;
    }

    static ByteBuffer stat(Frame request, StoreStats s, int connectionPins, int connectionWriters) {
        ByteBuffer reply = FrameWriter.frame(replyType(TYPE_STAT), 0, request.requestId(), STAT_LENGTH);
        ByteBuffer r = FrameWriter.body(reply);
        r.putLong(STAT_CAPACITY_OFFSET, s.capacityBytes());
        r.putLong(STAT_USED_OFFSET, s.usedBytes());
        r.putLong(STAT_FREE_OFFSET, s.freeBytes());
        r.putLong(STAT_PINNED_OFFSET, s.pinnedBytes());
        r.putLong(STAT_OBJECTS_OFFSET, s.objectCount());
        r.putLong(STAT_SEALED_OFFSET, s.sealedCount());
        r.putLong(STAT_UNSEALED_BYTES_OFFSET, s.unsealedBytes());
        r.putLong(STAT_CLIENTS_OFFSET, s.clientCount());
        r.putLong(STAT_EVICTIONS_OFFSET, s.evictionCount());
        r.putLong(STAT_EVICTED_BYTES_OFFSET, s.evictedBytes());
        r.putLong(STAT_LARGEST_FREE_OFFSET, s.largestFreeBlock());
        r.putDouble(STAT_FRAGMENTATION_OFFSET, s.fragmentation());
        r.putLong(STAT_MAX_OBJECTS_OFFSET, s.maxObjects());
        r.putLong(STAT_DAEMON_PID_OFFSET, s.daemonPid());
        r.putLong(STAT_CONNECTION_PINS_OFFSET, connectionPins);
        r.putLong(STAT_CONNECTION_WRITERS_OFFSET, connectionWriters);
        return reply;
    }
}
