package dev.depot.client.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The Python client's table of shared layouts, {@code python/depot/_layout.py}, read as data: each Python
 * {@code class} is named after a Java class and each of its constants after a static field. The Java tests of
 * each module that owns descriptors compare their classes with it ({@code PythonLayoutTest} in depot-server,
 * {@code ShuffleLayoutTest} in depot-shuffle), so that the file is checked wherever Java is built.
 */
public final class PythonLayout {
    /** Every Python class of the table and the module whose tests check it against Java. */
    public static final Map<String, String> CHECKED_BY = Map.ofEntries(
        Map.entry("StoreHeaderDescriptor", "depot-server"),
        Map.entry("ClientTableDescriptor", "depot-server"),
        Map.entry("IndexEntryDescriptor", "depot-server"),
        Map.entry("HeapBlockDescriptor", "depot-server"),
        Map.entry("HeapAllocator", "depot-server"),
        Map.entry("AllocationLock", "depot-server"),
        Map.entry("EventRings", "depot-server"),
        Map.entry("NotificationDescriptor", "depot-server"),
        Map.entry("EventRecordDescriptor", "depot-server"),
        Map.entry("EntryState", "depot-server"),
        Map.entry("Store", "depot-server"),
        Map.entry("RestoreFailureDescriptor", "depot-server"),
        Map.entry("WriterIdDescriptor", "depot-server"),
        Map.entry("ManifestDescriptor", "depot-shuffle"),
        Map.entry("MapStatusDescriptor", "depot-shuffle"));

    private static final Pattern CLASS = Pattern.compile("^class (\\w+):");
    private static final Pattern CONSTANT = Pattern.compile("^    ([A-Z][A-Z0-9_]*) = (0x[0-9A-Fa-f_]+|[0-9_]+)\\s*(#.*)?$");
    private static final Set<Class<?>> INTEGRAL = Set.of(byte.class, short.class, int.class, long.class);

    /** One constant of the table, with its line for messages. */
    public record Constant(String pythonClass, String name, long value, int line) {
    }

    private PythonLayout() {
    }

    /** {@code python/depot/_layout.py} of the checkout the tests run in (found above the working directory). */
    public static Path file() {
        Path here = Path.of("").toAbsolutePath();
        for (Path p = here; p != null; p = p.getParent()) {
            Path candidate = p.resolve("python/depot/_layout.py");
            if (Files.isRegularFile(candidate)) {
                return candidate;
            }
        }
        throw new AssertionError("python/depot/_layout.py not found above " + here);
    }

    /** Every constant of the table in {@link #file()}. */
    public static List<Constant> constants() {
        try {
            return parse(file());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Every constant of a table: the integer literals assigned at the top level of each class. */
    public static List<Constant> parse(Path file) throws IOException {
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

    /** The constants of one Python class. */
    public static List<Constant> of(List<Constant> constants, String pythonClass) {
        return constants.stream().filter(k -> k.pythonClass().equals(pythonClass)).toList();
    }

    /**
     * The constants of {@code pythonClass} whose value differs from the static field of the same name in
     * {@code java}, or that has no such field; empty when they agree.
     */
    public static List<String> disagreements(List<Constant> constants, String pythonClass, Class<?> java) {
        List<String> wrong = new ArrayList<>();
        for (Constant k : of(constants, pythonClass)) {
            Field f;
            try {
                f = java.getDeclaredField(k.name());
            } catch (NoSuchFieldException e) {
                wrong.add(pythonClass + "." + k.name() + " (line " + k.line() + "): " + java.getSimpleName()
                    + " has no field " + k.name());
                continue;
            }
            Long value = constantValue(f);
            if (value == null) {
                wrong.add(pythonClass + "." + k.name() + " (line " + k.line() + "): " + java.getSimpleName() + "."
                    + k.name() + " is not an integer constant");
            } else if (value != k.value()) {
                wrong.add(pythonClass + "." + k.name() + " (line " + k.line() + "): Python " + k.value() + ", Java "
                    + value);
            }
        }
        return wrong;
    }

    /** The public integer constants of {@code java} that {@code pythonClass} does not mirror. */
    public static List<String> unmirrored(List<Constant> constants, String pythonClass, Class<?> java) {
        List<String> missing = new ArrayList<>();
        for (Field f : java.getDeclaredFields()) {
            if (Modifier.isPublic(f.getModifiers()) && constantValue(f) != null && of(constants, pythonClass).stream()
                .noneMatch(k -> k.name().equals(f.getName()))) {
                missing.add(pythonClass + "." + f.getName());
            }
        }
        return missing;
    }

    private static Long constantValue(Field f) {
        int m = f.getModifiers();
        if (!Modifier.isStatic(m) || !Modifier.isFinal(m) || !INTEGRAL.contains(f.getType())) {
            return null;
        }
        try {
            f.setAccessible(true);
            return ((Number) f.get(null)).longValue();
        } catch (IllegalAccessException e) {
            throw new AssertionError("cannot read " + f, e);
        }
    }
}
