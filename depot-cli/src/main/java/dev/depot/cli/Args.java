package dev.depot.cli;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The parsed arguments of one command: options (each declared by the command as an {@link Option}) and the
 * positional arguments. Rules: {@code --name value} or {@code --name=value} for options that take a value, a
 * bare {@code --name} for flags, {@code -} is a positional (stdin or stdout), {@code --} ends the options, and
 * options may come before or after positionals. An option given twice keeps every value ({@link #values}); the
 * last one wins for {@link #value}. Anything else is an {@link UsageException}.
 */
final class Args {
    /** The option that every command accepts: the store directory. */
    static final Option DIR = new Option("--dir", null, "DIR",
        "store directory (default $DEPOT_DIR, else /dev/shm/depot-$USER)");
    /** The option that every command accepts: print the command's help. */
    static final Option HELP = new Option("--help", "-h", null, "show this help and exit");

    /**
     * An option a command declares.
     *
     * @param name      long name, with its dashes ({@code --timeout})
     * @param alias     short name ({@code -o}) or null
     * @param valueName what the value is called in the help ({@code MS}), or null for a flag
     * @param help      one line for the help
     */
    record Option(String name, String alias, String valueName, String help) {
        boolean takesValue() {
            return valueName != null;
        }

        boolean matches(String token) {
            return token.equals(name) || token.equals(alias);
        }

        String label() {
            String names = alias == null ? name : alias + ", " + name;
            return takesValue() ? names + " " + valueName : names;
        }
    }

    /** The command line is wrong; the CLI prints the message, a short usage, and exits with status 2. */
    static final class UsageException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        UsageException(String message) {
            super(message);
        }

        UsageException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    private final Map<String, List<String>> values;
    private final List<String> positionals;

    private Args(Map<String, List<String>> values, List<String> positionals) {
        this.values = values;
        this.positionals = positionals;
    }

    /** Parses {@code tokens} against the options a command declares plus {@link #DIR} and {@link #HELP}. */
    static Args parse(List<String> tokens, List<Option> declared, String command) {
        List<Option> options = new ArrayList<>(declared);
        options.add(DIR);
        options.add(HELP);
        Map<String, List<String>> values = new LinkedHashMap<>();
        List<String> positionals = new ArrayList<>();
        for (int i = 0; i < tokens.size(); i++) {
            String token = tokens.get(i);
            if (token.equals("--")) {
                positionals.addAll(tokens.subList(i + 1, tokens.size()));
                break;
            }
            if (!token.startsWith("-") || token.equals("-")) {
                positionals.add(token);
                continue;
            }
            int eq = token.startsWith("--") ? token.indexOf('=') : -1;
            String name = eq < 0 ? token : token.substring(0, eq);
            Option option = find(options, name, command);
            String value;
            if (!option.takesValue()) {
                if (eq >= 0) {
                    throw new UsageException(option.name() + " takes no value, got '" + token + "'");
                }
                value = "";
            } else if (eq >= 0) {
                value = token.substring(eq + 1);
            } else if (i + 1 < tokens.size()) {
                value = tokens.get(++i);
            } else {
                throw new UsageException(option.name() + " needs a value (" + option.valueName() + ")");
            }
            values.computeIfAbsent(option.name(), k -> new ArrayList<>()).add(value);
        }
        return new Args(values, Collections.unmodifiableList(positionals));
    }

    private static Option find(List<Option> options, String token, String command) {
        for (Option o : options) {
            if (o.matches(token)) {
                return o;
            }
        }
        throw new UsageException("unknown option " + token + " for `depot " + command + "`");
    }

    /** True when the flag (or option) was given. */
    boolean has(String name) {
        return values.containsKey(name);
    }

    /** The option's last value, or null when it was not given. */
    String value(String name) {
        List<String> v = values.get(name);
        return v == null ? null : v.getLast();
    }

    /** Every value given for the option, in order. */
    List<String> values(String name) {
        return values.getOrDefault(name, List.of());
    }

    List<String> positionals() {
        return positionals;
    }

    /** Fails unless there are {@code min..max} positionals, naming them {@code what} in the message. */
    void expectPositionals(int min, int max, String what) {
        int n = positionals.size();
        if (n < min) {
            throw new UsageException("missing " + what);
        }
        if (n > max) {
            throw new UsageException("too many arguments: " + String.join(" ", positionals.subList(max, n))
                + " (expected " + what + ")");
        }
    }

    /** A size option ({@code 4g}, {@code 512m}, {@code 64k}, bytes), or {@code fallback} when not given. */
    long size(String name, long fallback) {
        String v = value(name);
        if (v == null) {
            return fallback;
        }
        try {
            return Size.parse(v);
        } catch (IllegalArgumentException e) {
            throw new UsageException(name + ": " + e.getMessage(), e);
        }
    }

    /** A whole-number option, or {@code fallback} when not given. */
    long number(String name, long fallback) {
        String v = value(name);
        if (v == null) {
            return fallback;
        }
        try {
            return Long.parseLong(v.strip());
        } catch (NumberFormatException e) {
            throw new UsageException(name + " needs a whole number, got '" + v + "'", e);
        }
    }
}
