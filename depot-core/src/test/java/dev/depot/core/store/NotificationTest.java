package dev.depot.core.store;

import static dev.depot.core.notify.EventRecordDescriptor.*;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.depot.core.clients.ClientTableDescriptor;
import dev.depot.core.memory.Atomics;
import dev.depot.core.notify.Event;
import dev.depot.core.notify.NotificationDescriptor;
import dev.depot.core.notify.Subscriber;
import dev.depot.core.testing.DeadProcess;
import dev.depot.core.testing.ShmDir;
import dev.depot.core.testing.TestId;
import dev.depot.errors.DepotException;
import dev.depot.errors.ResourceLimitException;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class NotificationTest {
    private static final long NO_WAIT = 0;
    private static final long A_WHILE = 5_000_000_000L;

    @Test
    void shouldDeliverSealDeleteAndEvictEventsWithIdsAndSizesInOrder() {
        try (var f = new StoreFixture(); Subscriber s = f.store.subscribe()) {
            TestId a = f.newId();
            TestId b = f.newId();
            long ra = f.create(a, 100, new byte[] {1, 2, 3});
            f.store.seal(ra);
            assertTrue(f.delete(a));
            f.put(b, 200);
            f.store.evict(Long.MAX_VALUE);
            assertEvent(s.next(A_WHILE), TYPE_SEALED, a, 100, 3);
            assertEvent(s.next(A_WHILE), TYPE_DELETED, a, 100, 3);
            assertEvent(s.next(A_WHILE), TYPE_SEALED, b, 200, 0);
            assertEvent(s.next(A_WHILE), TYPE_EVICTED, b, 200, 0);
            assertNull(s.next(NO_WAIT));
        }
    }

    @Test
    void shouldDeliverNothingThatHappenedBeforeSubscribing() {
        try (var f = new StoreFixture()) {
            f.put(f.newId(), 10);
            try (Subscriber s = f.store.subscribe()) {
                assertNull(s.next(NO_WAIT));
            }
        }
    }

    @Test
    void shouldReportAFullRingAsMissedEventsWithTheirCount() {
        try (var f = new StoreFixture(); Subscriber s = f.store.subscribe()) {
            int pairs = 300;  // 600 events into a ring of RING_RECORDS, read only afterwards
            for (int i = 0; i < pairs; i++) {
                TestId id = f.newId();
                f.put(id, 8);
                assertTrue(f.delete(id));
            }
            long delivered = 0;
            long missed = 0;
            List<Long> missedReports = new ArrayList<>();
            for (Event e; (e = s.next(NO_WAIT)) != null; ) {
                if (e.type() == Event.TYPE_MISSED) {
                    missed += e.missed();
                    missedReports.add(delivered);
                } else {
                    delivered++;
                }
            }
            assertEquals(NotificationDescriptor.RING_RECORDS, delivered);
            assertEquals(2L * pairs - NotificationDescriptor.RING_RECORDS, missed);
            assertEquals(List.of((long) NotificationDescriptor.RING_RECORDS), missedReports,
                "the dropped events are newer than those the ring held: reported after them");
            TestId next = f.newId();
            f.put(next, 8);
            assertEvent(s.next(A_WHILE), TYPE_SEALED, next, 8, 0);
        }
    }

    @Test
    void shouldSkipARecordWhosePublisherDiedBetweenClaimAndCommitAsOneMissed() throws Exception {
        try (var f = new StoreFixture(); Subscriber s = f.store.subscribe()) {
            f.registerIdentity(5, DeadProcess.identity());
            claimHeadAs(f, s.ring(), 5);
            TestId id = f.newId();
            f.put(id, 16);
            Event first = s.next(A_WHILE);
            assertEquals(Event.TYPE_MISSED, first.type());
            assertEquals(1, first.missed());
            assertEvent(s.next(A_WHILE), TYPE_SEALED, id, 16, 0);
        }
    }

    @Test
    void shouldLetTheReaperAbortTheClaimsOfADeadPublisherBeforeFreeingItsSlot() throws Exception {
        try (var f = new StoreFixture(); Subscriber s = f.store.subscribe()) {
            f.registerIdentity(5, DeadProcess.identity());
            long stampAt = claimHeadAs(f, s.ring(), 5);
            assertEquals(1, f.store.reapDeadClients());
            assertEquals(KIND_ABORTED, kindOf(Atomics.getLongVolatile(region(f), stampAt)));
            assertEquals(1, s.next(A_WHILE).missed());
        }
    }

    @Test
    void shouldFreeTheRingOfADeadSubscriber() throws Exception {
        try (var f = new StoreFixture()) {
            Subscriber live = f.store.subscribe();
            long owner = NotificationDescriptor.ringOffset(live.ring()) + NotificationDescriptor.OWNER_OFFSET;
            Atomics.putLongVolatile(region(f), owner, DeadProcess.identity());  // as if a killed process held it
            f.store.reapDeadClients();
            assertEquals(0, Atomics.getLongVolatile(region(f), owner));
            assertEquals(0, f.store.events().activeMask());
            assertEquals(0, f.store.events().subscriberCount());
        }
    }

    @Test
    void shouldRefuseASubscriberWhenEverySlotIsTakenAndAcceptOneOnceASlotIsFree() {
        try (var f = new StoreFixture()) {
            List<Subscriber> all = new ArrayList<>();
            for (int i = 0; i < NotificationDescriptor.SUBSCRIBERS; i++) {
                all.add(f.store.subscribe());
            }
            var e = assertThrows(ResourceLimitException.class, f.store::subscribe);
            assertTrue(e.getMessage().contains("has all " + NotificationDescriptor.SUBSCRIBERS + " subscriber slots taken"),
                e.getMessage());
            all.removeFirst().close();
            all.add(f.store.subscribe());
            all.forEach(Subscriber::close);
            assertEquals(0, f.store.events().activeMask());
        }
    }

    @Test
    void shouldTakeOverTheRingOfADeadSubscriberWhenEveryRingIsTaken() throws Exception {
        try (var f = new StoreFixture()) {
            List<Subscriber> all = new ArrayList<>();
            for (int i = 0; i < NotificationDescriptor.SUBSCRIBERS; i++) {
                all.add(f.store.subscribe());
            }
            Subscriber victim = all.getFirst();
            long owner = NotificationDescriptor.ringOffset(victim.ring()) + NotificationDescriptor.OWNER_OFFSET;
            Atomics.putLongVolatile(region(f), owner, DeadProcess.identity());  // killed while subscribed
            Subscriber taker = f.store.subscribe();
            assertEquals(victim.ring(), taker.ring());
            TestId id = f.newId();
            f.put(id, 4);
            assertEvent(taker.next(A_WHILE), TYPE_SEALED, id, 4, 0);
            all.removeFirst();  // the victim "died": it never closes
            all.forEach(Subscriber::close);
            taker.close();
            assertEquals(0, f.store.events().activeMask());
        }
    }

    @Test
    void shouldWakeAWaitingNextWhenAnotherThreadClosesTheSubscription() throws Exception {
        try (var f = new StoreFixture()) {
            Subscriber s = f.store.subscribe();
            var failure = new java.util.concurrent.CompletableFuture<Throwable>();
            Thread reader = Thread.ofPlatform().start(() -> {
                try {
                    s.next(-1);
                    failure.complete(null);
                } catch (Throwable t) {
                    failure.complete(t);
                }
            });
            s.close();  // before or during its next(): either way next() fails and the ring is freed
            reader.join();
            assertTrue(failure.get() instanceof IllegalStateException, String.valueOf(failure.get()));
            assertEquals(0, f.store.subscriberCount());
        }
    }

    @Test
    void shouldOpenAFormat11StoreThatHasNoNotificationRegion() throws Exception {
        try (ShmDir dir = new ShmDir()) {
            StoreLayout old = StoreLayout.forCapacity(64 * 1024, 8, 64, 64, false);
            try (StoreFile file = StoreFile.create(dir.path(), old)) {
                file.header().set(java.lang.foreign.ValueLayout.JAVA_INT, StoreHeaderDescriptor.MINOR_VERSION_OFFSET, 1);
            }
            try (Store store = Store.open(dir.path(), ClientTableDescriptor.KIND_JAVA)) {
                assertEquals(0, store.layout().notificationOffset());
                TestId id = TestId.random(new java.util.SplittableRandom(1));
                long r = store.create(id.w0(), id.w1(), id.w2(), 8, new byte[0], true, id.text());
                store.seal(r);  // publishing is a no-op without a region
                var e = assertThrows(DepotException.class, store::subscribe);
                assertTrue(e.getMessage().contains("format 1.1"), e.getMessage());
            }
        }
    }

    @Test
    void shouldCountOperationsInTheClientSlotAndKeepThemAfterTheClientCloses() {
        try (var f = new StoreFixture()) {
            OperationCounts before = f.store.operationCounts();
            try (Store session = f.store.openSession(ClientTableDescriptor.KIND_JAVA)) {
                for (int i = 0; i < 3; i++) {
                    TestId id = TestId.random(new java.util.SplittableRandom(40 + i));
                    long r = session.create(id.w0(), id.w1(), id.w2(), 8, new byte[0], true, id.text());
                    session.seal(r);
                    session.unpin(session.tryPin(id.w0(), id.w1(), id.w2()));
                    assertTrue(session.delete(id.w0(), id.w1(), id.w2()));
                }
            }
            OperationCounts after = f.store.operationCounts();
            assertEquals(before.creates() + 3, after.creates());
            assertEquals(before.gets() + 3, after.gets());
            assertEquals(before.deletes() + 3, after.deletes());
        }
    }

    /** Marks the subscriber's next cell CLAIMED by {@code client}, as a publisher killed mid-append leaves it. */
    private static long claimHeadAs(StoreFixture f, int ring, int client) {
        long base = NotificationDescriptor.ringOffset(ring);
        MemorySegment region = region(f);
        long tail = Atomics.getLongVolatile(region, base + NotificationDescriptor.TAIL_OFFSET);
        long stampAt = base + NotificationDescriptor.recordOffset(tail) + STAMP_OFFSET;
        assertTrue(Atomics.compareAndSetLong(region, stampAt, stamp(NotificationDescriptor.lapOf(tail), KIND_FREE, 0),
            stamp(NotificationDescriptor.lapOf(tail), KIND_CLAIMED, client)));
        Atomics.putLongVolatile(region, base + NotificationDescriptor.TAIL_OFFSET, tail + 1);
        return stampAt;
    }

    private static MemorySegment region(StoreFixture f) {
        return f.store.file.notifications();
    }

    private static void assertEvent(Event e, int type, TestId id, long dataLength, int metadataLength) {
        assertEquals(type, e.type(), "event type");
        byte[] expected = new byte[ID_LENGTH];
        MemorySegment m = MemorySegment.ofArray(expected);
        m.set(java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED.withOrder(java.nio.ByteOrder.LITTLE_ENDIAN), 0, id.w0());
        m.set(java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED.withOrder(java.nio.ByteOrder.LITTLE_ENDIAN), 8, id.w1());
        m.set(java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED.withOrder(java.nio.ByteOrder.LITTLE_ENDIAN), 16, id.w2());
        assertArrayEquals(expected, e.id(), "event id");
        assertEquals(dataLength, e.dataLength());
        assertEquals(metadataLength, e.metadataLength());
        assertEquals(ProcessHandle.current().pid(), e.publisherPid());
    }
}
