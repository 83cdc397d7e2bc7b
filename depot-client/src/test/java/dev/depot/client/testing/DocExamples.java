package dev.depot.client.testing;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The programs of {@code docs/examples}, which the guides show word for word (python/tests/test_doc_examples.py
 * checks each {@code <!-- example: PATH -->} block against its file), found from a module's directory: run in a
 * child JVM by {@link ChildJvm#startSource}, or compiled against the test's class path (depot-spark's
 * SparkGuideExampleTest).
 */
public final class DocExamples {
    private DocExamples() {
    }

    /** {@code docs/examples/name} of the checkout, from the directory of the module whose tests run. */
    public static Path path(String name) {
        Path file = Path.of("..", "docs", "examples", name).toAbsolutePath().normalize();
        if (!Files.isRegularFile(file)) {
            throw new AssertionError(file + " does not exist: the tests run from a module directory of the checkout");
        }
        return file;
    }
}
