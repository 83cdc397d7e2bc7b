package dev.depot.torture;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The short soak CI runs; {@code scripts/soak --minutes 10} runs the long one. */
class SoakTest {
    @Test
    void shouldRunMixedLoadWithoutCorruptionOrGrowth() throws Exception {
        Soak.Result r = Soak.run(2, 12, s -> { });
        assertTrue(r.ok(), () -> String.join("\n", r.problems()));
        assertTrue(r.samples().size() == 12);
        assertTrue(r.samples().stream().allMatch(s -> s.opsPerSecond() > 0), "every worker made progress");
    }
}
