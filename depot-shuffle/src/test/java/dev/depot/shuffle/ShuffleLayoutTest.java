package dev.depot.shuffle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.depot.client.testing.PythonLayout;
import dev.depot.client.testing.PythonLayout.Constant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The shuffle's records in the Python client's layout table ({@code python/depot/_layout.py}, from which
 * {@code python/depot/shuffle/_records.py} packs them) agree with {@link ManifestDescriptor} and
 * {@link MapStatusDescriptor} constant by constant, and mirror every one of their constants.
 */
class ShuffleLayoutTest {
    private static final Map<String, Class<?>> DESCRIPTORS = Map.of(
        "ManifestDescriptor", ManifestDescriptor.class,
        "MapStatusDescriptor", MapStatusDescriptor.class);

    @Test
    void shouldGivePythonTheSameRecordLayoutsAsTheJavaDescriptors() {
        List<Constant> constants = PythonLayout.constants();
        List<String> wrong = new ArrayList<>();
        DESCRIPTORS.forEach((pythonClass, java) -> {
            assertFalse(PythonLayout.of(constants, pythonClass).isEmpty(), "_layout.py has no class " + pythonClass);
            wrong.addAll(PythonLayout.disagreements(constants, pythonClass, java));
        });
        assertEquals(List.of(), wrong, "constants of python/depot/_layout.py that disagree with Java");
    }

    @Test
    void shouldMirrorEveryConstantOfTheShuffleRecords() {
        List<Constant> constants = PythonLayout.constants();
        List<String> missing = new ArrayList<>();
        DESCRIPTORS.forEach((pythonClass, java) ->
            missing.addAll(PythonLayout.unmirrored(constants, pythonClass, java)));
        assertEquals(List.of(), missing, "constants python/depot/_layout.py must mirror");
    }

    @Test
    void shouldBeTheTestThatChecksTheShuffleClassesOfTheTable() {
        DESCRIPTORS.keySet().forEach(pythonClass -> assertEquals("depot-shuffle",
            PythonLayout.CHECKED_BY.get(pythonClass), pythonClass));
    }
}
