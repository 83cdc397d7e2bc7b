package dev.depot.dist;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Depot as a dependency of another Maven project: the artifacts are laid out in a temporary local repository
 * as {@code mvn install} would (never in ~/.m2), the README's consumer {@code pom.xml}, taken from README.md
 * as it is, is built against it, and its test runs the README's Java example, also taken from README.md.
 * Offline: everything else (plugins, JUnit, the Prometheus jars) is read from ~/.m2 as a
 * read-only file:// mirror, so no network is used and ~/.m2 is not written.
 */
class MavenDependencyTest {
    private static final Pattern JAVA_BLOCK = Pattern.compile("```java\n(.*?)```", Pattern.DOTALL);
    private static final Pattern XML_BLOCK = Pattern.compile("```xml\n(.*?)```", Pattern.DOTALL);
    private static final List<String> INSTALLED = List.of("depot-core", "depot-client", "depot-server");

    @Test
    void projectDependingOnDepotClientShouldBuildAndRunTheReadmeExample(@TempDir Path work) throws Exception {
        Path root = Path.of(System.getProperty("depot.root")).toRealPath();
        String version = System.getProperty("depot.version");
        Path repo = work.resolve("repo");
        install(repo, "depot-parent", version, root.resolve("pom.xml"), null);
        for (String module : INSTALLED) {
            install(repo, module, version, root.resolve(module).resolve("pom.xml"),
                root.resolve(module).resolve("target").resolve(module + "-" + version + ".jar"));
        }
        Path project = work.resolve("example");
        String pom = readmePom(root.resolve("README.md"));
        for (String artifact : List.of("depot-client", "depot-server")) {
            String dependency = "<artifactId>" + artifact + "</artifactId>\n      <version>" + version + "</version>";
            assertTrue(pom.contains(dependency),
                "the README's pom.xml names " + artifact + " " + version + ", the version built:\n" + pom);
        }
        assertTrue(pom.contains("<argLine>--enable-native-access=ALL-UNNAMED</argLine>"), pom);
        writeProject(project, pom, readmeExample(root.resolve("README.md")));
        Path settings = Files.writeString(work.resolve("settings.xml"), """
            <settings>
              <mirrors>
                <mirror>
                  <id>local-seed</id>
                  <mirrorOf>*</mirrorOf>
                  <url>%s</url>
                </mirror>
              </mirrors>
            </settings>
            """.formatted(Path.of(System.getProperty("user.home"), ".m2", "repository").toUri()));
        Path store = Path.of("/dev/shm", "depot-test-" + UUID.randomUUID());
        try {
            Processes.Finished build = Processes.run(project, env -> {
                env.put("JAVA_HOME", System.getProperty("java.home"));
                env.put("DEPOT_DIR", store.toString());
            }, 300, List.of("mvn", "-B", "-q", "-s", settings.toString(), "-Dmaven.repo.local=" + repo, "verify"));
            assertEquals(0, build.status(), build::toString);
            Path report = project.resolve("target/surefire-reports/example.ReadmeExampleTest.txt");
            assertTrue(Files.readString(report).contains("Tests run: 1, Failures: 0, Errors: 0"), Files.readString(report));
        } finally {
            Processes.deleteTree(store);
        }
    }

    /** Lays out {@code pom} (and {@code jar}) as {@code mvn install} would in {@code repo}. */
    private static void install(Path repo, String artifact, String version, Path pom, Path jar) throws Exception {
        Path dir = repo.resolve("dev/depot").resolve(artifact).resolve(version);
        Files.createDirectories(dir);
        Files.copy(pom, dir.resolve(artifact + "-" + version + ".pom"), StandardCopyOption.REPLACE_EXISTING);
        if (jar != null) {
            assertTrue(Files.isRegularFile(jar), "no " + jar + "; run mvn package first");
            Files.copy(jar, dir.resolve(artifact + "-" + version + ".jar"), StandardCopyOption.REPLACE_EXISTING);
        }
    }

    /** The first Java block of the README. */
    private static String readmeExample(Path readme) throws Exception {
        Matcher m = JAVA_BLOCK.matcher(Files.readString(readme));
        assertTrue(m.find(), "no ```java block in " + readme);
        return m.group(1);
    }

    /** The README's consumer pom.xml: the ```xml block that depends on depot-client. */
    private static String readmePom(Path readme) throws Exception {
        Matcher m = XML_BLOCK.matcher(Files.readString(readme));
        while (m.find()) {
            if (m.group(1).contains("<artifactId>depot-client</artifactId>")) {
                return m.group(1);
            }
        }
        throw new AssertionError("no ```xml block with a depot-client dependency in " + readme);
    }

    private static void writeProject(Path project, String pom, String example) throws Exception {
        Path test = project.resolve("src/test/java/example");
        Files.createDirectories(test);
        Files.writeString(project.resolve("pom.xml"), pom);
        Files.writeString(test.resolve("ReadmeExampleTest.java"), """
            package example;

            import dev.depot.client.ArrayMetadata;
            import dev.depot.client.DepotClient;
            import dev.depot.client.ObjectId;
            import dev.depot.client.ObjectView;
            import dev.depot.client.ObjectWriter;
            import dev.depot.server.DepotServer;
            import java.lang.foreign.MemorySegment;
            import java.lang.foreign.ValueLayout;
            import java.nio.file.Path;
            import org.junit.jupiter.api.Test;

            class ReadmeExampleTest {
                @Test
                void readmeExampleRuns() {
                    Path dir = Path.of(System.getenv("DEPOT_DIR"));
            %s
                    if (DepotServer.liveDaemonPid(dir) != 0) {
                        throw new AssertionError("the embedded daemon still runs");
                    }
                }
            }
            """.formatted(example.indent(8)));
    }
}
