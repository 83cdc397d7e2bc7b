package dev.depot.shuffle;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.depot.client.testing.ChildJvm;
import dev.depot.client.testing.DocExamples;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** docs/SHUFFLE.md's Java example (docs/examples/ShuffleSlices.java), run as a user runs it, in a JVM of its own. */
class ShuffleGuideExampleTest {
    @Test
    void shouldSendEachValueToItsPartitionAndDeleteTheShuffleOnClose() throws Exception {
        try (ShuffleStore store = new ShuffleStore(16 << 20);
             ChildJvm example = ChildJvm.startSource(Map.of("DEPOT_DIR", store.dir().toString()),
                 DocExamples.path("ShuffleSlices.java"))) {
            assertEquals("partition 0 sum 7.75", example.awaitLine("partition 0", 120));
            assertEquals("partition 1 sum 16.5", example.awaitLine("partition 1", 60));
            assertEquals(0, example.waitFor(60));
            assertEquals(0, store.objects(), "closing the shuffle deleted its objects");
        }
    }
}
