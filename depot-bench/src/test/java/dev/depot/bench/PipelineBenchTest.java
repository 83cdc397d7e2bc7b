package dev.depot.bench;

import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.depot.client.DepotClient;
import dev.depot.client.ObjectId;
import dev.depot.client.ObjectWriter;
import dev.depot.errors.StoreFullException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class PipelineBenchTest {
    @Test
    void storeShouldHoldQueueDepthArraysPerPairAndAcknowledgementsButNoMoreArrays() {
        Pipeline.Plan plan = new Pipeline.Plan(Units.MIB, 0, 0, 0, 2);
        try (BenchStore store = BenchStore.start(PipelineBench.capacity(plan))) {
            DepotClient client = store.server().client();
            List<ObjectWriter> writers = new ArrayList<>();
            try {
                for (int i = 0; i < PipelineBench.queueDepth(plan) * plan.pairs(); i++) {
                    writers.add(client.create(ObjectId.of("array/" + i), plan.size(), new byte[0],
                        DepotClient.CreateOption.NO_EVICT));
                }
                for (int i = 0; i < 100; i++) {
                    writers.add(client.create(ObjectId.of("ack/" + i), 8, new byte[0], DepotClient.CreateOption.NO_EVICT));
                }
                assertThrows(StoreFullException.class, () -> client.create(ObjectId.of("one more"), plan.size(),
                    new byte[0], Duration.ZERO, DepotClient.CreateOption.NO_EVICT));
            } finally {
                writers.forEach(ObjectWriter::abort);
            }
        }
    }
}
