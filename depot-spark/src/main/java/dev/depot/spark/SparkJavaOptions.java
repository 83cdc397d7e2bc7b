package dev.depot.spark;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

/**
 * The JVM options Spark 4.2 needs on Java 25 ({@code --add-opens} for its reflection into {@code java.base},
 * {@code --sun-misc-unsafe-memory-access=allow}, and {@code --enable-native-access} for Depot), as the build
 * defines them once ({@code spark.javaOptions} in {@code depot-spark/pom.xml}), for launchers of Spark JVMs.
 */
public final class SparkJavaOptions {
    private static final String RESOURCE = "java-options.txt";

    private SparkJavaOptions() {
    }

    public static List<String> list() {
        try (InputStream in = SparkJavaOptions.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException("dev/depot/spark/" + RESOURCE + " is missing from the class path");
            }
            String text = new String(in.readAllBytes(), StandardCharsets.UTF_8).trim();
            return Arrays.stream(text.split("\\s+")).filter(s -> !s.isEmpty()).toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Prints them on one line (for scripts: {@code java $(... SparkJavaOptions) ...}). */
    public static void main(String[] args) {
        System.out.println(String.join(" ", list()));
    }
}
