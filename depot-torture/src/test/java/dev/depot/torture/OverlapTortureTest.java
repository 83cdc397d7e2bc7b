package dev.depot.torture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The short overlapping-id runs CI does; {@code scripts/torture --overlap --minutes N} runs long ones. */
class OverlapTortureTest {
    @Test
    void shouldShowEveryHeldJavaViewOnlyItsOwnPutsBytes() throws Exception {
        Overlap.Result r = Overlap.run(3, 0, 8, 12, 11);
        assertTrue(r.ok(), () -> String.join("\n", r.problems()) + "\n" + r.json());
        assertEquals(3, r.java().workers());
        assertTrue(r.java().heldViews() > 0 && r.java().checks() > r.java().gets(), r::json);
    }

    /**
     * A Python release ends exactly the pin it names: a release that ended another view's pin would let that
     * view show other objects' bytes here.
     */
    @Test
    void shouldShowEveryHeldPythonViewOnlyItsOwnPutsBytes() throws Exception {
        Overlap.Result r = Overlap.run(2, 2, 8, 15, 12);
        assertTrue(r.ok(), () -> String.join("\n", r.problems()) + "\n" + r.json());
        assertEquals(2, r.python().workers());
        assertTrue(r.python().heldViews() > 0, r::json);
    }
}
