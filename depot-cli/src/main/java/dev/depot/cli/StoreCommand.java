package dev.depot.cli;

import dev.depot.client.DepotDirectory;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;

/**
 * A command that works on one store directory: {@code --dir} after the command name (or before it, on
 * {@link DepotCommand}), else the default directory; {@code -h}/{@code --help}; and the process's streams.
 * Subclasses declare their own options and arguments with picocli annotations and implement {@link #run}.
 */
abstract class StoreCommand implements Callable<Integer> {
    @ParentCommand
    DepotCommand depot;

    @Option(names = "--dir", paramLabel = "DIR", description = DepotCommand.DIR_HELP, order = 100)
    String dirAfterName;

    @Mixin
    HelpOption help;

    /** Runs the command; returns its exit status. Failures are thrown (see {@link Main#run}). */
    abstract int run() throws Exception;

    @Override
    public final Integer call() throws Exception {
        return run();
    }

    /** The store directory: {@code --dir} (after the name wins), else {@code $DEPOT_DIR}, else the default. */
    Path dir() {
        String given = dirAfterName != null ? dirAfterName : depot.dir;
        if (given == null) {
            return DepotDirectory.defaultDirectory();
        }
        if (given.isBlank()) {
            throw new UsageException("--dir needs a directory, got an empty string");
        }
        try {
            return Path.of(given);
        } catch (InvalidPathException e) {
            throw new UsageException("--dir: not a path: " + e.getMessage(), e);
        }
    }

    InputStream in() {
        return depot.in;
    }

    PrintStream out() {
        return depot.out;
    }

    PrintStream err() {
        return depot.err;
    }
}
