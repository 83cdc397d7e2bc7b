package dev.depot.torture;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Python workers of the harnesses: {@code python3} running a script of this module's resources with the Python
 * client of the same checkout ({@code python/}) on {@code PYTHONPATH}. The scripts are copied to a private
 * temporary directory, removed by {@link #close}.
 */
final class Python implements AutoCloseable {
    private final Path clientDir;
    private final Path scripts;

    Python() {
        this.clientDir = clientDirectory();
        try {
            this.scripts = Files.createTempDirectory("depot-torture-py");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A child running resource {@code script} with {@code args}. */
    ChildProcess start(String script, String... args) {
        Path file = scripts.resolve(script);
        try {
            if (!Files.exists(file)) {
                try (InputStream in = Python.class.getResourceAsStream(script)) {
                    if (in == null) {
                        throw new IllegalStateException("resource " + script + " is missing from depot-torture");
                    }
                    Files.copy(in, file);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        List<String> cmd = new ArrayList<>(List.of("python3", "-u", file.toString()));
        cmd.addAll(List.of(args));
        return new ChildProcess(cmd, Map.of("PYTHONPATH", clientDir.toString()));
    }

    /** The checkout's {@code python/} directory: {@code DEPOT_PYTHONPATH}, or found above this code's location. */
    static Path clientDirectory() {
        String env = System.getenv("DEPOT_PYTHONPATH");
        if (env != null && Files.isRegularFile(Path.of(env, "depot", "__init__.py"))) {
            return Path.of(env);
        }
        try {
            Path p = Path.of(Python.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            for (; p != null; p = p.getParent()) {
                if (Files.isRegularFile(p.resolve("python").resolve("depot").resolve("__init__.py"))) {
                    return p.resolve("python");
                }
            }
        } catch (java.net.URISyntaxException | SecurityException e) {
            // fall through to the message
        }
        throw new IllegalStateException("the Python workers need the Python client: run from a Depot checkout or set"
            + " DEPOT_PYTHONPATH to its python/ directory");
    }

    @Override
    public void close() {
        try (var s = Files.list(scripts)) {
            for (Path p : s.toList()) {
                Files.deleteIfExists(p);
            }
            Files.deleteIfExists(scripts);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
