package dev.depot.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.depot.client.DepotClient;
import dev.depot.client.ObjectId;
import dev.depot.client.ObjectView;
import dev.depot.client.ObjectWriter;
import dev.depot.client.testing.TempStore;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The Java example of the README, compiled and checked. Keep the two in step. */
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
                try (ObjectWriter w = depot.create(id, 1024 * Double.BYTES, "float64[1024]".getBytes())) {
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
}
