package dev.depot.arrow;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.depot.client.DepotClient;
import dev.depot.client.testing.ChildJvm;
import dev.depot.client.testing.ClientStores;
import dev.depot.client.testing.DocExamples;
import dev.depot.client.testing.TempStore;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** docs/ARROW.md's Java example (docs/examples/ArrowBatches.java), run as a user runs it, in a JVM of its own. */
class ArrowGuideExampleTest {
    @Test
    void shouldStoreTwoBatchesAndReadThemBackInPlace() throws Exception {
        try (TempStore temp = new TempStore();
             DepotClient depot = ClientStores.over(temp.create(16 << 20));
             ChildJvm example = ChildJvm.startSource(Map.of("DEPOT_DIR", temp.dir().toString()),
                 DocExamples.path("ArrowBatches.java"))) {
            example.awaitLine("stored ", 120);
            assertEquals("sum 7.75", example.awaitLine("sum ", 60));
            assertEquals(0, example.waitFor(60));
            assertEquals(0, depot.list().size(), "the example deleted its object");
        }
    }
}
