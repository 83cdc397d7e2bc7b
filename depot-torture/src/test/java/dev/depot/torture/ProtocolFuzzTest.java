package dev.depot.torture;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The short protocol fuzz CI runs; {@code scripts/fuzz --minutes N} runs long ones. */
class ProtocolFuzzTest {
    @Test
    void shouldKeepServingAndLeakNothingUnderMalformedTraffic() throws Exception {
        ProtocolFuzzer.Result r = ProtocolFuzzer.run(10, 1234);
        assertTrue(r.ok(), () -> String.join("\n", r.problems()));
        assertTrue(r.connections() > 20 && r.healthChecks() > 1, r::toString);
    }
}
