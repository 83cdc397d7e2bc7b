package dev.depot.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/** A child's side of the line protocol: commands on stdin, replies on stdout (flushed per line). */
final class ChildIo {
    private final BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));

    void say(String line) {
        System.out.println(line);
        System.out.flush();
    }

    /** The next command; exits the JVM when the driver closed our stdin (it is gone). */
    String next() {
        try {
            String line = in.readLine();
            if (line == null) {
                System.exit(2);
            }
            return line;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The {@code key=value} fields of a reply line such as {@code RESULT ops=10 nanos=20}. */
    static java.util.Map<String, String> fields(String line) {
        java.util.Map<String, String> m = new java.util.LinkedHashMap<>();
        for (String token : line.trim().split(" +")) {
            int eq = token.indexOf('=');
            if (eq > 0) {
                m.put(token.substring(0, eq), token.substring(eq + 1));
            }
        }
        return m;
    }

    /** Waits for exactly {@code expected}. */
    void expect(String expected) {
        String line = next();
        if (!line.equals(expected)) {
            throw new IllegalStateException("expected '" + expected + "' from the driver, got '" + line + "'");
        }
    }
}
