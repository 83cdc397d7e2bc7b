package dev.depot.cli;

import dev.depot.errors.DepotException;
import dev.depot.errors.ErrorCode;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStreamWriter;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Help;
import picocli.CommandLine.Model.UsageMessageSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.UnmatchedArgumentException;

/**
 * The {@code depot} command, parsed by picocli from the annotated command classes under {@link DepotCommand}:
 * runs the command and turns every failure into one stderr line starting with {@code depot: } and an exit
 * status (0 ok, 1 error, 2 usage error, 3 object missing or timed out, 4 store full; see
 * {@link ErrorCode#exitStatus}). Usage errors add the command's usage and a pointer to its {@code --help}.
 * {@link #run} does all of it without exiting, for tests; {@link #main} exits with its result.
 */
public final class Main {
    private static final int USAGE_WIDTH = 110;

    private Main() {
    }

    public static void main(String[] args) {
        System.exit(run(args, System.in, System.out, System.err));
    }

    /** Runs the command line {@code argv}; returns the exit status. Never calls System.exit. */
    public static int run(String[] argv, InputStream in, PrintStream out, PrintStream err) {
        CommandLine cl = commandLine(in, out, err);
        try {
            return cl.execute(argv);
        } finally {
            cl.getOut().flush();
            cl.getErr().flush();
            out.flush();
            err.flush();
        }
    }

    /** The command tree with Depot's parsing rules, help layout and failure handling. */
    static CommandLine commandLine(InputStream in, PrintStream out, PrintStream err) {
        CommandLine cl = new CommandLine(new DepotCommand(in, out, err));
        // an option given twice: the last value counts (list options such as rm --name collect every one)
        cl.setOverwrittenOptionsAllowed(true);
        cl.setUsageHelpWidth(USAGE_WIDTH);
        cl.setColorScheme(Help.defaultColorScheme(Help.Ansi.OFF));
        cl.setOut(new PrintWriter(new OutputStreamWriter(out, StandardCharsets.UTF_8), true));
        cl.setErr(new PrintWriter(new OutputStreamWriter(err, StandardCharsets.UTF_8), true));
        cl.setParameterExceptionHandler((e, args) -> usageError(e.getCommandLine(), message(e)));
        cl.setExecutionExceptionHandler((e, command, parseResult) -> failure(e, command));
        layOutHelp(cl);
        for (CommandLine sub : cl.getSubcommands().values()) {
            layOutHelp(sub);
            if (sub.getCommand() instanceof ForwardingCommand) {
                ForwardingCommand.configure(sub);
            }
        }
        return cl;
    }

    /** The names of the commands, in the order of {@code depot --help}. */
    static List<String> commandNames() {
        return List.copyOf(commandLine(InputStream.nullInputStream(), System.out, System.err).getSubcommands().keySet());
    }

    private static void layOutHelp(CommandLine c) {
        UsageMessageSpec u = c.getCommandSpec().usageMessage();
        u.synopsisHeading("usage: ").descriptionHeading("%n").parameterListHeading("%narguments:%n")
            .optionListHeading("%noptions:%n").commandListHeading("%ncommands:%n").footerHeading("%n")
            .sortOptions(false);
        if (c.getCommand() instanceof CommandLine.HelpCommand) {
            // picocli's own help command: its one line becomes the description, under a synopsis like ours
            u.header(new String[0]).customSynopsis("depot help [COMMAND]")
                .description("show the help of a command (`depot help COMMAND` is `depot COMMAND --help`)");
        }
    }

    private static String message(ParameterException e) {
        if (e instanceof UnmatchedArgumentException u && e.getCommandLine().getParent() == null
            && !u.getUnmatched().isEmpty() && !u.getUnmatched().getFirst().startsWith("-")) {
            return "unknown command '" + u.getUnmatched().getFirst() + "'";
        }
        return e.getMessage();
    }

    /** One line saying what is wrong, the command's usage, and where its help is; status 2. */
    private static int usageError(CommandLine command, String message) {
        PrintWriter err = command.getErr();
        err.println("depot: " + oneLine(message));
        if (command.getParent() == null) {
            err.println("usage: depot [--dir DIR] COMMAND [OPTIONS]; commands: "
                + String.join(", ", command.getSubcommands().keySet()));
            err.println("run `depot --help` for details");
        } else {
            err.println("usage: " + synopsis(command));
            err.println("run `depot " + command.getCommandName() + " --help` for details");
        }
        err.flush();
        return ErrorCode.BAD_REQUEST.exitStatus;
    }

    private static String synopsis(CommandLine command) {
        String[] custom = command.getCommandSpec().usageMessage().customSynopsis();
        return custom.length > 0 ? custom[0] : command.getHelp().synopsis(0).strip();
    }

    /** A failure of a command as one {@code depot: } line and its exit status. */
    private static int failure(Exception e, CommandLine command) {
        PrintWriter err = command.getErr();
        int status = switch (e) {
            case UsageException u -> usageError(command, u.getMessage());
            case DepotException d -> print(err, d.getMessage(), d.code().exitStatus);
            case IllegalArgumentException i -> print(err, i.getMessage(), ErrorCode.BAD_REQUEST.exitStatus);
            case IOException io -> print(err, describe(io), ErrorCode.INTERNAL.exitStatus);
            case UncheckedIOException u -> print(err, u.getMessage() != null ? u.getMessage() : describe(u.getCause()),
                ErrorCode.INTERNAL.exitStatus);
            case InterruptedException i -> {
                Thread.currentThread().interrupt();
                yield print(err, "interrupted", ErrorCode.INTERNAL.exitStatus);
            }
            default -> print(err, "internal error: " + e + "; please report it with the command line",
                ErrorCode.INTERNAL.exitStatus);
        };
        err.flush();
        return status;
    }

    private static int print(PrintWriter err, String message, int status) {
        err.println("depot: " + oneLine(message));
        return status;
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
