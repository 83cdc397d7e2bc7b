package dev.depot.server.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.depot.core.index.EntryState;
import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The Python client's copy of the shared layout ({@code python/depot/_layout.py}) agrees with the Java
 * descriptors, constant by constant: each Python {@code class} is named after a Java class and each of its
 * names after a static field (or, for {@code EntryState}, an enum constant and its code).
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
    private static final Pattern CLASS = Pattern.compile("^class (\\w+):");
    private static final Pattern CONSTANT = Pattern.compile("^    ([A-Z][A-Z0-9_]*) = (0x[0-9A-Fa-f_]+|[0-9_]+)\\s*(#.*)?$");

    record Constant(String pythonClass, String name, long value, int line) {
    }

    static List<Constant> parse(Path file) throws IOException {
        List<Constant> out = new ArrayList<>();
        String current = null;
        List<String> lines = Files.readAllLines(file);
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            Matcher c = CLASS.matcher(line);
            if (c.find()) {
                current = c.group(1);
                continue;
            }
            if (!line.isEmpty() && !Character.isWhitespace(line.charAt(0))) {
                current = null;
            }
            Matcher k = CONSTANT.matcher(line);
            if (current != null && k.matches()) {
                String literal = k.group(2).replace("_", "");
                long value = literal.startsWith("0x") ? Long.parseUnsignedLong(literal.substring(2), 16)
                    : Long.parseLong(literal);
                out.add(new Constant(current, k.group(1), value, i + 1));
            }
        }
        return out;
    }

    private static Path layoutFile() {
        Path here = Path.of("").toAbsolutePath();
        for (Path p = here; p != null; p = p.getParent()) {
            Path candidate = p.resolve("python/depot/_layout.py");
            if (Files.isRegularFile(candidate)) {
                return candidate;
            }
        }
        throw new AssertionError("python/depot/_layout.py not found above " + here);
    }

    @Test
    void shouldGivePythonTheSameLayoutConstantsAsTheJavaDescriptors() throws Exception {
        List<Constant> constants = parse(layoutFile());
        assertTrue(constants.size() > 40, "parsed only " + constants.size() + " constants from _layout.py");
        List<String> wrong = new ArrayList<>();
        for (Constant k : constants) {
            long java;
            if (k.pythonClass().equals("EntryState")) {
                java = EntryState.valueOf(k.name()).code;
            } else {
                String className = JAVA_CLASSES.get(k.pythonClass());
                if (className == null) {
                    fail("_layout.py line " + k.line() + ": class " + k.pythonClass() + " names no Java class");
                }
                java = javaValue(Class.forName(className), k.name(), k.line());
            }
            if (java != k.value()) {
                wrong.add(k.pythonClass() + "." + k.name() + " (line " + k.line() + "): Python " + k.value()
                    + ", Java " + java);
            }
        }
        assertEquals(List.of(), wrong, "constants of python/depot/_layout.py that disagree with Java");
    }

    @Test
    void shouldMirrorEveryEntryState() throws Exception {
        long mirrored = parse(layoutFile()).stream().filter(k -> k.pythonClass().equals("EntryState")).count();
        assertEquals(EntryState.values().length, mirrored, "every EntryState has its code in _layout.py");
    }

    @Test
    void shouldMirrorEveryConstantOfTheNotificationRegionAndTheCounters() throws Exception {
        List<Constant> constants = parse(layoutFile());
        List<String> missing = new ArrayList<>();
        for (String pythonClass : MIRRORED_IN_FULL) {
            for (Field f : Class.forName(JAVA_CLASSES.get(pythonClass)).getDeclaredFields()) {
                int m = f.getModifiers();
                if (Modifier.isPublic(m) && Modifier.isStatic(m) && Modifier.isFinal(m)
                    && (f.getType() == int.class || f.getType() == long.class) && !has(constants, pythonClass, f.getName())) {
                    missing.add(pythonClass + "." + f.getName());
                }
            }
        }
        MIRRORED_SINCE_1_2.forEach((pythonClass, names) -> names.stream()
            .filter(n -> !has(constants, pythonClass, n)).forEach(n -> missing.add(pythonClass + "." + n)));
        assertEquals(List.of(), missing, "constants python/depot/_layout.py must mirror");
    }

    private static boolean has(List<Constant> constants, String pythonClass, String name) {
        return constants.stream().anyMatch(k -> k.pythonClass().equals(pythonClass) && k.name().equals(name));
    }

    private static long javaValue(Class<?> type, String name, int line) throws IllegalAccessException {
        Field f;
        try {
            f = type.getDeclaredField(name);
        } catch (NoSuchFieldException e) {
            throw new AssertionError("_layout.py line " + line + ": " + type.getSimpleName() + " has no field " + name);
        }
        if (!Modifier.isStatic(f.getModifiers()) || !Modifier.isFinal(f.getModifiers())) {
            throw new AssertionError(type.getSimpleName() + "." + name + " is not a constant");
        }
        f.setAccessible(true);
        return ((Number) f.get(null)).longValue();
    }
}
