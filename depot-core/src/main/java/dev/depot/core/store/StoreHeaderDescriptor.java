package dev.depot.core.store;

/**
 * Layout of the store file's header, the first {@link #HEADER_LENGTH} bytes of {@code store.depot}.
 *
 * <p>The whole file:
 * <pre>
 *   +----------------------------+ 0
 *   | header (4 KiB)             |  this class
 *   +----------------------------+ clientTableOffset
 *   | client table               |  {@link dev.depot.core.clients.ClientTableDescriptor}
 *   +----------------------------+ indexOffset
 *   | object index               |  {@link dev.depot.core.index.IndexEntryDescriptor}
 *   +----------------------------+ notificationOffset (4 KiB aligned; format 1.2 on)
 *   | notification rings         |  {@link dev.depot.core.notify.NotificationDescriptor}
 *   +----------------------------+ heapOffset (4 KiB aligned)
 *   | data heap                  |  {@link dev.depot.core.heap.HeapBlockDescriptor}
 *   +----------------------------+ fileLength
 * </pre>
 *
 * <p>The header. Groups written by different processes start 128 bytes apart (no false sharing):
 * <pre>
 *    0                   1                   2                   3
 *    0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *   +---------------------------------------------------------------+ 0    written once by the creator
 *   |                       Magic "DEPOTSTO"                        |
 *   +-------------------------------+-------------------------------+ 8
 *   |  Major version (release,last) |        Minor version          |
 *   +-------------------------------+-------------------------------+ 16
 *   |        File length            |  Client table offset          |  (64 bits each)
 *   +-------------------------------+-------------------------------+ 32
 *   |  Max clients  | Pins/client   |  Index offset                 |
 *   +-------------------------------+-------------------------------+ 48
 *   |  Index slots  |   (pad)       |  Heap offset                  |
 *   +-------------------------------+-------------------------------+ 64
 *   |        Heap length            |  Create time (epoch ms)       |
 *   +-------------------------------+-------------------------------+ 80
 *   |  Notification offset (1.2 on) |                               |
 *   +-------------------------------+-------------------------------+ 128  written by the daemon
 *   | Daemon identity (pid|start)   |  Heartbeat (epoch ms)         |
 *   | Daemon starts (count)         |                               |
 *   +-------------------------------+-------------------------------+ 256  allocator, under its lock
 *   | Allocator lock (client+1)     |  Used heap bytes              |
 *   | Object count                  |  Eviction count               |
 *   | Evicted bytes                 |  Pending deletes (hint)       |
 *   | Lock waiters  | Space sequence|  Kept bytes (KEEP objects)    |
 *   | Kept objects                  |  (reserved)                   |
 *   +-------------------------------+-------------------------------+ 384  waiters (any process)
 *   | Futex waiters | Space waiters | Evicting space waiters        |
 *   +---------------------------------------------------------------+ 512
 *   | Seal futex words: FUTEX_BUCKETS x int32                        |
 *   +---------------------------------------------------------------+ 1536
 *   | Free-list heads: FREE_BINS x int64 (heap offsets, -1 = empty) |
 *   +---------------------------------------------------------------+ 2048 spill requests (any client)
 *   | Spill request sequence| (pad) |  Spill wanted bytes (max)     |
 *   +-------------------------------+-------------------------------+ 2176 spiller (the daemon)
 *   | Spill state   | Spill error   |  Spilled bytes                |
 *   | Spilled objects               |  Spill count                  |
 *   | Restore count                 |  Spill limit (bytes)          |
 *   | Spill failure count           |  Restore failure count        |
 *   +-------------------------------+-------------------------------+ 2304 spill directory (the daemon)
 *   | Dir length    | Spill directory path, UTF-8, SPILL_DIRECTORY_MAX bytes                |
 *   +---------------------------------------------------------------+ 3328 restore failures (the daemon)
 *   | RESTORE_FAILURES x {@link RestoreFailureDescriptor} records                            |
 *   +---------------------------------------------------------------+ 4096
 * </pre>
 *
 * <p>The space sequence is a futex word bumped (under the lock) by every step that may make room: a free, an
 * unpin or seal while creates wait ({@code space waiters} &gt; 0). Blocking creates sleep on it. The spill request
 * sequence is the daemon's futex word: clients bump it to ask for a spill (after raising {@code spill wanted
 * bytes}) or a restore (after moving an entry to {@code RESTORE_WANTED}). Minor version 1 added the fields
 * from {@code space sequence} on, the KEEP flag and the spill states of index entries. Minor version 2 added the
 * notification region (its offset at {@code notification offset}; a 1.1 file opens with none, and its clients
 * cannot subscribe) and the operation counters of client slots. The spill and restore failure counts and
 * records sit in bytes that earlier files leave zero (no failures), so they need no version of their own.
 */
public final class StoreHeaderDescriptor {
    /** "DEPOTSTO" in little-endian ASCII. */
    public static final long MAGIC = 0x4f54_5354_4f50_4544L;
    public static final int MAJOR_VERSION = 1;
    public static final int MINOR_VERSION = 2;
    /** The first minor version with a notification region. */
    public static final int NOTIFICATIONS_MINOR_VERSION = 2;

    public static final int MAGIC_OFFSET = 0;
    public static final int MAJOR_VERSION_OFFSET = MAGIC_OFFSET + Long.BYTES;
    public static final int MINOR_VERSION_OFFSET = MAJOR_VERSION_OFFSET + Integer.BYTES;
    public static final int FILE_LENGTH_OFFSET = MINOR_VERSION_OFFSET + Integer.BYTES;
    public static final int CLIENT_TABLE_OFFSET_OFFSET = FILE_LENGTH_OFFSET + Long.BYTES;
    public static final int MAX_CLIENTS_OFFSET = CLIENT_TABLE_OFFSET_OFFSET + Long.BYTES;
    public static final int PINS_PER_CLIENT_OFFSET = MAX_CLIENTS_OFFSET + Integer.BYTES;
    public static final int INDEX_OFFSET_OFFSET = PINS_PER_CLIENT_OFFSET + Integer.BYTES;
    public static final int INDEX_SLOTS_OFFSET = INDEX_OFFSET_OFFSET + Long.BYTES;
    public static final int HEAP_OFFSET_OFFSET = INDEX_SLOTS_OFFSET + Long.BYTES;
    public static final int HEAP_LENGTH_OFFSET = HEAP_OFFSET_OFFSET + Long.BYTES;
    public static final int CREATE_TIME_OFFSET = HEAP_LENGTH_OFFSET + Long.BYTES;
    /** Offset of the notification region in the file; 0 in a format 1.1 file (which has none). */
    public static final int NOTIFICATION_OFFSET_OFFSET = CREATE_TIME_OFFSET + Long.BYTES;

    public static final int DAEMON_IDENTITY_OFFSET = 128;
    public static final int HEARTBEAT_OFFSET = DAEMON_IDENTITY_OFFSET + Long.BYTES;
    public static final int DAEMON_STARTS_OFFSET = HEARTBEAT_OFFSET + Long.BYTES;

    public static final int ALLOC_LOCK_OFFSET = 256;
    public static final int USED_BYTES_OFFSET = ALLOC_LOCK_OFFSET + Long.BYTES;
    public static final int OBJECT_COUNT_OFFSET = USED_BYTES_OFFSET + Long.BYTES;
    public static final int EVICTION_COUNT_OFFSET = OBJECT_COUNT_OFFSET + Long.BYTES;
    public static final int EVICTED_BYTES_OFFSET = EVICTION_COUNT_OFFSET + Long.BYTES;
    public static final int PENDING_DELETES_OFFSET = EVICTED_BYTES_OFFSET + Long.BYTES;
    /** Processes sleeping on the allocator lock's futex (its low 32 bits); a hint for the releaser. */
    public static final int LOCK_WAITERS_OFFSET = PENDING_DELETES_OFFSET + Long.BYTES;
    /** Futex word of creates waiting for room; bumped under the lock by frees (and by unpins while waited on). */
    public static final int SPACE_SEQUENCE_OFFSET = LOCK_WAITERS_OFFSET + Integer.BYTES;
    /** Heap bytes of live objects created with the KEEP flag (never evicted); under the lock. */
    public static final int KEPT_BYTES_OFFSET = SPACE_SEQUENCE_OFFSET + Integer.BYTES;
    public static final int KEPT_OBJECTS_OFFSET = KEPT_BYTES_OFFSET + Long.BYTES;

    public static final int FUTEX_WAITERS_OFFSET = 384;
    /** Creates sleeping on the space sequence; freers wake them only when this is positive. */
    public static final int SPACE_WAITERS_OFFSET = FUTEX_WAITERS_OFFSET + Integer.BYTES;
    /**
     * Of those, creates that may evict: only they can use what an unpin or a seal makes evictable, so unpins and
     * seals wake waiters only when this is positive (a waiting NO_EVICT create needs a free).
     */
    public static final int EVICTING_SPACE_WAITERS_OFFSET = SPACE_WAITERS_OFFSET + Integer.BYTES;
    public static final int FUTEX_BUCKETS = 256;
    public static final int FUTEX_WORDS_OFFSET = 512;
    public static final int FREE_BINS = 64;
    public static final int FREE_BINS_OFFSET = FUTEX_WORDS_OFFSET + FUTEX_BUCKETS * Integer.BYTES;


    public static final int SPILL_REQUEST_SEQUENCE_OFFSET = 2048;
    /** The largest block size a waiting create needs; raised with a max-CAS, cleared by the spiller. */
    public static final int SPILL_WANTED_BYTES_OFFSET = SPILL_REQUEST_SEQUENCE_OFFSET + Long.BYTES;

    /** {@link #SPILL_STATE_OFF} or {@link #SPILL_STATE_ON}, written by the daemon. */
    public static final int SPILL_STATE_OFFSET = 2176;
    /** 0, or a {@code SPILL_ERROR_*} code: why the last spill round could not make the room asked for. */
    public static final int SPILL_ERROR_OFFSET = SPILL_STATE_OFFSET + Integer.BYTES;
    public static final int SPILLED_BYTES_OFFSET = SPILL_ERROR_OFFSET + Integer.BYTES;
    public static final int SPILLED_OBJECTS_OFFSET = SPILLED_BYTES_OFFSET + Long.BYTES;
    public static final int SPILL_COUNT_OFFSET = SPILLED_OBJECTS_OFFSET + Long.BYTES;
    public static final int RESTORE_COUNT_OFFSET = SPILL_COUNT_OFFSET + Long.BYTES;
    public static final int SPILL_LIMIT_OFFSET = RESTORE_COUNT_OFFSET + Long.BYTES;
    /** Spill files the daemon could not write (a full or failing disk); each attempt counts once. */
    public static final int SPILL_FAILURE_COUNT_OFFSET = SPILL_LIMIT_OFFSET + Long.BYTES;
    /**
     * Restore failures recorded in the restore failure records; the record written next is this count modulo
     * {@link #RESTORE_FAILURES}.
     */
    public static final int RESTORE_FAILURE_COUNT_OFFSET = SPILL_FAILURE_COUNT_OFFSET + Long.BYTES;

    public static final int SPILL_DIRECTORY_LENGTH_OFFSET = 2304;
    public static final int SPILL_DIRECTORY_OFFSET = SPILL_DIRECTORY_LENGTH_OFFSET + Integer.BYTES;
    public static final int SPILL_DIRECTORY_MAX = 1020;
    /** The ring of the latest restore failures, which gets read to say why a restore they waited for failed. */
    public static final int RESTORE_FAILURES_OFFSET = 3328;
    public static final int RESTORE_FAILURES = 3;

    public static final int SPILL_STATE_OFF = 0;
    public static final int SPILL_STATE_ON = 1;
    /** Every KEEP object is pinned or spilled, and nothing else is evictable. */
    public static final int SPILL_ERROR_NOTHING_TO_SPILL = 1;
    /** The spill directory holds {@code spill limit} bytes already. */
    public static final int SPILL_ERROR_LIMIT = 2;
    /** Writing a spill file failed (the disk is full or failing). */
    public static final int SPILL_ERROR_IO = 3;

    public static final int HEADER_LENGTH = 4096;

    static {
        if (SPILL_DIRECTORY_OFFSET + SPILL_DIRECTORY_MAX > RESTORE_FAILURES_OFFSET
            || RESTORE_FAILURES_OFFSET + RESTORE_FAILURES * RestoreFailureDescriptor.LENGTH > HEADER_LENGTH
            || RESTORE_FAILURE_COUNT_OFFSET + Long.BYTES > SPILL_DIRECTORY_LENGTH_OFFSET
            || KEPT_OBJECTS_OFFSET + 2 * Long.BYTES > FUTEX_WAITERS_OFFSET
            || FREE_BINS_OFFSET + FREE_BINS * Long.BYTES > SPILL_REQUEST_SEQUENCE_OFFSET
            || NOTIFICATION_OFFSET_OFFSET + Long.BYTES > DAEMON_IDENTITY_OFFSET) {
            throw new AssertionError("header fields overlap");
        }
    }

    private StoreHeaderDescriptor() {
    }

    public static long futexWordOffset(int bucket) {
        return FUTEX_WORDS_OFFSET + (long) bucket * Integer.BYTES;
    }

    public static long freeBinOffset(int bin) {
        return FREE_BINS_OFFSET + (long) bin * Long.BYTES;
    }
}
