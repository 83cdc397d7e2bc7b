package dev.depot.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * A command that hands every argument after its name, unchanged, to a main class of another module
 * ({@code depot demo}, {@code depot bench}; see {@link ExternalMain}). Only {@code -h}/{@code --help} right
 * after the name is its own; such commands use stores of their own, so {@code --dir} before the name is a
 * usage error.
 */
abstract class ForwardingCommand implements Callable<Integer> {
    @ParentCommand
    DepotCommand depot;

    @Spec
    CommandSpec spec;

    @Mixin
    HelpOption help;

    @Parameters(paramLabel = "ARGS", description = "passed on unchanged")
    List<String> args = new ArrayList<>();

    /** The class whose {@code run} or {@code main} gets the arguments. */
    abstract String mainClass();

    /** What it is, for the message when it is not in the build: {@code benchmark}. */
    abstract String what();

    /** Parses what follows the name as positionals: unknown options too, and everything after the first one. */
    static void configure(CommandLine command) {
        command.setUnmatchedOptionsArePositionalParams(true).setStopAtPositional(true);
    }

    @Override
    public Integer call() throws Exception {
        if (depot.dir != null) {
            throw new UsageException("`depot " + spec.name() + "` uses a fresh store of its own; --dir does not apply");
        }
        return ExternalMain.run(mainClass(), what(), args.toArray(String[]::new), depot.out, depot.err);
    }
}
