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
        return "NAME|all [ARGS...]";
    }

    @Override
    public String summary() {
        return "run the benchmark NAME";
    }

    @Override
    public String details() {
        return """
            Every argument after `bench` is passed to %s unchanged: NAME is a benchmark or `all`
            (an unknown NAME lists them), then its options, e.g. --quick and --json. Benchmarks start
            stores of their own in fresh directories under /dev/shm; --dir does not apply.
            """.formatted(MAIN_CLASS);
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
        return ExternalMain.run(MAIN_CLASS, "benchmark", ctx.args().positionals().toArray(String[]::new), ctx.out(),
            ctx.err());
    }
}
