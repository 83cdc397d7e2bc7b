package dev.depot.spark;

import static org.junit.jupiter.api.Assertions.*;

import dev.depot.client.testing.ChildJvm;
import dev.depot.client.testing.TempStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * Two executor JVMs on one node ({@code local-cluster[2,1,1024]}, driven by {@link LocalClusterMain} in a child
 * JVM) read the same Depot object: the same id, and the store's pin table shows both executors' pids at once. The
 * same application then repartitions rows between the executors through a Depot shuffle ({@link DepotShuffle}).
 */
class LocalClusterTest {
    private final SharedSpark shared = SharedSpark.get();

    @Test
    void shouldLetTwoExecutorJvmsReadTheSameStoreObject() throws Exception {
        shared.spark.range(0, 1000, 1, 1).selectExpr("id", "id * 0.5D AS x")
            .write().format("depot").mode("overwrite").save("local-cluster");
        Catalogue.Part part = Catalogue.read(shared.depot, "local-cluster").parts().getFirst();
        long objectsBefore = shared.depot.list().size();
        Path home = Files.createTempDirectory("depot-spark-home");
        List<ProcessHandle> executors = new ArrayList<>();
        try {
            LocalClusterMain.makeSparkHome(home.toFile());
            List<String> options = new ArrayList<>(DepotSourceTest.childOptions());
            options.add("-XX:TieredStopAtLevel=1");
            List<String> lines = new ArrayList<>();
            String shuffled;
            try (ChildJvm driver = ChildJvm.startWith(Map.of("SPARK_HOME", home.toString(),
                    "SPARK_SCALA_VERSION", "2.13"), options, LocalClusterMain.class, shared.dir().toString(),
                "local-cluster")) {
                try {
                    lines.add(driver.awaitLine("task ", 180));
                    lines.add(driver.awaitLine("task ", 10));
                    shuffled = driver.awaitLine("shuffled ", 120);
                    driver.awaitLine("done", 10);
                } finally {
                    ProcessHandle.of(driver.pid()).ifPresent(h -> h.descendants().forEach(executors::add));
                }
                assertEquals(0, driver.waitFor(60), "the local-cluster application stopped cleanly");
            }
            Set<String> pids = new TreeSet<>();
            for (String line : lines) {
                String[] f = line.split(" ");
                assertEquals(part.objectId().toString(), f[2], "every executor read the same object: " + line);
                assertEquals("499500", f[3], "and read it whole: " + line);
                pids.add(f[1]);
            }
            assertEquals(2, pids.size(), "two executor JVMs: " + lines);
            for (String line : lines) {
                Set<String> pinning = Set.of(line.split(" ")[4].split(","));
                assertTrue(pinning.containsAll(pids), "both executors' pids in the pin table at once: " + line);
            }
            for (ProcessHandle p : executors) {
                assertTrue(awaitExit(p), "executor JVM " + p.pid() + " exited with the application");
            }
            assertTrue(executors.stream().map(p -> Long.toString(p.pid())).collect(Collectors.toSet())
                .containsAll(pids), "the executors are the driver's children " + executors + ": " + pids);
            String[] s = shuffled.split(" ");
            assertEquals("10000", s[1], "the Depot shuffle between the executors kept every row: " + shuffled);
            assertEquals("49995000", s[2], shuffled);
            assertEquals("0", s[3], "each key in one partition: " + shuffled);
            for (String reducer : s[4].split(",")) {
                assertTrue(pids.contains(reducer.split(":")[0]), "reducers ran in the executors: " + shuffled);
            }
            assertTrue(shared.depot.list().stream().allMatch(i -> i.pinCount() == 0), "no pin is left");
            assertEquals(objectsBefore, shared.depot.list().size(), "the markers and the shuffle's objects are gone");
        } finally {
            for (ProcessHandle p : executors) {
                p.destroyForcibly();
            }
            TempStore.delete(home);
        }
    }

    private static boolean awaitExit(ProcessHandle p) throws InterruptedException {
        try {
            p.onExit().get(30, java.util.concurrent.TimeUnit.SECONDS);
            return true;
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            return !p.isAlive();
        }
    }
}
