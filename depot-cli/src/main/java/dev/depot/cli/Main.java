package dev.depot.cli;

import dev.depot.client.DepotDirectory;
import dev.depot.errors.DepotException;
import dev.depot.errors.ErrorCode;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.InvalidPathException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The {@code depot} command: finds the subcommand, parses its options, runs it, and turns every failure into
 * one stderr line starting with {@code depot: } and an exit status (0 ok, 1 error, 2 usage error, 3 object
 * missing or timed out, 4 store full; see {@link ErrorCode#exitStatus}). {@link #run} does all of it without
 * exiting, for tests; {@link #main} exits with its result.
 */
public final class Main {
    static final List<Command> COMMANDS = List.of(new ServeCommand(), new PutCommand(), new GetCommand(),
        new LsCommand(), new StatCommand(), new RmCommand(), new EvictCommand(), new DoctorCommand(),
        ForwardingCommand.demo(), ForwardingCommand.bench());

    private Main() {
    }

    public static void main(String[] args) {
        System.exit(run(args, System.in, System.out, System.err));
    }

    /** Runs the command line {@code argv}; returns the exit status. Never calls System.exit. */
    public static int run(String[] argv, InputStream in, PrintStream out, PrintStream err) {
        Command command = null;
        try {
            Invocation inv = Invocation.of(Arrays.asList(argv));
            if (inv.name == null || inv.name.equals("help")) {
                return topLevelHelp(inv, out, err);
            }
            command = find(inv.name);
            if (command.forwardsArguments()) {
                if (inv.helpBeforeName || (!inv.rest.isEmpty() && isHelp(inv.rest.getFirst()))) {
                    out.print(help(command));
                    return 0;
                }
                if (inv.dirBeforeName != null) {
                    throw new Args.UsageException("`depot " + command.name() + "` uses a fresh store of its own; "
                        + "--dir does not apply");
                }
                List<String> forwarded = new ArrayList<>(inv.rest);
                // after "--" every token is a positional, kept exactly as given
                forwarded.addFirst("--");
                Args args = Args.parse(forwarded, List.of(), command.name());
                return command.run(new Command.Context(DepotDirectory.defaultDirectory(), args, in, out, err));
            }
            List<String> tokens = new ArrayList<>(inv.before);
            tokens.addAll(inv.rest);
            Args args = Args.parse(tokens, command.options(), command.name());
            if (args.has(Args.HELP.name())) {
                out.print(help(command));
                return 0;
            }
            return command.run(new Command.Context(directory(args.value(Args.DIR.name())), args, in, out, err));
        } catch (Args.UsageException e) {
            err.println("depot: " + oneLine(e.getMessage()));
            if (command == null) {
                err.println("usage: depot [--dir DIR] COMMAND [OPTIONS]; commands: " + commandNames());
                err.println("run `depot --help` for details");
            } else {
                err.println("usage: depot " + command.name() + " " + command.synopsis());
                err.println("run `depot " + command.name() + " --help` for details");
            }
            return ErrorCode.BAD_REQUEST.exitStatus;
        } catch (DepotException e) {
            err.println("depot: " + oneLine(e.getMessage()));
            return e.code().exitStatus;
        } catch (IllegalArgumentException e) {
            err.println("depot: " + oneLine(e.getMessage()));
            return ErrorCode.BAD_REQUEST.exitStatus;
        } catch (IOException e) {
            err.println("depot: " + oneLine(describe(e)));
            return ErrorCode.INTERNAL.exitStatus;
        } catch (UncheckedIOException e) {
            err.println("depot: " + oneLine(e.getMessage() != null ? e.getMessage() : describe(e.getCause())));
            return ErrorCode.INTERNAL.exitStatus;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            err.println("depot: interrupted");
            return ErrorCode.INTERNAL.exitStatus;
        } catch (Exception e) {
            err.println("depot: internal error: " + oneLine(String.valueOf(e)) + "; please report it with the command line");
            return ErrorCode.INTERNAL.exitStatus;
        } finally {
            out.flush();
            err.flush();
        }
    }

    /** The command line split around the command name: {@code [--dir DIR] [--help] NAME REST...}. */
    private static final class Invocation {
        final List<String> before = new ArrayList<>();
        String name;
        String dirBeforeName;
        boolean helpBeforeName;
        List<String> rest = List.of();

        static Invocation of(List<String> argv) {
            Invocation inv = new Invocation();
            for (int i = 0; i < argv.size(); i++) {
                String t = argv.get(i);
                if (t.equals(Args.DIR.name()) && i + 1 < argv.size()) {
                    inv.dirBeforeName = argv.get(++i);
                    inv.before.addAll(List.of(t, inv.dirBeforeName));
                } else if (t.startsWith(Args.DIR.name() + "=")) {
                    inv.dirBeforeName = t.substring(Args.DIR.name().length() + 1);
                    inv.before.add(t);
                } else if (isHelp(t)) {
                    inv.helpBeforeName = true;
                    inv.before.add(t);
                } else if (t.startsWith("-")) {
                    throw new Args.UsageException("unknown option " + t + " before the command name");
                } else {
                    inv.name = t;
                    inv.rest = argv.subList(i + 1, argv.size());
                    break;
                }
            }
            return inv;
        }
    }

    private static boolean isHelp(String token) {
        return token.equals(Args.HELP.name()) || token.equals(Args.HELP.alias());
    }

    private static int topLevelHelp(Invocation inv, PrintStream out, PrintStream err) {
        if (inv.name == null) {
            if (inv.helpBeforeName) {
                out.print(overview());
                return 0;
            }
            throw new Args.UsageException("no command given");
        }
        // depot help [COMMAND]
        if (inv.rest.isEmpty()) {
            out.print(overview());
        } else {
            out.print(help(find(inv.rest.getFirst())));
        }
        return 0;
    }

    private static Command find(String name) {
        for (Command c : COMMANDS) {
            if (c.name().equals(name)) {
                return c;
            }
        }
        throw new Args.UsageException("unknown command '" + name + "'");
    }

    private static Path directory(String given) {
        if (given == null) {
            return DepotDirectory.defaultDirectory();
        }
        if (given.isBlank()) {
            throw new Args.UsageException("--dir needs a directory, got an empty string");
        }
        try {
            return Path.of(given);
        } catch (InvalidPathException e) {
            throw new Args.UsageException("--dir: not a path: " + e.getMessage(), e);
        }
    }

    private static String commandNames() {
        return String.join(", ", COMMANDS.stream().map(Command::name).toList());
    }

    static String overview() {
        StringBuilder b = new StringBuilder();
        b.append("usage: depot [--dir DIR] COMMAND [OPTIONS]\n\n");
        b.append("Depot: a node-local shared-memory object store.\n\ncommands:\n");
        for (Command c : COMMANDS) {
            b.append(String.format("  %-7s %s%n", c.name(), c.summary()));
        }
        b.append(String.format("  %-7s %s%n", "help", "show help for a command (depot help COMMAND)"));
        b.append("\nThe store directory is --dir DIR (before or after the command), else $DEPOT_DIR,\n")
            .append("else /dev/shm/depot-$USER.\n")
            .append("Exit status: 0 ok, 1 error, 2 usage error, 3 object missing or timed out, 4 store full.\n")
            .append("Run `depot COMMAND --help` for a command's options.\n");
        return b.toString();
    }

    static String help(Command c) {
        StringBuilder b = new StringBuilder();
        b.append("usage: depot ").append(c.name()).append(' ').append(c.synopsis()).append("\n\n");
        b.append(c.summary()).append("\n\noptions:\n");
        List<Args.Option> all = new ArrayList<>(c.options());
        if (!c.forwardsArguments()) {
            all.add(Args.DIR);
        }
        all.add(Args.HELP);
        int width = all.stream().mapToInt(o -> o.label().length()).max().orElse(0);
        for (Args.Option o : all) {
            b.append(String.format("  %-" + width + "s  %s%n", o.label(), o.help()));
        }
        if (!c.details().isEmpty()) {
            b.append('\n').append(c.details());
            if (!c.details().endsWith("\n")) {
                b.append('\n');
            }
        }
        return b.toString();
    }

    /** An I/O failure as a sentence naming the file and what to check. */
    static String describe(IOException e) {
        return switch (e) {
            case NoSuchFileException f -> "no such file or directory: " + f.getFile() + "; check the path";
            case AccessDeniedException f -> "permission denied: " + f.getFile() + "; check its permissions";
            case FileSystemException f -> f.getMessage();
            default -> e.getMessage() != null ? e.getMessage() : e.toString();
        };
    }

    /** Error output is one line per error. */
    static String oneLine(String message) {
        return message == null ? "(no message)" : message.replaceAll("\\s*\\R\\s*", " ").strip();
    }
}
