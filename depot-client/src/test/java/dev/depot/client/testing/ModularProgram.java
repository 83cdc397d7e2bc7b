package dev.depot.client.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * A program module built and run as an application on the module path: its sources are written under a work
 * directory, compiled with the JDK's {@code javac} against the jars (or class directories) of the classes given
 * for the module path, and run with the JDK's {@code java}. Every process it starts is reaped.
 */
public final class ModularProgram {
    /** How long {@code javac} or the program may take. */
    private static final long TIMEOUT_SECONDS = 60;

    private final Path work;
    private final Path src;
    private final String modulePath;

    /** A program under {@code work} whose module path holds the jars or directories of {@code onModulePath}. */
    public ModularProgram(Path work, Class<?>... onModulePath) {
        this.work = work;
        this.src = work.resolve("src");
        this.modulePath = Stream.of(onModulePath).map(ModularProgram::location).distinct()
            .collect(Collectors.joining(File.pathSeparator));
    }

    /** Writes the source file {@code relative} to the source root ({@code module-info.java} included). */
    public ModularProgram source(String relative, String text) throws IOException {
        Path file = src.resolve(relative);
        Files.createDirectories(file.getParent());
        Files.writeString(file, text);
        return this;
    }

    /**
     * Compiles the sources named (relative to the source root) into the directory {@code out} of the work
     * directory; returns javac's diagnostics, empty when it compiled.
     */
    public String compile(String out, String... sources) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(tool("javac"), "--module-path", modulePath, "-d",
            work.resolve(out).toString()));
        for (String s : sources) {
            cmd.add(src.resolve(s).toString());
        }
        Output o = run(cmd);
        return o.status() == 0 ? "" : (o.text().isEmpty() ? "javac failed with status " + o.status() : o.text());
    }

    /**
     * Runs {@code module/mainClass} from the classes compiled into {@code out}, with native access for Depot's
     * core module; checks that it exits with 0 and returns what it printed (stdout and stderr).
     */
    public String run(String out, String moduleAndMainClass, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(tool("java"), "--enable-native-access=dev.depot.core", "-Xmx64m",
            "--module-path", modulePath + File.pathSeparator + work.resolve(out), "-m", moduleAndMainClass));
        cmd.addAll(List.of(args));
        Output o = run(cmd);
        assertEquals(0, o.status(), o.text());
        return o.text();
    }

    private record Output(int status, String text) {
    }

    /** Runs {@code cmd} to its end, {@link #TIMEOUT_SECONDS} at most; killed and reaped whatever happens. */
    private static Output run(List<String> cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        try {
            String text = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(p.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS), cmd.getFirst() + " did not finish within "
                + TIMEOUT_SECONDS + " s");
            return new Output(p.exitValue(), text);
        } finally {
            p.destroyForcibly();
            p.waitFor(10, TimeUnit.SECONDS);
        }
    }

    private static String tool(String name) {
        return Path.of(System.getProperty("java.home"), "bin", name).toString();
    }

    /** The jar or class directory that {@code c} was loaded from. */
    private static String location(Class<?> c) {
        try {
            return Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }
}
