package dev.depot.cli;

import java.util.List;

/** {@code depot bench}: runs {@code dev.depot.bench.BenchMain} (module depot-bench) with the arguments given. */
final class BenchCommand implements Command {
    static final String MAIN_CLASS = "dev.depot.bench.BenchMain";

    @Override
    public String name() {
        return "bench";
    }

    @Override
    public String synopsis() {
        return "NAME [ARGS...]";
    }

    @Override
    public String summary() {
        return "run the benchmark NAME";
    }

    @Override
    public String details() {
        return "Every argument after `bench` (NAME first) is passed to " + MAIN_CLASS + " unchanged; a --dir\n"
            + "given before `bench` is passed first as --dir DIR.\n";
    }

    @Override
    public List<Args.Option> options() {
        return List.of();
    }

    @Override
    public boolean forwardsArguments() {
        return true;
    }

    @Override
    public int run(Context ctx) throws Exception {
        return ExternalMain.run(MAIN_CLASS, "benchmark", ctx.args().positionals().toArray(String[]::new));
    }
}
