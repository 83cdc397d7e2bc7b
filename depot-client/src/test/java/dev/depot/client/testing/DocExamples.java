package dev.depot.client.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The programs of {@code docs/examples}, which the guides show word for word (python/tests/test_doc_examples.py
 * checks each {@code <!-- example: PATH -->} block against its file): found from a module's directory, run in a
 * child JVM by {@link ChildJvm#startSource}.
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

    /** The text of the block that {@code doc} (a path from the checkout, {@code docs/X.md}) marks with {@code marker}. */
    public static String block(String doc, String marker) {
        try {
            String text = Files.readString(Path.of("..").resolve(doc));
            Matcher m = Pattern.compile(Pattern.quote(marker) + "\n```\\w*\n(.*?)```", Pattern.DOTALL).matcher(text);
            if (!m.find()) {
                throw new AssertionError(doc + " has no block after '" + marker + "'");
            }
            return m.group(1);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The lines of {@code text}, stripped, blank ones dropped. */
    public static List<String> lines(String text) {
        return text.lines().map(String::strip).filter(l -> !l.isEmpty()).toList();
    }
}
