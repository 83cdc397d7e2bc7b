package dev.depot.dist;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.depot.server.DepotServer;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.zip.ZipFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The distribution's {@code spark/depot-spark-VERSION.jar} is all a Spark application adds: a job compiled
 * against Spark alone is run by {@code SparkSubmit} (what {@code spark-submit} runs) with Spark's jars on the class
 * path, as a Spark distribution has them, and that one jar in {@code --jars}; it writes and reads the
 * {@code depot} format through {@code DepotPlugin}, whose spawned daemon runs from that jar too.
 */
class SparkBundleTest {
    /** Depot's own dependencies and the test libraries: on the class path of depot-spark's tests, not in Spark. */
    private static final List<String> NOT_SPARK = List.of("/dev/depot/", "/io/prometheus/", "/org/hdrhistogram/",
        "/org/junit/", "/org/opentest4j/", "/org/apiguardian/");

    private static final String APP = """
        package example;

        import org.apache.spark.sql.Row;
        import org.apache.spark.sql.SparkSession;

        public class App {
            public static void main(String[] args) {
                SparkSession spark = SparkSession.builder().appName("depot-bundle").getOrCreate();
                spark.range(0, 1000, 1, 4).selectExpr("id", "id * 0.5D AS x")
                    .write().format("depot").mode("overwrite").save("bundle");
                Row r = spark.read().format("depot").load("bundle").selectExpr("count(*)", "sum(id)").first();
                System.out.println("read " + r.getLong(0) + " " + r.getLong(1));
                spark.stop();
            }
        }
        """;

    @Test
    void sparkSubmitWithOnlyTheDepotSparkJarShouldWriteAndReadTheDepotFormat(@TempDir Path work) throws Exception {
        String version = System.getProperty("depot.version");
        Path bundle = extractBundle(work, version);
        try (ZipFile jar = new ZipFile(bundle.toFile())) {
            List<String> names = jar.stream().map(e -> e.getName()).toList();
            assertTrue(names.contains("dev/depot/spark/DepotPlugin.class"), "no DepotPlugin in " + bundle);
            assertTrue(names.contains("dev/depot/server/DaemonMain.class"), "no DaemonMain in " + bundle);
            assertFalse(names.stream().anyMatch(n -> n.startsWith("org/apache/spark/")
                || n.startsWith("org/apache/arrow/") || n.startsWith("scala/")), "Spark's and Arrow's classes come with Spark, not in " + bundle);
        }
        String spark = sparkClassPath();
        String bin = System.getProperty("java.home") + "/bin/";

        Path src = Files.createDirectories(work.resolve("src/example"));
        Files.writeString(src.resolve("App.java"), APP);
        Path classes = work.resolve("classes");
        Processes.Finished javac = Processes.run(work, env -> { }, 180, List.of(bin + "javac", "--release", "25",
            "-cp", spark, "-d", classes.toString(), src.resolve("App.java").toString()));
        assertEquals(0, javac.status(), javac::toString);
        Path app = work.resolve("app.jar");
        Processes.Finished jar = Processes.run(work, env -> { }, 60, List.of(bin + "jar", "--create", "--file",
            app.toString(), "-C", classes.toString(), "."));
        assertEquals(0, jar.status(), jar::toString);

        // Spark's flags on Java 25, as the bundle's SparkJavaOptions gives them to launchers
        Processes.Finished options = Processes.run(work, env -> { }, 60, List.of(bin + "java", "-cp", bundle.toString(),
            "dev.depot.spark.SparkJavaOptions"));
        assertEquals(0, options.status(), options::toString);
        assertTrue(options.output().contains("--enable-native-access=ALL-UNNAMED"), options::toString);

        Path root = Path.of("/dev/shm", "depot-test-" + UUID.randomUUID());
        Path store = root.resolve("store");  // the plugin's daemon logs beside the store: in root too
        List<String> cmd = new ArrayList<>(List.of(bin + "java"));
        cmd.addAll(Arrays.asList(options.output().strip().split("\\s+")));
        cmd.addAll(List.of("-Xmx1g", "-cp", spark, "org.apache.spark.deploy.SparkSubmit",
            "--master", "local[2]", "--jars", bundle.toString(),
            "--conf", "spark.ui.enabled=false", "--conf", "spark.driver.host=localhost",
            "--conf", "spark.plugins=dev.depot.spark.DepotPlugin",
            "--conf", "spark.depot.dir=" + store, "--conf", "spark.depot.daemon=spawn",
            "--conf", "spark.depot.capacity=64m",
            "--class", "example.App", app.toString()));
        try {
            Files.createDirectories(root);
            Processes.Finished submit = Processes.run(work, env -> env.remove("SPARK_HOME"), 300, cmd);
            assertEquals(0, submit.status(), submit::toString);
            assertTrue(submit.output().lines().anyMatch("read 1000 499500"::equals), submit::toString);
            assertTrue(DepotServer.liveDaemonPid(store) > 0, "the plugin spawned a daemon from the bundle");
        } finally {
            long daemon = Files.exists(store) ? DepotServer.liveDaemonPid(store) : 0;
            if (daemon > 0) {
                ProcessHandle.of(daemon).ifPresent(p -> {
                    p.destroy();
                    p.onExit().join();
                });
            }
            Processes.deleteTree(root);
        }
    }

    /** spark/depot-spark-VERSION.jar, taken out of the distribution archive. */
    private static Path extractBundle(Path work, String version) throws Exception {
        Path archive = Path.of(System.getProperty("depot.dist.archive"));
        assertTrue(Files.isRegularFile(archive), "no archive " + archive + "; run mvn package first");
        String entry = "depot-" + version + "/spark/depot-spark-" + version + ".jar";
        Processes.Finished tar = Processes.run(work, env -> { }, 60,
            List.of("tar", "-xzf", archive.toString(), "-C", work.toString(), entry));
        assertEquals(0, tar.status(), tar::toString);
        return work.resolve(entry);
    }

    /** Spark's jars and their dependencies (Arrow among them), as a Spark distribution's jars/ holds them: the
     * class path of depot-spark's tests without Depot's own jars and dependencies. */
    private static String sparkClassPath() throws Exception {
        Path listed = Path.of(System.getProperty("depot.root"), "depot-spark", "target", "classpath.txt");
        assertTrue(Files.isRegularFile(listed), "no " + listed + "; run mvn package first");
        String repo = Path.of(System.getProperty("user.home"), ".m2", "repository").toString();
        List<String> jars = Arrays.stream(Files.readString(listed).strip().split(File.pathSeparator))
            .filter(p -> p.startsWith(repo) && NOT_SPARK.stream().noneMatch(p::contains)).toList();
        assertTrue(jars.stream().anyMatch(p -> p.contains("/spark-sql_2.13-")), "no Spark in " + listed);
        assertTrue(jars.stream().anyMatch(p -> p.contains("/arrow-vector-")), "no Arrow in " + listed);
        return String.join(File.pathSeparator, jars);
    }
}
