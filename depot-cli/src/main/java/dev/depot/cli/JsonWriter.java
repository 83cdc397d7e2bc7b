package dev.depot.cli;

import java.util.ArrayDeque;
import java.util.Deque;

/**
 * Writes JSON text: objects, arrays, strings, numbers, booleans and null, with commas placed for the caller.
 * Strings are escaped per RFC 8259 (quote, backslash and every control character); non-finite doubles, which
 * JSON cannot represent, are written as {@code null}. Misuse (a value where a name is due, an unclosed
 * container) fails with IllegalStateException.
 *
 * <pre>{@code
 * String text = new JsonWriter().beginObject().name("used_bytes").value(42).endObject().toString();
 * }</pre>
 */
final class JsonWriter {
    private enum Scope { OBJECT_NAME, OBJECT_VALUE, ARRAY }

    private final StringBuilder out = new StringBuilder();
    private final Deque<Scope> scopes = new ArrayDeque<>();
    /** Whether the current container already holds an element (so the next one needs a comma). */
    private final Deque<Boolean> filled = new ArrayDeque<>();
    private final boolean linePerElement;
    private boolean done;

    /** Compact JSON on one line. */
    JsonWriter() {
        this(false);
    }

    /**
     * With {@code linePerElement}, each element of a top-level array goes on a line of its own (still one JSON
     * text, easier to read and to grep).
     */
    JsonWriter(boolean linePerElement) {
        this.linePerElement = linePerElement;
    }

    JsonWriter beginObject() {
        beforeValue();
        out.append('{');
        scopes.push(Scope.OBJECT_NAME);
        filled.push(false);
        return this;
    }

    JsonWriter endObject() {
        if (scopes.peek() != Scope.OBJECT_NAME) {
            throw new IllegalStateException("endObject outside an object or after a name without a value");
        }
        return end('}');
    }

    JsonWriter beginArray() {
        beforeValue();
        out.append('[');
        scopes.push(Scope.ARRAY);
        filled.push(false);
        return this;
    }

    JsonWriter endArray() {
        if (scopes.peek() != Scope.ARRAY) {
            throw new IllegalStateException("endArray outside an array");
        }
        return end(']');
    }

    /** Starts a member of the current object; a value must follow. */
    JsonWriter name(String name) {
        if (scopes.peek() != Scope.OBJECT_NAME) {
            throw new IllegalStateException("a name is only allowed inside an object, before a value");
        }
        comma();
        string(name);
        out.append(':');
        scopes.pop();
        scopes.push(Scope.OBJECT_VALUE);
        return this;
    }

    JsonWriter value(String s) {
        beforeValue();
        if (s == null) {
            out.append("null");
        } else {
            string(s);
        }
        return this;
    }

    JsonWriter value(long n) {
        beforeValue();
        out.append(n);
        return this;
    }

    JsonWriter value(double d) {
        beforeValue();
        out.append(Double.isFinite(d) ? Double.toString(d) : "null");
        return this;
    }

    JsonWriter value(boolean b) {
        beforeValue();
        out.append(b);
        return this;
    }

    /** The text written; fails when a container is still open. */
    @Override
    public String toString() {
        if (!scopes.isEmpty()) {
            throw new IllegalStateException("JSON has " + scopes.size() + " unclosed container(s)");
        }
        return out.toString();
    }

    private JsonWriter end(char c) {
        scopes.pop();
        if (filled.pop() && c == ']' && scopes.isEmpty() && linePerElement) {
            out.append('\n');
        }
        out.append(c);
        if (scopes.isEmpty()) {
            done = true;
        }
        return this;
    }

    private void beforeValue() {
        Scope scope = scopes.peek();
        if (scope == null) {
            if (done) {
                throw new IllegalStateException("a JSON text holds one value; it is complete already");
            }
            done = true;
        } else if (scope == Scope.OBJECT_NAME) {
            throw new IllegalStateException("a value inside an object needs a name first");
        } else if (scope == Scope.OBJECT_VALUE) {
            scopes.pop();
            scopes.push(Scope.OBJECT_NAME);
        } else {
            comma();
        }
    }

    private void comma() {
        if (filled.pop()) {
            out.append(',');
        }
        filled.push(true);
        if (linePerElement && scopes.size() == 1 && scopes.peek() == Scope.ARRAY) {
            out.append('\n');
        }
    }

    private void string(String s) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                case '\b' -> out.append("\\b");
                case '\f' -> out.append("\\f");
                default -> {
                    if (c < 0x20 || c == '\u2028' || c == '\u2029') {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
    }
}
