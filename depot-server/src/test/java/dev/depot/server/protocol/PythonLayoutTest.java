package dev.depot.server.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.depot.client.testing.PythonLayout;
import dev.depot.client.testing.PythonLayout.Constant;
import dev.depot.core.index.EntryState;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The Python client's copy of the store's layout ({@code python/depot/_layout.py}) agrees with the Java
 * descriptors, constant by constant: each Python {@code class} is named after a Java class and each of its
 * names after a static field (or, for {@code EntryState}, an enum constant and its code). The shuffle's records
 * in the same file are checked by depot-shuffle's {@code ShuffleLayoutTest}.
 */
class PythonLayoutTest {
    private static final Map<String, String> JAVA_CLASSES = Map.ofEntries(
        Map.entry("StoreHeaderDescriptor", "dev.depot.core.store.StoreHeaderDescriptor"),
        Map.entry("ClientTableDescriptor", "dev.depot.core.clients.ClientTableDescriptor"),
        Map.entry("IndexEntryDescriptor", "dev.depot.core.index.IndexEntryDescriptor"),
        Map.entry("HeapBlockDescriptor", "dev.depot.core.heap.HeapBlockDescriptor"),
        Map.entry("HeapAllocator", "dev.depot.core.heap.HeapAllocator"),
        Map.entry("AllocationLock", "dev.depot.core.store.AllocationLock"),
        Map.entry("EventRings", "dev.depot.core.notify.EventRings"),
        Map.entry("NotificationDescriptor", "dev.depot.core.notify.NotificationDescriptor"),
        Map.entry("EventRecordDescriptor", "dev.depot.core.notify.EventRecordDescriptor"),
        Map.entry("Store", "dev.depot.core.store.Store"),
        Map.entry("RestoreFailureDescriptor", "dev.depot.core.store.RestoreFailureDescriptor"),
        Map.entry("WriterIdDescriptor", "dev.depot.client.WriterIdDescriptor"));
    /** Descriptors Python reads in full: every constant of theirs must have its mirror in _layout.py. */
    private static final List<String> MIRRORED_IN_FULL = List.of("NotificationDescriptor", "EventRecordDescriptor",
        "RestoreFailureDescriptor");
    /** Constants of format 1.2 in descriptors Python mirrors in part: the subscriber and the counters need them. */
    private static final Map<String, List<String>> MIRRORED_SINCE_1_2 = Map.of(
        "StoreHeaderDescriptor", List.of("NOTIFICATION_OFFSET_OFFSET", "NOTIFICATIONS_MINOR_VERSION", "MINOR_VERSION_OFFSET"),
        "ClientTableDescriptor", List.of("CREATES_OFFSET", "GETS_OFFSET", "DELETES_OFFSET", "WAITS_OFFSET",
            "WAKEUPS_OFFSET"));

    @Test
    void shouldGivePythonTheSameLayoutConstantsAsTheJavaDescriptors() throws Exception {
        List<Constant> constants = PythonLayout.constants();
        assertTrue(constants.size() > 40, "parsed only " + constants.size() + " constants from _layout.py");
        List<String> wrong = new ArrayList<>();
        for (Constant k : constants) {
            if (!PythonLayout.CHECKED_BY.containsKey(k.pythonClass())) {
                wrong.add("line " + k.line() + ": class " + k.pythonClass() + " names no Java class that a test checks"
                    + " (PythonLayout.CHECKED_BY)");
            } else if (k.pythonClass().equals("EntryState") && EntryState.valueOf(k.name()).code != k.value()) {
                wrong.add("EntryState." + k.name() + " (line " + k.line() + "): Python " + k.value() + ", Java "
                    + EntryState.valueOf(k.name()).code);
            }
        }
        for (Map.Entry<String, String> e : JAVA_CLASSES.entrySet()) {
            wrong.addAll(PythonLayout.disagreements(constants, e.getKey(), Class.forName(e.getValue())));
        }
        assertEquals(List.of(), wrong, "constants of python/depot/_layout.py that disagree with Java");
    }

    @Test
    void shouldCheckEveryClassThatThisModuleOwns() {
        PythonLayout.CHECKED_BY.forEach((pythonClass, module) -> assertEquals(module.equals("depot-server"),
            JAVA_CLASSES.containsKey(pythonClass) || pythonClass.equals("EntryState"), pythonClass));
    }

    @Test
    void shouldMirrorEveryEntryState() {
        assertEquals(EntryState.values().length, PythonLayout.of(PythonLayout.constants(), "EntryState").size(),
            "every EntryState has its code in _layout.py");
    }

    @Test
    void shouldMirrorEveryConstantOfTheNotificationRegionAndTheCounters() throws Exception {
        List<Constant> constants = PythonLayout.constants();
        List<String> missing = new ArrayList<>();
        for (String pythonClass : MIRRORED_IN_FULL) {
            Class<?> java = Class.forName(JAVA_CLASSES.get(pythonClass));
            missing.addAll(PythonLayout.unmirrored(constants, pythonClass, java));
        }
        MIRRORED_SINCE_1_2.forEach((pythonClass, names) -> names.stream()
            .filter(n -> PythonLayout.of(constants, pythonClass).stream().noneMatch(k -> k.name().equals(n)))
            .forEach(n -> missing.add(pythonClass + "." + n)));
        assertEquals(List.of(), missing, "constants python/depot/_layout.py must mirror");
    }
}
