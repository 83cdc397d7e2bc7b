package dev.depot.cli;

import java.io.InputStream;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;

/** One {@code depot} subcommand. Implementations are stateless; {@link Main} parses and dispatches. */
interface Command {
    /** What a command runs with: the store directory, its parsed arguments, and the process's streams. */
    record Context(Path dir, Args args, InputStream in, PrintStream out, PrintStream err) {
    }

    /** The word that selects it: {@code put}. */
    String name();

    /** Its arguments after the name, for the usage line: {@code [--id HEX | --name NAME] [FILE|-]}. */
    String synopsis();

    /** One line saying what it does, for {@code depot --help}. */
    String summary();

    /** Further help text (may be empty), printed after the options by {@code depot CMD --help}. */
    default String details() {
        return "";
    }

    /** The options it accepts besides {@code --dir} and {@code --help}. */
    List<Args.Option> options();

    /**
     * True when the arguments after the name are handed over unparsed (to a main class in another module);
     * {@code --help} right after the name still shows this command's help.
     */
    default boolean forwardsArguments() {
        return false;
    }

    /**
     * Runs the command. Returns the exit status; failures are thrown (a {@link dev.depot.errors.DepotException}
     * exits with its code's status, an {@link Args.UsageException} with 2, anything else with 1).
     */
    int run(Context context) throws Exception;
}
