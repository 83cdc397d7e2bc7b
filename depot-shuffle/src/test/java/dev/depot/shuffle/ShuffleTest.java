package dev.depot.shuffle;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.depot.client.ArrayMetadata;
import dev.depot.client.ObjectView;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class ShuffleTest {
    private final ShuffleStore store = new ShuffleStore(64L << 20);

    @AfterEach
    void closeStore() {
        store.close();
    }

    /** Byte {@code i} of the slice map {@code m} writes for partition {@code p}. */
    static byte content(int m, int p, long i) {
        return (byte) (m * 31 + p * 7 + i);
    }

    static long[] randomSizes(SplittableRandom rnd, int partitions) {
        long[] sizes = new long[partitions];
        for (int p = 0; p < partitions; p++) {
            sizes[p] = rnd.nextInt(4) == 0 ? 0 : rnd.nextInt(1, 50_000);
        }
        return sizes;
    }

    @ParameterizedTest
    @EnumSource(Shuffle.Layout.class)
    void shouldHandEveryReducerEveryMapsSliceWithRandomSizesIncludingEmpty(Shuffle.Layout layout) {
        int maps = 5;
        int partitions = 7;
        SplittableRandom rnd = new SplittableRandom(42);
        long[][] sizes = new long[maps][];
        try (Shuffle s = Shuffle.create(store.client(), "t1", maps, partitions, Shuffle.Options.defaults().withLayout(layout))) {
            for (int m = 0; m < maps; m++) {
                sizes[m] = randomSizes(rnd, partitions);
                try (ShuffleWriter w = s.writer(m, sizes[m])) {
                    for (int p = 0; p < partitions; p++) {
                        MemorySegment seg = w.partition(p);
                        assertEquals(sizes[m][p], seg.byteSize());
                        for (long i = 0; i < seg.byteSize(); i++) {
                            seg.set(ValueLayout.JAVA_BYTE, i, content(m, p, i));
                        }
                    }
                    w.commit();
                }
            }
            for (int p = 0; p < partitions; p++) {
                try (ShuffleReader r = s.reader(p, 1000)) {
                    long total = 0;
                    for (int m = 0; m < maps; m++) {
                        MemorySegment slice = r.slice(m);
                        assertEquals(sizes[m][p], slice.byteSize(), "map " + m + " partition " + p);
                        for (long i = 0; i < slice.byteSize(); i++) {
                            assertEquals(content(m, p, i), slice.get(ValueLayout.JAVA_BYTE, i));
                        }
                        total += sizes[m][p];
                    }
                    assertEquals(total, r.byteSize());
                }
            }
        }
        assertEquals(0, store.objects(), "close deletes every object of the shuffle");
    }

    @Test
    void shouldSplitAMapsObjectAtCommitWhenOnlyItsTotalWasKnownAtOpen() {
        try (Shuffle s = Shuffle.create(store.client(), "t10", 1, 3, Shuffle.Options.defaults().withDtype("<i8"))) {
            try (ShuffleWriter w = s.writer(0, 4 * Long.BYTES)) {
                assertThrows(IllegalStateException.class, () -> w.partition(0), "lengths come at commit");
                MemorySegment.copy(MemorySegment.ofArray(new long[] {5, 6, 7, 8}), 0, w.data(), 0, 32);
                assertThrows(IllegalArgumentException.class, () -> w.commit(new long[] {8, 8, 8}), "must add up");
                w.commit(new long[] {8, 0, 24});
            }
            try (ShuffleReader r = s.reader(2, 1000)) {
                assertArrayEquals(new long[] {6, 7, 8}, r.slice(0).toArray(ValueLayout.JAVA_LONG));
            }
            try (ShuffleReader r = s.reader(1, 1000)) {
                assertEquals(0, r.byteSize());
            }
        }
        try (Shuffle s = Shuffle.create(store.client(), "t11", 1, 1,
            Shuffle.Options.defaults().withLayout(Shuffle.Layout.PER_SLICE))) {
            assertThrows(IllegalStateException.class, () -> s.writer(0, 8L), "only the PER_MAP layout splits later");
        }
        assertEquals(0, store.objects());
    }

    @Test
    void shouldTagSlicesAsArraysOfTheShufflesDtype() {
        try (Shuffle s = Shuffle.create(store.client(), "t2", 1, 2, Shuffle.Options.defaults().withDtype("<f8"))) {
            s.writeMap(0, List.of(MemorySegment.ofArray(new double[] {1.5, 2.5}), MemorySegment.ofArray(new double[0])));
            try (ObjectView v = store.client().get(s.ids().mapData(0), 0)) {
                assertEquals(ArrayMetadata.of("<f8", 2), ArrayMetadata.decode(v.metadata()), "the map's data object");
            }
            try (ShuffleReader r = s.reader(0, 1000)) {
                assertArrayEquals(new double[] {1.5, 2.5}, r.slice(0).toArray(ValueLayout.JAVA_DOUBLE));
            }
            assertThrows(IllegalArgumentException.class, () -> s.writer(0, new long[] {3, 0}));
        }
    }

    @Test
    void shouldTagEachSliceObjectAsAnArrayInThePerSliceLayout() {
        try (Shuffle s = Shuffle.create(store.client(), "t2b", 1, 2,
            Shuffle.Options.defaults().withDtype("<i8").withLayout(Shuffle.Layout.PER_SLICE))) {
            s.writeMap(0, List.of(MemorySegment.ofArray(new long[] {1, 2, 3}), MemorySegment.ofArray(new long[0])));
            try (ObjectView v = store.client().get(s.ids().slice(0, 0), 0)) {
                assertEquals(ArrayMetadata.of("<i8", 3), ArrayMetadata.decode(v.metadata()));
            }
            assertEquals(false, store.client().contains(s.ids().slice(0, 1)), "an empty slice has no object");
        }
    }

    @Test
    void shouldOpenAShuffleByIdWithItsCreatorsParameters() {
        try (Shuffle s = Shuffle.create(store.client(), "t3", 3, 4,
            Shuffle.Options.defaults().withLayout(Shuffle.Layout.PER_MAP).withDtype("<i8"))) {
            Shuffle o = Shuffle.open(store.client(), "t3", 0);
            assertEquals(3, o.maps());
            assertEquals(4, o.partitions());
            assertEquals(Shuffle.Layout.PER_MAP, o.layout());
            assertEquals("<i8", o.dtype());
            o.close();
            assertTrue(store.client().contains(s.ids().manifest()), "closing an opened handle deletes nothing");
        }
    }

    @Test
    void shouldFailReadersNamingTheMapThatFailed() {
        try (Shuffle s = Shuffle.create(store.client(), "t4", 3, 1)) {
            s.writeMap(0, List.of(MemorySegment.ofArray(new byte[10])));
            try (ShuffleWriter w = s.writer(1, new long[] {10})) {
                w.fail("input file was truncated");
            }
            s.writeMap(2, List.of(MemorySegment.ofArray(new byte[10])));
            Shuffle.MapFailedException e = assertThrows(Shuffle.MapFailedException.class, () -> s.reader(0, 5000));
            assertEquals(1, e.map());
            assertTrue(e.getMessage().contains("map 1 ") && e.getMessage().contains("input file was truncated"),
                e.getMessage());
        }
        assertEquals(0, store.objects());
    }

    @Test
    void shouldFailReadersWhenAWriterIsClosedWithoutCommit() {
        try (Shuffle s = Shuffle.create(store.client(), "t5", 1, 2)) {
            try (ShuffleWriter w = s.writer(0, new long[] {100, 0})) {
                w.partition(0).fill((byte) 1);
            }
            var e = assertThrows(Shuffle.MapFailedException.class, () -> s.reader(1, 5000));
            assertTrue(e.getMessage().contains("closed without commit"), e.getMessage());
        }
        assertEquals(0, store.objects());
    }

    @Test
    void shouldTimeOutNamingAMapThatHasNotStarted() {
        try (Shuffle s = Shuffle.create(store.client(), "t6", 2, 1)) {
            s.writeMap(0, List.of(MemorySegment.ofArray(new byte[1])));
            var e = assertThrows(Shuffle.MapTimeoutException.class, () -> s.reader(0, 300));
            assertEquals(1, e.map());
            assertTrue(e.getMessage().contains("has not started"), e.getMessage());
        }
    }

    @Test
    void shouldTimeOutNamingAMapStillRunningInThisProcess() {
        try (Shuffle s = Shuffle.create(store.client(), "t7", 1, 1)) {
            ShuffleWriter w = s.writer(0, new long[] {8});
            var e = assertThrows(Shuffle.MapTimeoutException.class, () -> s.reader(0, 300));
            assertTrue(e.getMessage().contains("still running in pid " + ProcessHandle.current().pid()), e.getMessage());
            w.commit();
        }
        assertEquals(0, store.objects());
    }

    @Test
    void shouldRefuseASecondWriterForTheSameMap() {
        try (Shuffle s = Shuffle.create(store.client(), "t8", 1, 1)) {
            s.writeMap(0, List.of(MemorySegment.ofArray(new byte[1])));
            var e = assertThrows(IllegalStateException.class, () -> s.writer(0, new long[] {1}));
            assertTrue(e.getMessage().contains("already has a writer"), e.getMessage());
        }
    }

    @Test
    void shouldDeleteEverythingWhenClosedWithWritersAndReadersStillOpen() {
        Shuffle s = Shuffle.create(store.client(), "t9", 2, 2);
        s.writeMap(0, List.of(MemorySegment.ofArray(new byte[100]), MemorySegment.ofArray(new byte[50])));
        s.writer(1, new long[] {10, 10});
        s.close();
        assertEquals(0, store.objects());
        assertEquals(0, store.client().stats().usedBytes());
        s.close();
    }
}
