package dev.depot.server.protocol;

/**
 * Offsets of every field in the body of every control-protocol message, counted from the start of the body
 * (that is, from byte {@link FrameDescriptor#HEADER_LENGTH} of the frame). Little-endian; ids are the 20 raw
 * bytes of an {@code ObjectId}. Byte diagrams: {@code docs/PROTOCOL.md}.
 *
 * <p>A body must be exactly its {@code *_LENGTH} (variable parts included), except HELLO's request, which may
 * carry trailing bytes that a newer minor version defines.
 */
public final class MessageDescriptor {
    public static final int ID_LENGTH = 20;

    // HELLO request
    public static final int HELLO_MAJOR_OFFSET = 0;
    public static final int HELLO_MINOR_OFFSET = HELLO_MAJOR_OFFSET + Short.BYTES;
    public static final int HELLO_PID_OFFSET = HELLO_MINOR_OFFSET + Short.BYTES;
    public static final int HELLO_LENGTH = HELLO_PID_OFFSET + Integer.BYTES;

    // HELLO reply. It names no path: the client maps DIR/store.depot itself (after checking its owner and mode)
    // and compares the file's identity (device, inode) with the daemon's.
    public static final int WELCOME_MAJOR_OFFSET = 0;
    public static final int WELCOME_MINOR_OFFSET = WELCOME_MAJOR_OFFSET + Short.BYTES;
    public static final int WELCOME_DAEMON_PID_OFFSET = WELCOME_MINOR_OFFSET + Short.BYTES;
    public static final int WELCOME_FILE_LENGTH_OFFSET = WELCOME_DAEMON_PID_OFFSET + Integer.BYTES;
    public static final int WELCOME_HEAP_OFFSET_OFFSET = WELCOME_FILE_LENGTH_OFFSET + Long.BYTES;
    public static final int WELCOME_HEAP_LENGTH_OFFSET = WELCOME_HEAP_OFFSET_OFFSET + Long.BYTES;
    public static final int WELCOME_MAX_BODY_OFFSET = WELCOME_HEAP_LENGTH_OFFSET + Long.BYTES;
    public static final int WELCOME_MAX_METADATA_OFFSET = WELCOME_MAX_BODY_OFFSET + Integer.BYTES;
    public static final int WELCOME_MAX_GET_MANY_OFFSET = WELCOME_MAX_METADATA_OFFSET + Integer.BYTES;
    public static final int WELCOME_RESERVED_OFFSET = WELCOME_MAX_GET_MANY_OFFSET + Integer.BYTES;
    /** {@code st_dev} of the store file the daemon serves. */
    public static final int WELCOME_STORE_DEVICE_OFFSET = WELCOME_RESERVED_OFFSET + Integer.BYTES;
    /** {@code st_ino} of the store file the daemon serves. */
    public static final int WELCOME_STORE_INODE_OFFSET = WELCOME_STORE_DEVICE_OFFSET + Long.BYTES;
    public static final int WELCOME_LENGTH = WELCOME_STORE_INODE_OFFSET + Long.BYTES;

    // CREATE request (then the metadata)
    public static final int CREATE_ID_OFFSET = 0;
    public static final int CREATE_FLAGS_OFFSET = CREATE_ID_OFFSET + ID_LENGTH;
    public static final int CREATE_SIZE_OFFSET = CREATE_FLAGS_OFFSET + Integer.BYTES;
    public static final int CREATE_METADATA_LENGTH_OFFSET = CREATE_SIZE_OFFSET + Long.BYTES;
    public static final int CREATE_METADATA_OFFSET = CREATE_METADATA_LENGTH_OFFSET + Integer.BYTES;
    /** CREATE flag: fail with STORE_FULL instead of evicting. */
    public static final int CREATE_FLAG_NO_EVICT = 1;
    /** CREATE flag: never evict the object; spill it when the daemon has a spill directory. */
    public static final int CREATE_FLAG_KEEP = 2;
    /**
     * CREATE flag: an int64 timeout in milliseconds follows the metadata (negative: no limit); the create waits
     * that long for room before failing with STORE_FULL.
     */
    public static final int CREATE_FLAG_TIMEOUT = 4;
    public static final int CREATE_FLAGS_KNOWN = CREATE_FLAG_NO_EVICT | CREATE_FLAG_KEEP | CREATE_FLAG_TIMEOUT;

    // PUT request: CREATE's fields, the metadata, then the data (size bytes). The reply is CREATE's. The whole
    // body stays within MAX_BODY_LENGTH, so PUT is for objects up to about 1 MiB (clients use it for small ones).
    public static final int PUT_ID_OFFSET = CREATE_ID_OFFSET;
    public static final int PUT_FLAGS_OFFSET = CREATE_FLAGS_OFFSET;
    public static final int PUT_SIZE_OFFSET = CREATE_SIZE_OFFSET;
    public static final int PUT_METADATA_LENGTH_OFFSET = CREATE_METADATA_LENGTH_OFFSET;
    public static final int PUT_METADATA_OFFSET = CREATE_METADATA_OFFSET;

    // CREATE reply
    public static final int CREATED_DATA_OFFSET_OFFSET = 0;
    public static final int CREATED_SIZE_OFFSET = CREATED_DATA_OFFSET_OFFSET + Long.BYTES;
    public static final int CREATED_LENGTH = CREATED_SIZE_OFFSET + Long.BYTES;

    // SEAL, ABORT, CONTAINS, DELETE request: the id alone. Replies of SEAL, ABORT, RELEASE are empty.
    public static final int ID_REQUEST_ID_OFFSET = 0;
    public static final int ID_REQUEST_LENGTH = ID_REQUEST_ID_OFFSET + ID_LENGTH;

    // RELEASE request: the id and the pin handle its GET (or GET_MANY) replied with; it ends exactly that pin.
    public static final int RELEASE_ID_OFFSET = 0;
    public static final int RELEASE_RESERVED_OFFSET = RELEASE_ID_OFFSET + ID_LENGTH;
    public static final int RELEASE_HANDLE_OFFSET = RELEASE_RESERVED_OFFSET + Integer.BYTES;
    public static final int RELEASE_LENGTH = RELEASE_HANDLE_OFFSET + Long.BYTES;

    // CONTAINS, DELETE reply
    public static final int BOOLEAN_VALUE_OFFSET = 0;
    public static final int BOOLEAN_LENGTH = BOOLEAN_VALUE_OFFSET + Integer.BYTES;

    // GET request
    public static final int GET_ID_OFFSET = 0;
    public static final int GET_RESERVED_OFFSET = GET_ID_OFFSET + ID_LENGTH;
    public static final int GET_TIMEOUT_OFFSET = GET_RESERVED_OFFSET + Integer.BYTES;
    public static final int GET_LENGTH = GET_TIMEOUT_OFFSET + Long.BYTES;

    // Location of an object: the GET reply, and each entry of the GET_MANY reply
    public static final int LOCATION_DATA_OFFSET_OFFSET = 0;
    public static final int LOCATION_DATA_SIZE_OFFSET = LOCATION_DATA_OFFSET_OFFSET + Long.BYTES;
    public static final int LOCATION_METADATA_OFFSET_OFFSET = LOCATION_DATA_SIZE_OFFSET + Long.BYTES;
    public static final int LOCATION_METADATA_LENGTH_OFFSET = LOCATION_METADATA_OFFSET_OFFSET + Long.BYTES;
    /** 1: found and pinned for the connection; 0: missing (every other field 0). */
    public static final int LOCATION_FOUND_OFFSET = LOCATION_METADATA_LENGTH_OFFSET + Integer.BYTES;
    /** The pin's handle, unique on the connection (never 0 for a found entry): RELEASE names it. */
    public static final int LOCATION_HANDLE_OFFSET = LOCATION_FOUND_OFFSET + Integer.BYTES;
    public static final int LOCATION_LENGTH = LOCATION_HANDLE_OFFSET + Long.BYTES;

    // GET_MANY request (then count ids)
    public static final int GET_MANY_TIMEOUT_OFFSET = 0;
    public static final int GET_MANY_COUNT_OFFSET = GET_MANY_TIMEOUT_OFFSET + Long.BYTES;
    public static final int GET_MANY_RESERVED_OFFSET = GET_MANY_COUNT_OFFSET + Integer.BYTES;
    public static final int GET_MANY_IDS_OFFSET = GET_MANY_RESERVED_OFFSET + Integer.BYTES;
    /** Most ids in one GET_MANY. */
    public static final int GET_MANY_MAX_IDS = 4096;

    // GET_MANY reply (then count locations) and LIST reply (then count entries)
    public static final int COUNT_OFFSET = 0;
    public static final int COUNT_RESERVED_OFFSET = COUNT_OFFSET + Integer.BYTES;
    public static final int COUNT_ENTRIES_OFFSET = COUNT_RESERVED_OFFSET + Integer.BYTES;

    // One LIST entry
    public static final int ENTRY_ID_OFFSET = 0;
    /** 0 CREATING, 1 SEALED, 2 DELETE_PENDING, 3 DELETING (the order of {@code ObjectState}). */
    public static final int ENTRY_STATE_OFFSET = ENTRY_ID_OFFSET + ID_LENGTH;
    public static final int ENTRY_METADATA_LENGTH_OFFSET = ENTRY_STATE_OFFSET + Integer.BYTES;
    public static final int ENTRY_PINS_OFFSET = ENTRY_METADATA_LENGTH_OFFSET + Integer.BYTES;
    public static final int ENTRY_DATA_SIZE_OFFSET = ENTRY_PINS_OFFSET + Integer.BYTES;
    public static final int ENTRY_CREATED_MILLIS_OFFSET = ENTRY_DATA_SIZE_OFFSET + Long.BYTES;
    public static final int ENTRY_ACCESS_MILLIS_OFFSET = ENTRY_CREATED_MILLIS_OFFSET + Long.BYTES;
    public static final int ENTRY_LENGTH = ENTRY_ACCESS_MILLIS_OFFSET + Long.BYTES;
    /** Most LIST entries in one frame; longer listings continue in frames flagged {@code FLAG_MORE}. */
    public static final int LIST_ENTRIES_PER_FRAME = (FrameDescriptor.MAX_BODY_LENGTH - COUNT_ENTRIES_OFFSET) / ENTRY_LENGTH;

    // STAT reply: the figures of StoreStats, in its order, then this connection's own
    public static final int STAT_CAPACITY_OFFSET = 0;
    public static final int STAT_USED_OFFSET = STAT_CAPACITY_OFFSET + Long.BYTES;
    public static final int STAT_FREE_OFFSET = STAT_USED_OFFSET + Long.BYTES;
    public static final int STAT_PINNED_OFFSET = STAT_FREE_OFFSET + Long.BYTES;
    public static final int STAT_OBJECTS_OFFSET = STAT_PINNED_OFFSET + Long.BYTES;
    public static final int STAT_SEALED_OFFSET = STAT_OBJECTS_OFFSET + Long.BYTES;
    public static final int STAT_UNSEALED_BYTES_OFFSET = STAT_SEALED_OFFSET + Long.BYTES;
    public static final int STAT_CLIENTS_OFFSET = STAT_UNSEALED_BYTES_OFFSET + Long.BYTES;
    public static final int STAT_EVICTIONS_OFFSET = STAT_CLIENTS_OFFSET + Long.BYTES;
    public static final int STAT_EVICTED_BYTES_OFFSET = STAT_EVICTIONS_OFFSET + Long.BYTES;
    public static final int STAT_LARGEST_FREE_OFFSET = STAT_EVICTED_BYTES_OFFSET + Long.BYTES;
    /** An IEEE 754 double. */
    public static final int STAT_FRAGMENTATION_OFFSET = STAT_LARGEST_FREE_OFFSET + Long.BYTES;
    public static final int STAT_MAX_OBJECTS_OFFSET = STAT_FRAGMENTATION_OFFSET + Long.BYTES;
    public static final int STAT_DAEMON_PID_OFFSET = STAT_MAX_OBJECTS_OFFSET + Long.BYTES;
    /** Pins this connection holds (views not yet released). */
    public static final int STAT_CONNECTION_PINS_OFFSET = STAT_DAEMON_PID_OFFSET + Long.BYTES;
    /** Objects this connection is creating (not yet sealed or aborted). */
    public static final int STAT_CONNECTION_WRITERS_OFFSET = STAT_CONNECTION_PINS_OFFSET + Long.BYTES;
    public static final int STAT_LENGTH = STAT_CONNECTION_WRITERS_OFFSET + Long.BYTES;

    // EVICT request and reply
    public static final int EVICT_BYTES_OFFSET = 0;
    public static final int EVICT_LENGTH = EVICT_BYTES_OFFSET + Long.BYTES;

    // ERROR reply (then the UTF-8 message)
    public static final int ERROR_CODE_OFFSET = 0;
    public static final int ERROR_MESSAGE_LENGTH_OFFSET = ERROR_CODE_OFFSET + Integer.BYTES;
    public static final int ERROR_MESSAGE_OFFSET = ERROR_MESSAGE_LENGTH_OFFSET + Integer.BYTES;
    /** Longer messages are cut (at a character boundary). */
    public static final int ERROR_MAX_MESSAGE_LENGTH = 4096;

    private MessageDescriptor() {
    }
}
