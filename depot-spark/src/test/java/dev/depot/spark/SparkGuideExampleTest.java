package dev.depot.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.depot.client.DepotClient;
import dev.depot.client.testing.DocExamples;
import java.io.Reader;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.apache.spark.api.plugin.SparkPlugin;
import org.apache.spark.internal.config.ConfigEntry$;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * docs/SPARK.md's examples: the Java programs of docs/examples compiled (with {@code -Xlint:all -Werror}) against
 * this module's class path and run in the tests' shared {@code local[2]} session, as the module's other tests run
 * (a {@code spark-submit} per example would cost a Spark start each); the {@code spark-defaults.conf} example read
 * as Spark reads it; the guide's Java 25 flags against {@link SparkJavaOptions}.
 */
class SparkGuideExampleTest {
    private final SharedSpark shared = SharedSpark.get();
    private final SparkSession spark = shared.spark;
    private final DepotClient depot = shared.depot;

    @TempDir
    Path classes;

    @Test
    void shouldSaveTheEventsAndReadThemBack() throws Exception {
        try {
            assertEquals(100L, run("SparkDatasets.java", "saveAndCount"));
        } finally {
            Catalogue saved = Catalogue.read(depot, "events");
            if (saved != null) {
                saved.parts().forEach(p -> depot.delete(p.objectId()));
                depot.delete(Catalogue.idOf("events"));
            }
        }
    }

    @Test
    void shouldRepartitionTheEventsSoThatNoUserIsInTwoPartitions() throws Exception {
        long before = depot.list().size();
        assertEquals(0L, run("SparkRepartition.java", "usersPerPartition"));
        assertEquals(before, depot.list().size(), "closing deleted the shuffle's objects");
    }

    @Test
    void shouldNameOnlyRealSettingsWithPlainValuesInTheSparkDefaults() throws Exception {
        Properties conf = new Properties();
        try (Reader r = Files.newBufferedReader(DocExamples.path("spark-defaults.conf"))) {
            conf.load(r); // as Spark reads spark-defaults.conf (and trims each value)
        }
        assertFalse(conf.isEmpty());
        Class.forName("org.apache.spark.internal.config.package$"); // registers Spark's core settings
        Set<String> depotSettings = Set.of(DepotNode.DIR_CONF, DepotNode.DAEMON_CONF, DepotNode.CAPACITY_CONF);
        for (String key : conf.stringPropertyNames()) {
            String value = conf.getProperty(key).trim();
            assertFalse(value.contains("#"), key + "'s value '" + value + "' has an end-of-line comment: Spark would "
                + "take it as part of the value");
            assertTrue(depotSettings.contains(key) || ConfigEntry$.MODULE$.findEntry(key) != null,
                key + " is neither a Depot setting nor one of Spark's");
        }
        for (String plugin : conf.getProperty("spark.plugins").trim().split(",")) {
            assertTrue(SparkPlugin.class.isAssignableFrom(Class.forName(plugin.trim())), plugin + " is not a SparkPlugin");
        }
        assertTrue(Path.of(conf.getProperty(DepotNode.DIR_CONF).trim()).isAbsolute());
        assertNotNull(DepotNode.DaemonMode.valueOf(conf.getProperty(DepotNode.DAEMON_CONF).trim().toUpperCase()));
        assertTrue(DepotNode.parseBytes(conf.getProperty(DepotNode.CAPACITY_CONF)) > 0);
    }

    @Test
    void shouldShowTheJavaOptionsTheBuildDefines() throws Exception {
        String guide = Files.readString(Path.of("..", "docs", "SPARK.md"));
        Matcher block = Pattern.compile("```\n(-XX:.*?)```", Pattern.DOTALL).matcher(guide);
        assertTrue(block.find(), "docs/SPARK.md shows no block of JVM options");
        assertEquals(SparkJavaOptions.list(), Arrays.asList(block.group(1).trim().split("\\s+")));
    }

    /** Compiles docs/examples/{@code file} and calls its static {@code method} with the shared session. */
    private Object run(String file, String method) throws Exception {
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        assertNotNull(javac, "the tests run on a JDK");
        List<String> args = List.of("-Xlint:all", "-Werror", "-proc:none", "-cp", System.getProperty("java.class.path"),
            "-d", classes.toString(), DocExamples.path(file).toString());
        assertEquals(0, javac.run(null, null, null, args.toArray(String[]::new)), file + " compiles without warnings");
        try (URLClassLoader loader = new URLClassLoader(new URL[] {classes.toUri().toURL()}, getClass().getClassLoader())) {
            Method m = loader.loadClass(file.substring(0, file.length() - ".java".length()))
                .getDeclaredMethod(method, SparkSession.class);
            m.setAccessible(true);
            return m.invoke(null, spark);
        }
    }
}
