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
     * Off until the Python client's release names its pin (issue 8.2; it fails with a few percent of held views
     * showing other objects' bytes before that): run with {@code -Ddepot.torture.python=true}.
     */
    @Test
    @org.junit.jupiter.api.condition.EnabledIfSystemProperty(named = "depot.torture.python", matches = "true")
    void shouldShowEveryHeldPythonViewOnlyItsOwnPutsBytes() throws Exception {
        Overlap.Result r = Overlap.run(2, 2, 8, 15, 12);
        assertTrue(r.ok(), () -> String.join("\n", r.problems()) + "\n" + r.json());
        assertEquals(2, r.python().workers());
        assertTrue(r.python().heldViews() > 0, r::json);
    }
}
