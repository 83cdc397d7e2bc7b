"""The layouts of shared memory and shared records, as far as the Python client reads or writes them.

Every offset and constant here mirrors a field of a Java ``*Descriptor`` class (or the codes of
``EntryState``): each ``class`` below is named after its Java class and each name after its field. Java tests
check every one of them against the Java value, so the two implementations cannot drift apart:
``PythonLayoutTest`` (depot-server's tests) the store's classes, ``ShuffleLayoutTest`` (depot-shuffle's tests)
the shuffle's records. Write only integer literals here: those tests parse this file. Nothing else in the
package writes an offset of a shared record; fixed-size records are packed with ``_records.record_struct``,
which checks its fields against these offsets.

The drawings of each region are in the Java classes; docs/DESIGN.md describes the protocols.
"""


class StoreHeaderDescriptor:
    """The first 4 KiB of ``store.depot`` (``dev.depot.core.store.StoreHeaderDescriptor``)."""

    MAGIC = 0x4F54_5354_4F50_4544
    MAJOR_VERSION = 1
    NOTIFICATIONS_MINOR_VERSION = 2
    MAGIC_OFFSET = 0
    MAJOR_VERSION_OFFSET = 8
    MINOR_VERSION_OFFSET = 12
    FILE_LENGTH_OFFSET = 16
    CLIENT_TABLE_OFFSET_OFFSET = 24
    MAX_CLIENTS_OFFSET = 32
    PINS_PER_CLIENT_OFFSET = 36
    INDEX_OFFSET_OFFSET = 40
    INDEX_SLOTS_OFFSET = 48
    HEAP_OFFSET_OFFSET = 56
    HEAP_LENGTH_OFFSET = 64
    NOTIFICATION_OFFSET_OFFSET = 80
    DAEMON_IDENTITY_OFFSET = 128
    ALLOC_LOCK_OFFSET = 256
    USED_BYTES_OFFSET = 264
    OBJECT_COUNT_OFFSET = 272
    PENDING_DELETES_OFFSET = 296
    LOCK_WAITERS_OFFSET = 304
    SPACE_SEQUENCE_OFFSET = 308
    KEPT_BYTES_OFFSET = 312
    KEPT_OBJECTS_OFFSET = 320
    FUTEX_WAITERS_OFFSET = 384
    SPACE_WAITERS_OFFSET = 388
    EVICTING_SPACE_WAITERS_OFFSET = 392
    FUTEX_BUCKETS = 256
    FUTEX_WORDS_OFFSET = 512
    FREE_BINS = 64
    FREE_BINS_OFFSET = 1536
    SPILL_REQUEST_SEQUENCE_OFFSET = 2048
    SPILL_STATE_OFFSET = 2176
    SPILL_STATE_ON = 1
    SPILLED_BYTES_OFFSET = 2184
    SPILLED_OBJECTS_OFFSET = 2192
    SPILL_COUNT_OFFSET = 2200
    RESTORE_COUNT_OFFSET = 2208
    SPILL_FAILURE_COUNT_OFFSET = 2224
    RESTORE_FAILURE_COUNT_OFFSET = 2232
    SPILL_DIRECTORY_LENGTH_OFFSET = 2304
    SPILL_DIRECTORY_OFFSET = 2308
    SPILL_DIRECTORY_MAX = 1020
    RESTORE_FAILURES_OFFSET = 3328
    RESTORE_FAILURES = 3
    HEADER_LENGTH = 4096


class ClientTableDescriptor:
    """One slot of the client table (``dev.depot.core.clients.ClientTableDescriptor``)."""

    IDENTITY_OFFSET = 0
    PIN_HIGH_WATER_OFFSET = 8
    KIND_OFFSET = 12
    REGISTERED_AT_OFFSET = 16
    CREATES_OFFSET = 64
    GETS_OFFSET = 72
    DELETES_OFFSET = 80
    WAITS_OFFSET = 88
    WAKEUPS_OFFSET = 96
    PIN_RECORDS_OFFSET = 128
    PIN_RECORD_LENGTH = 8
    KIND_PYTHON = 2


class IndexEntryDescriptor:
    """One 64-byte entry of the object index (``dev.depot.core.index.IndexEntryDescriptor``)."""

    STATE_WORD_OFFSET = 0
    ID_OFFSET = 8
    ID_LENGTH = 20
    ID_W1_POSITION = 8
    ID_W2_POSITION = 16
    METADATA_LENGTH_OFFSET = 28
    BLOCK_OFFSET_OFFSET = 32
    DATA_LENGTH_OFFSET = 40
    CREATE_TIME_OFFSET = 48
    LAST_ACCESS_OFFSET = 56  # last use, epoch µs: the seal, then pin releases (at most one per interval)
    ENTRY_LENGTH = 64
    MAX_PROBE = 1024
    USE_RECORD_INTERVAL_MICROS = 100
    # the state word: generation (32) | flags (8) | owner client (16) | state (8)
    STATE_BITS = 8
    OWNER_SHIFT = 8
    OWNER_MASK = 0xFFFF
    FLAGS_SHIFT = 24
    FLAGS_MASK = 0xFF
    GENERATION_SHIFT = 32
    FLAG_KEEP = 1


class HeapBlockDescriptor:
    """A heap block's header; the object's data follows it (``dev.depot.core.heap.HeapBlockDescriptor``)."""

    SIZE_OFFSET = 0
    PREV_SIZE_OFFSET = 8
    NEXT_FREE_OFFSET = 16
    PREV_FREE_OFFSET = 24
    OWNER_SLOT_OFFSET = 32
    HEADER_LENGTH = 64
    ALIGNMENT = 64
    FREE_BIT = 1


class HeapAllocator:
    """The allocator's policy constants (``dev.depot.core.heap.HeapAllocator``): Python allocates as Java does."""

    FIRST_FIT_SCAN_LIMIT = 32
    MIN_SPLIT = 64
    SMALL_LIMIT_SHIFT = 8
    SMALL_LIMIT_MIN = 65536


class AllocationLock:
    """The allocator lock's word values (``dev.depot.core.store.AllocationLock``): 0 free, client + 1 held."""

    NEEDS_REBUILD = 0x1_0001


class EventRings:
    """Publishing to subscriber rings (``dev.depot.core.notify.EventRings``)."""

    MAX_CLAIM_ATTEMPTS = 64


class NotificationDescriptor:
    """The notification region: subscriber rings (``dev.depot.core.notify.NotificationDescriptor``)."""

    SUBSCRIBERS = 16
    RING_RECORDS = 512
    ACTIVE_MASK_OFFSET = 0
    REGION_HEADER_LENGTH = 128
    OWNER_OFFSET = 0
    SUBSCRIBED_AT_OFFSET = 8
    HEAD_OFFSET = 16
    SLEEPING_OFFSET = 24
    TAIL_OFFSET = 128
    MISSED_OFFSET = 136
    WAKE_SEQUENCE_OFFSET = 144
    RECORDS_OFFSET = 256
    RING_LENGTH = 33024
    REGION_LENGTH = 528512


class EventRecordDescriptor:
    """One 64-byte record of a subscriber ring (``dev.depot.core.notify.EventRecordDescriptor``)."""

    STAMP_OFFSET = 0
    TYPE_OFFSET = 8
    METADATA_LENGTH_OFFSET = 12
    DATA_LENGTH_OFFSET = 16
    ID_OFFSET = 24
    ID_LENGTH = 20
    PUBLISHER_PID_OFFSET = 44
    TIME_OFFSET = 48
    RECORD_LENGTH = 64
    # the stamp: claimer client + 1 (16) | lap (46) | kind (2)
    KIND_FREE = 0
    KIND_CLAIMED = 1
    KIND_COMMITTED = 2
    KIND_ABORTED = 3
    KIND_BITS = 2
    CLAIMER_SHIFT = 48
    LAP_MASK = 0x3FFF_FFFF_FFFF
    TYPE_SEALED = 1
    TYPE_DELETED = 2
    TYPE_EVICTED = 3
    TYPE_SPILLED = 4
    TYPE_RESTORED = 5


class EntryState:
    """Codes of an index entry's state (``dev.depot.core.index.EntryState``)."""

    EMPTY = 0
    CREATING = 1
    SEALED = 2
    DELETING = 3
    DELETE_PENDING = 4
    EVICTING = 5
    TOMBSTONE = 6
    SPILLED = 7
    RESTORE_WANTED = 8
    RESTORING = 9


class RestoreFailureDescriptor:
    """One record of the ring of restore failures in the header (``dev.depot.core.store.RestoreFailureDescriptor``),
    written by the daemon's spiller under a seqlock, read by gets that waited for a restore."""

    SEQUENCE_OFFSET = 0
    SLOT_OFFSET = 8
    GENERATION_OFFSET = 12
    KIND_OFFSET = 16
    REASON_LENGTH_OFFSET = 20
    ID_OFFSET = 24
    ID_LENGTH = 20
    REASON_OFFSET = 48
    REASON_MAX = 208
    LENGTH = 256
    KIND_LOST = 1
    KIND_NO_ROOM = 2


class Store:
    """Limits of ``dev.depot.core.store.Store``."""

    MAX_METADATA_LENGTH = 65536
    SPILL_WAIT_NANOS = 60_000_000_000


# The index's home slot of an id (ObjectIndex.home): (w0 ^ rotl(w1, HOME_ROTATION)) * HOME_MULTIPLIER, whose bits
# from HOME_SHIFT up, masked by the slot count. Java writes these inline; the get tests exercise them.
HOME_ROTATION = 29
HOME_MULTIPLIER = 0x9E37_79B9_7F4A_7C15
HOME_SHIFT = 40


class WriterIdDescriptor:
    """The ids of objects a worker writes for others (``dev.depot.client.WriterIdDescriptor``): big-endian magic
    "DdW1", the writer's pid and start ticks (its process identity), and a hash. ``depot.dask._ids`` packs them;
    ``depot doctor`` (Java) finds a dead writer's objects by them."""

    MAGIC_OFFSET = 0
    PID_OFFSET = 4
    START_TICKS_OFFSET = 8
    HASH_OFFSET = 12
    LENGTH = 20


class ManifestDescriptor:
    """A shuffle's manifest object, ``depot-shuffle/<id>/manifest`` (``dev.depot.shuffle.ManifestDescriptor``):
    little-endian; the magic is "DSH1" read as a little-endian u32. ``depot.shuffle`` reads and writes it."""

    MAGIC = 0x3148_5344
    VERSION = 1
    LAYOUT_PER_SLICE = 1
    LAYOUT_PER_MAP = 2
    MAX_DTYPE_LENGTH = 32
    MAGIC_OFFSET = 0
    VERSION_OFFSET = 4
    LAYOUT_OFFSET = 6
    DTYPE_LENGTH_OFFSET = 7
    MAPS_OFFSET = 8
    PARTITIONS_OFFSET = 12
    CREATOR_OFFSET = 16
    DTYPE_OFFSET = 24
    LENGTH = 56


class MapStatusDescriptor:
    """A shuffle map's owner and status records (``dev.depot.shuffle.MapStatusDescriptor``): little-endian; the
    status magic is "DSM1" read as a little-endian u32. The status head is followed by one u64 slice length per
    partition from ``LENGTHS_OFFSET``, then a u32 message length and the message."""

    OWNER_IDENTITY_OFFSET = 0
    OWNER_LENGTH = 8
    MAGIC = 0x314D_5344
    STATE_COMMITTED = 1
    STATE_FAILED = 2
    MAX_MESSAGE_LENGTH = 4096
    MAGIC_OFFSET = 0
    STATE_OFFSET = 4
    WRITER_OFFSET = 8
    MAP_OFFSET = 16
    PARTITIONS_OFFSET = 20
    LENGTHS_OFFSET = 24
