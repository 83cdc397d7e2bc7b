package dev.depot.bench;

import java.util.Map;

/** Writes the few JSON shapes the benchmarks print: maps of strings, numbers, booleans and nested maps. */
final class Json {
    private Json() {
    }

    static String write(Object value) {
        StringBuilder b = new StringBuilder();
        append(b, value);
        return b.toString();
    }

    private static void append(StringBuilder b, Object v) {
        switch (v) {
            case null -> b.append("null");
            case Map<?, ?> m -> {
                b.append('{');
                boolean first = true;
                for (Map.Entry<?, ?> e : m.entrySet()) {
                    if (!first) {
                        b.append(',');
                    }
                    first = false;
                    string(b, String.valueOf(e.getKey()));
                    b.append(':');
                    append(b, e.getValue());
                }
                b.append('}');
            }
            case Boolean x -> b.append(x);
            case Double d -> b.append(Double.isFinite(d) ? Units.round(d) : "null");
            case Float f -> append(b, (double) f);
            case Number n -> b.append(n);
            default -> string(b, v.toString());
        }
    }

    private static void string(StringBuilder b, String s) {
        b.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\t' -> b.append("\\t");
                default -> {
                    if (c < 0x20) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        b.append('"');
    }
}
