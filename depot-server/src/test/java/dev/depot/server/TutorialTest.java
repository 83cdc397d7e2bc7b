package dev.depot.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.depot.client.ArrayMetadata;
import dev.depot.client.DepotClient;
import dev.depot.client.ObjectId;
import dev.depot.client.ObjectView;
import dev.depot.client.ObjectWriter;
import dev.depot.client.testing.TempStore;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The Java example of the README, compiled and checked with assertions; {@link #readmeBlockIsThisExample} checks
 * that the README shows this code (depot-dist's MavenDependencyTest also runs the README's block as it is).
 */
class TutorialTest {
    @Test
    void readmeExample() {
        try (TempStore temp = new TempStore()) {
            Path dir = temp.dir();
            // --- README example starts here ---
            // Open the store in dir, running the daemon in this process if none serves it yet.
            try (DepotClient depot = DepotServer.embedded(dir, 256L << 20)) {
                ObjectId id = ObjectId.of("dataset/part-7");

                // Producer: write straight into shared memory, then seal (immutable, visible to all).
                // ArrayMetadata (dtype and shape) makes the object a NumPy array for Python's get_array.
                byte[] metadata = ArrayMetadata.of(ArrayMetadata.FLOAT64, 1024).encode();
                try (ObjectWriter w = depot.create(id, 1024 * Double.BYTES, metadata)) {
                    MemorySegment data = w.data();
                    for (int i = 0; i < 1024; i++) {
                        data.setAtIndex(ValueLayout.JAVA_DOUBLE, i, i);
                    }
                    w.seal();
                }

                // Consumer (any process on the machine): read in place, no copy; waits up to 1 s for the seal.
                try (ObjectView v = depot.get(id, 1000)) {
                    double sum = 0;
                    for (int i = 0; i < 1024; i++) {
                        sum += v.data().getAtIndex(ValueLayout.JAVA_DOUBLE, i);
                    }
                    assertEquals(523776.0, sum);
                }

                depot.delete(id);
                assertFalse(depot.contains(id));
            }
            // --- README example ends here ---
        }
    }

    @Test
    void readmeBlockIsThisExample() throws Exception {
        String readme = Files.readString(Path.of("..", "README.md"));
        Matcher block = Pattern.compile("```java\n(.*?)```", Pattern.DOTALL).matcher(readme);
        assertTrue(block.find(), "no ```java block in README.md");
        String source = Files.readString(Path.of("src/test/java/dev/depot/server/TutorialTest.java"));
        String example = source.substring(source.indexOf("// --- README example starts here ---"),
            source.indexOf("// --- README example ends here ---"));
        assertEquals(codeLines(block.group(1)), codeLines(example));
    }

    /** The lines of {@code code} without indentation, blank lines, assertions and the example's markers. */
    private static List<String> codeLines(String code) {
        return code.lines().map(String::strip)
            .filter(l -> !l.isEmpty() && !l.startsWith("assert") && !l.startsWith("// --- README"))
            .toList();
    }
}
