package dev.depot.core.store;

import static dev.depot.core.store.StoreHeaderDescriptor.*;
import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static java.lang.foreign.MemoryLayout.PathElement.sequenceElement;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.depot.core.testing.DescriptorCoverage;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;
import org.junit.jupiter.api.Test;

/**
 * The header as an FFM struct, declared from the diagram in {@link StoreHeaderDescriptor}'s javadoc. FFM checks
 * that every member is naturally aligned and that members do not overlap; these tests check that the
 * descriptor's constants name the same bytes.
 */
class StoreHeaderDescriptorTest {
    static final StructLayout CREATOR = MemoryLayout.structLayout(
        JAVA_LONG.withName("magic"),
        JAVA_INT.withName("majorVersion"),
        JAVA_INT.withName("minorVersion"),
        JAVA_LONG.withName("fileLength"),
        JAVA_LONG.withName("clientTableOffset"),
        JAVA_INT.withName("maxClients"),
        JAVA_INT.withName("pinsPerClient"),
        JAVA_LONG.withName("indexOffset"),
        JAVA_INT.withName("indexSlots"),
        MemoryLayout.paddingLayout(4),
        JAVA_LONG.withName("heapOffset"),
        JAVA_LONG.withName("heapLength"),
        JAVA_LONG.withName("createTime"),
        JAVA_LONG.withName("notificationOffset")).withName("creator");
    static final StructLayout DAEMON = MemoryLayout.structLayout(
        JAVA_LONG.withName("daemonIdentity"),
        JAVA_LONG.withName("heartbeat"),
        JAVA_LONG.withName("daemonStarts")).withName("daemon");
    static final StructLayout ALLOCATOR = MemoryLayout.structLayout(
        JAVA_LONG.withName("allocLock"),
        JAVA_LONG.withName("usedBytes"),
        JAVA_LONG.withName("objectCount"),
        JAVA_LONG.withName("evictionCount"),
        JAVA_LONG.withName("evictedBytes"),
        JAVA_LONG.withName("pendingDeletes"),
        JAVA_INT.withName("lockWaiters"),
        JAVA_INT.withName("spaceSequence"),
        JAVA_LONG.withName("keptBytes"),
        JAVA_LONG.withName("keptObjects"),
        MemoryLayout.paddingLayout(8)).withName("allocator");
    static final StructLayout WAITERS = MemoryLayout.structLayout(JAVA_INT.withName("futexWaiters"),
        JAVA_INT.withName("spaceWaiters"),
        JAVA_INT.withName("evictingSpaceWaiters")).withName("waiters");
    static final MemoryLayout FUTEX_WORDS = MemoryLayout.sequenceLayout(FUTEX_BUCKETS, JAVA_INT).withName("futexWords");
    static final MemoryLayout FREE_LIST_HEADS = MemoryLayout.sequenceLayout(FREE_BINS, JAVA_LONG).withName("freeBins");
    static final StructLayout SPILL_REQUESTS = MemoryLayout.structLayout(
        JAVA_INT.withName("spillRequestSequence"),
        MemoryLayout.paddingLayout(4),
        JAVA_LONG.withName("spillWantedBytes")).withName("spillRequests");
    static final StructLayout SPILLER = MemoryLayout.structLayout(
        JAVA_INT.withName("spillState"),
        JAVA_INT.withName("spillError"),
        JAVA_LONG.withName("spilledBytes"),
        JAVA_LONG.withName("spilledObjects"),
        JAVA_LONG.withName("spillCount"),
        JAVA_LONG.withName("restoreCount"),
        JAVA_LONG.withName("spillLimit"),
        JAVA_LONG.withName("spillFailureCount"),
        JAVA_LONG.withName("restoreFailureCount")).withName("spiller");
    static final StructLayout SPILL_DIRECTORY = MemoryLayout.structLayout(
        JAVA_INT.withName("spillDirectoryLength"),
        MemoryLayout.sequenceLayout(SPILL_DIRECTORY_MAX, java.lang.foreign.ValueLayout.JAVA_BYTE)
            .withName("spillDirectory")).withName("spillDirectoryGroup");
    static final StructLayout RESTORE_FAILURE = MemoryLayout.structLayout(
        JAVA_LONG.withName("sequence"),
        JAVA_INT.withName("slot"),
        JAVA_INT.withName("generation"),
        JAVA_INT.withName("kind"),
        JAVA_INT.withName("reasonLength"),
        MemoryLayout.sequenceLayout(RestoreFailureDescriptor.ID_LENGTH, java.lang.foreign.ValueLayout.JAVA_BYTE)
            .withName("id"),
        MemoryLayout.paddingLayout(4),
        MemoryLayout.sequenceLayout(RestoreFailureDescriptor.REASON_MAX, java.lang.foreign.ValueLayout.JAVA_BYTE)
            .withName("reason")).withName("restoreFailure");
    static final MemoryLayout RESTORE_FAILURE_RING = MemoryLayout.sequenceLayout(RESTORE_FAILURES, RESTORE_FAILURE)
        .withName("restoreFailures");

    /** Each group starts on its own 128-byte line: groups written by different processes never share one. */
    static final MemoryLayout[] GROUPS = {CREATOR, DAEMON, ALLOCATOR, WAITERS, FUTEX_WORDS, FREE_LIST_HEADS, SPILL_REQUESTS,
        SPILLER, SPILL_DIRECTORY, RESTORE_FAILURE_RING};

    static final StructLayout HEADER = header();

    private static StructLayout header() {
        MemoryLayout[] members = new MemoryLayout[2 * GROUPS.length + 1];
        long at = 0;
        int n = 0;
        for (MemoryLayout g : GROUPS) {
            long start = (at + 127) & ~127L;
            if (start > at) {
                members[n++] = MemoryLayout.paddingLayout(start - at);
            }
            members[n++] = g;
            at = start + g.byteSize();
        }
        if (HEADER_LENGTH > at) {
            members[n++] = MemoryLayout.paddingLayout(HEADER_LENGTH - at);
        }
        return MemoryLayout.structLayout(java.util.Arrays.copyOf(members, n));
    }

    private static long offset(String group, String field) {
        return HEADER.byteOffset(groupElement(group), groupElement(field));
    }

    @Test
    void shouldDeclareEveryOffsetConstantInTheStruct() throws IllegalAccessException {
        DescriptorCoverage.assertEveryOffsetIsAMember(StoreHeaderDescriptor.class, HEADER);
    }

    @Test
    void shouldPlaceCreatorFieldsWhereTheDescriptorSays() {
        assertEquals(MAGIC_OFFSET, offset("creator", "magic"));
        assertEquals(MAJOR_VERSION_OFFSET, offset("creator", "majorVersion"));
        assertEquals(MINOR_VERSION_OFFSET, offset("creator", "minorVersion"));
        assertEquals(FILE_LENGTH_OFFSET, offset("creator", "fileLength"));
        assertEquals(CLIENT_TABLE_OFFSET_OFFSET, offset("creator", "clientTableOffset"));
        assertEquals(MAX_CLIENTS_OFFSET, offset("creator", "maxClients"));
        assertEquals(PINS_PER_CLIENT_OFFSET, offset("creator", "pinsPerClient"));
        assertEquals(INDEX_OFFSET_OFFSET, offset("creator", "indexOffset"));
        assertEquals(INDEX_SLOTS_OFFSET, offset("creator", "indexSlots"));
        assertEquals(HEAP_OFFSET_OFFSET, offset("creator", "heapOffset"));
        assertEquals(HEAP_LENGTH_OFFSET, offset("creator", "heapLength"));
        assertEquals(CREATE_TIME_OFFSET, offset("creator", "createTime"));
    }

    @Test
    void shouldPlaceDaemonAndAllocatorFieldsWhereTheDescriptorSays() {
        assertEquals(DAEMON_IDENTITY_OFFSET, offset("daemon", "daemonIdentity"));
        assertEquals(HEARTBEAT_OFFSET, offset("daemon", "heartbeat"));
        assertEquals(DAEMON_STARTS_OFFSET, offset("daemon", "daemonStarts"));
        assertEquals(ALLOC_LOCK_OFFSET, offset("allocator", "allocLock"));
        assertEquals(USED_BYTES_OFFSET, offset("allocator", "usedBytes"));
        assertEquals(OBJECT_COUNT_OFFSET, offset("allocator", "objectCount"));
        assertEquals(EVICTION_COUNT_OFFSET, offset("allocator", "evictionCount"));
        assertEquals(EVICTED_BYTES_OFFSET, offset("allocator", "evictedBytes"));
        assertEquals(PENDING_DELETES_OFFSET, offset("allocator", "pendingDeletes"));
        assertEquals(FUTEX_WAITERS_OFFSET, offset("waiters", "futexWaiters"));
        assertEquals(SPACE_WAITERS_OFFSET, offset("waiters", "spaceWaiters"));
        assertEquals(SPACE_SEQUENCE_OFFSET, offset("allocator", "spaceSequence"));
        assertEquals(KEPT_BYTES_OFFSET, offset("allocator", "keptBytes"));
    }

    @Test
    void shouldPlaceSpillFieldsWhereTheDescriptorSays() {
        assertEquals(SPILL_REQUEST_SEQUENCE_OFFSET, offset("spillRequests", "spillRequestSequence"));
        assertEquals(SPILL_WANTED_BYTES_OFFSET, offset("spillRequests", "spillWantedBytes"));
        assertEquals(SPILL_STATE_OFFSET, offset("spiller", "spillState"));
        assertEquals(SPILLED_BYTES_OFFSET, offset("spiller", "spilledBytes"));
        assertEquals(SPILL_LIMIT_OFFSET, offset("spiller", "spillLimit"));
        assertEquals(SPILL_DIRECTORY_OFFSET, offset("spillDirectoryGroup", "spillDirectory"));
        assertEquals(SPILL_FAILURE_COUNT_OFFSET, offset("spiller", "spillFailureCount"));
        assertEquals(RESTORE_FAILURE_COUNT_OFFSET, offset("spiller", "restoreFailureCount"));
    }

    @Test
    void shouldPlaceEveryRestoreFailureRecordFieldWhereTheDescriptorSays() throws IllegalAccessException {
        DescriptorCoverage.assertEveryOffsetIsAMember(RestoreFailureDescriptor.class, RESTORE_FAILURE);
        for (int i = 0; i < RESTORE_FAILURES; i++) {
            assertEquals(RestoreFailureDescriptor.recordOffset(i),
                HEADER.byteOffset(groupElement("restoreFailures"), sequenceElement(i)), "record " + i);
        }
        assertEquals(RestoreFailureDescriptor.LENGTH, RESTORE_FAILURE.byteSize());
        assertEquals(RestoreFailureDescriptor.REASON_OFFSET, RESTORE_FAILURE.byteOffset(groupElement("reason")));
    }

    @Test
    void shouldPlaceEveryFutexWordAndFreeListHeadWhereTheDescriptorSays() {
        for (int b = 0; b < FUTEX_BUCKETS; b++) {
            assertEquals(futexWordOffset(b), HEADER.byteOffset(groupElement("futexWords"), sequenceElement(b)), "bucket " + b);
        }
        for (int b = 0; b < FREE_BINS; b++) {
            assertEquals(freeBinOffset(b), HEADER.byteOffset(groupElement("freeBins"), sequenceElement(b)), "bin " + b);
        }
    }

    @Test
    void shouldFitInTheHeaderLength() {
        assertEquals(HEADER_LENGTH, HEADER.byteSize());
        assertEquals(0, HEADER_LENGTH % StoreLayout.PAGE);
    }

    @Test
    void shouldKeepGroupsWrittenByDifferentProcessesOnSeparate128ByteLines() {
        long previousEnd = 0;
        for (MemoryLayout g : GROUPS) {
            long start = HEADER.byteOffset(groupElement(g.name().orElseThrow()));
            assertEquals(0, start % 128, g.name().orElseThrow() + " starts at " + start);
            assertTrue(start >= ((previousEnd + 127) & ~127L), g.name().orElseThrow() + " shares a line with its predecessor");
            previousEnd = start + g.byteSize();
        }
    }

    @Test
    void shouldAlignEveryAtomicFieldNaturally() {
        int[] longs = {FILE_LENGTH_OFFSET, DAEMON_IDENTITY_OFFSET, HEARTBEAT_OFFSET, DAEMON_STARTS_OFFSET,
            ALLOC_LOCK_OFFSET, USED_BYTES_OFFSET, OBJECT_COUNT_OFFSET, EVICTION_COUNT_OFFSET, EVICTED_BYTES_OFFSET,
            PENDING_DELETES_OFFSET, FREE_BINS_OFFSET, KEPT_BYTES_OFFSET, KEPT_OBJECTS_OFFSET, SPILL_WANTED_BYTES_OFFSET,
            SPILLED_BYTES_OFFSET, SPILLED_OBJECTS_OFFSET, SPILL_COUNT_OFFSET, RESTORE_COUNT_OFFSET, SPILL_LIMIT_OFFSET,
            SPILL_FAILURE_COUNT_OFFSET, RESTORE_FAILURE_COUNT_OFFSET, RESTORE_FAILURES_OFFSET};
        for (int o : longs) {
            assertEquals(0, o % Long.BYTES, "long field at " + o);
        }
        int[] ints = {MAJOR_VERSION_OFFSET, FUTEX_WAITERS_OFFSET, FUTEX_WORDS_OFFSET, SPACE_SEQUENCE_OFFSET, SPACE_WAITERS_OFFSET,
            SPILL_REQUEST_SEQUENCE_OFFSET, SPILL_STATE_OFFSET, SPILL_ERROR_OFFSET};
        for (int o : ints) {
            assertEquals(0, o % Integer.BYTES, "int field at " + o);
        }
    }

    @Test
    void shouldSpellDepotstoInTheMagic() {
        byte[] b = new byte[8];
        java.nio.ByteBuffer.wrap(b).order(java.nio.ByteOrder.LITTLE_ENDIAN).putLong(MAGIC);
        assertEquals("DEPOTSTO", new String(b, java.nio.charset.StandardCharsets.US_ASCII));
    }
}
