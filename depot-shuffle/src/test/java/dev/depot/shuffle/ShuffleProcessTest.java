package dev.depot.shuffle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.depot.client.testing.ChildJvm;
import dev.depot.client.testing.Eventually;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Shuffles whose map and reduce tasks run in other JVMs, and what happens when one of them is killed. */
class ShuffleProcessTest {
    private static final long SEED = 7;
    private final ShuffleStore store = new ShuffleStore(64L << 20);
    private final List<ChildJvm> children = new ArrayList<>();

    @AfterEach
    void reapChildrenAndCloseStore() throws InterruptedException {
        try {
            for (ChildJvm c : children) {
                c.close();
            }
        } finally {
            store.close();
        }
    }

    private ChildJvm start(Class<?> main, Object... args) {
        String[] a = new String[args.length];
        for (int i = 0; i < args.length; i++) {
            a[i] = String.valueOf(args[i]);
        }
        ChildJvm c = ChildJvm.start(main, a);
        children.add(c);
        return c;
    }

    private static long expectedBytes(int maps, int partitions, int p) {
        long n = 0;
        for (int m = 0; m < maps; m++) {
            n += MapTaskMain.sizes(SEED, m, partitions)[p];
        }
        return n;
    }

    @Test
    void shouldShuffleBetweenJvmsWithReducersStartedBeforeTheMaps() throws InterruptedException {
        int maps = 3;
        int partitions = 4;
        boolean someEmpty = false;
        for (int m = 0; m < maps; m++) {
            someEmpty |= java.util.Arrays.stream(MapTaskMain.sizes(SEED, m, partitions)).anyMatch(b -> b == 0);
        }
        assertTrue(someEmpty, "the random slice sizes include an empty slice");
        try (Shuffle s = Shuffle.create(store.client(), "x1", maps, partitions)) {
            ChildJvm r0 = start(ReduceTaskMain.class, store.dir(), "x1", SEED, "exit", 0, 1);
            ChildJvm r1 = start(ReduceTaskMain.class, store.dir(), "x1", SEED, "exit", 2, 3);
            List<ChildJvm> mappers = new ArrayList<>();
            for (int m = 0; m < maps; m++) {
                mappers.add(start(MapTaskMain.class, store.dir(), "x1", m, SEED, "commit"));
            }
            for (ChildJvm m : mappers) {
                m.awaitLine("committed", 60);
                assertEquals(0, m.waitFor(30));
            }
            assertEquals("ok 0 " + expectedBytes(maps, partitions, 0), r0.awaitLine("", 60));
            assertEquals("ok 1 " + expectedBytes(maps, partitions, 1), r0.awaitLine("", 60));
            assertEquals("ok 2 " + expectedBytes(maps, partitions, 2), r1.awaitLine("", 60));
            assertEquals("ok 3 " + expectedBytes(maps, partitions, 3), r1.awaitLine("", 60));
            assertEquals(0, r0.waitFor(30));
            assertEquals(0, r1.waitFor(30));
            try (ShuffleReader r = s.reader(2, 0)) {
                assertEquals(expectedBytes(maps, partitions, 2), r.byteSize(), "the creator reads it too");
            }
        }
        assertEquals(0, store.objects());
    }

    @Test
    void shouldFailReadersNamingAMapWhoseProcessWasKilled() throws InterruptedException {
        try (Shuffle s = Shuffle.create(store.client(), "x2", 2, 2)) {
            ChildJvm good = start(MapTaskMain.class, store.dir(), "x2", 0, SEED, "commit");
            ChildJvm doomed = start(MapTaskMain.class, store.dir(), "x2", 1, SEED, "hang");
            good.awaitLine("committed", 60);
            doomed.awaitLine("opened", 60);
            long pid = doomed.pid();
            doomed.kill();
            var e = assertThrows(Shuffle.MapFailedException.class, () -> s.reader(0, 60_000));
            assertEquals(1, e.map());
            assertTrue(e.getMessage().contains("died (pid " + pid + " exited)"), e.getMessage());
        }
        awaitEmptyStore();
    }

    @Test
    void shouldFreeEverythingWhenAReducerIsKilledHoldingItsSlices() throws InterruptedException {
        try (Shuffle s = Shuffle.create(store.client(), "x3", 2, 3)) {
            for (int m = 0; m < 2; m++) {
                start(MapTaskMain.class, store.dir(), "x3", m, SEED, "commit").awaitLine("committed", 60);
            }
            ChildJvm reducer = start(ReduceTaskMain.class, store.dir(), "x3", SEED, "hold", 0, 1, 2);
            reducer.awaitLine("holding", 60);
            assertTrue(store.client().stats().pinnedBytes() > 0);
            reducer.kill();
        }
        awaitEmptyStore();
    }

    /** A child JVM that creates shuffle {@code id} (owning it) and waits to be killed, having printed "created". */
    private ChildJvm coordinator(String id, int maps, int partitions) throws InterruptedException {
        ChildJvm c = start(CoordinatorMain.class, store.dir(), id, maps, partitions);
        c.awaitLine("created", 60);
        return c;
    }

    private List<String> sweep() {
        return Shuffle.sweepAbandoned(store.client()).stream().map(AbandonedShuffle::id).toList();
    }

    @Test
    void shouldSweepTheShuffleOfACoordinatorThatDiedAndKeepTheLiveOnes() throws InterruptedException {
        ChildJvm doomed = coordinator("dead1", 2, 3);
        for (int m = 0; m < 2; m++) {
            start(MapTaskMain.class, store.dir(), "dead1", m, SEED, "commit").awaitLine("committed", 60);
        }
        try (Shuffle alive = Shuffle.create(store.client(), "alive1", 1, 2)) {
            alive.writeMap(0, List.of(MemorySegment.ofArray(new byte[] {1}), MemorySegment.ofArray(new byte[] {2})));
            int aliveObjects = 4;  // manifest, owner, data, status
            assertEquals(List.of(), sweep(), "the coordinator is alive");
            assertEquals(aliveObjects + 1 + 2 * 3, store.objects(), "and dead1's manifest, owners, data, statuses");
            long pid = doomed.pid();
            doomed.kill();
            List<AbandonedShuffle> found = Shuffle.findAbandoned(store.client());
            assertEquals(List.of("dead1"), found.stream().map(AbandonedShuffle::id).toList());
            assertEquals(pid, found.get(0).creatorPid());
            assertEquals(1 + 2 * 3, found.get(0).objects());
            assertEquals(aliveObjects + 1 + 2 * 3, store.objects(), "finding deletes nothing");
            assertEquals(List.of("dead1"), sweep());
            // A delete that finds its object pinned completes when the pin goes (within the daemon's sweep).
            Eventually.await("only the live coordinator's shuffle left", () -> store.objects() == aliveObjects);
            assertEquals(List.of(), sweep(), "a second sweep finds nothing");
            try (ShuffleReader r = alive.reader(1, 0)) {
                assertEquals(1, r.byteSize());
            }
        }
        awaitEmptyStore();
    }

    @Test
    void shouldKeepADeadCoordinatorsShuffleWhileAMapIsStillBeingWritten() throws InterruptedException {
        ChildJvm doomed = coordinator("dead2", 2, 2);
        start(MapTaskMain.class, store.dir(), "dead2", 0, SEED, "commit").awaitLine("committed", 60);
        ChildJvm writing = start(MapTaskMain.class, store.dir(), "dead2", 1, SEED, "hang");
        writing.awaitLine("opened", 60);
        doomed.kill();
        assertEquals(List.of(), sweep(), "map 1 is still being written");
        assertTrue(store.objects() > 0);
        writing.kill();
        assertEquals(List.of("dead2"), sweep());
        awaitEmptyStore();  // the reaper aborts the dead writer's unsealed object
    }

    @Test
    void shouldSweepAbandonedShufflesWhenANewOneIsCreated() throws InterruptedException {
        coordinator("dead3", 1, 1).kill();
        try (Shuffle s = Shuffle.create(store.client(), "next", 1, 1)) {
            Eventually.await("the dead coordinator's manifest gone, the new one there", () -> store.objects() == 1);
            assertEquals(List.of(), sweep());
        }
        awaitEmptyStore();
    }

    /** The daemon's reaper returns a dead child's pins and unsealed objects within about a second. */
    private void awaitEmptyStore() throws InterruptedException {
        Eventually.await("an empty store after the shuffle closed",
            () -> store.objects() == 0 && store.client().stats().usedBytes() == 0);
    }
}
