package dev.depot.cli;

import java.util.List;

/**
 * A command that hands every argument after its name, unchanged, to a main class of another module
 * ({@code depot demo}, {@code depot bench}); see {@link ExternalMain}.
 */
final class ForwardingCommand implements Command {
    private final String name;
    private final String synopsis;
    private final String summary;
    private final String details;
    private final String mainClass;
    private final String what;

    private ForwardingCommand(String name, String synopsis, String summary, String details, String mainClass,
                              String what) {
        this.name = name;
        this.synopsis = synopsis;
        this.summary = summary;
        this.details = details;
        this.mainClass = mainClass;
        this.what = what;
    }

    /** {@code depot demo}: {@code dev.depot.bench.DemoMain}. */
    static ForwardingCommand demo() {
        return new ForwardingCommand("demo", "[--quick]",
            "run the guided demo (producer and consumer processes sharing objects)", """
            Every argument after `demo` is passed to dev.depot.bench.DemoMain unchanged (--quick: fewer, smaller
            arrays). The demo starts a store of its own in a fresh directory under /dev/shm and removes it; --dir
            does not apply.
            """, "dev.depot.bench.DemoMain", "demo");
    }

    /** {@code depot bench}: {@code dev.depot.bench.BenchMain}. */
    static ForwardingCommand bench() {
        return new ForwardingCommand("bench", "NAME|all [ARGS...]", "run the benchmark NAME", """
            Every argument after `bench` is passed to dev.depot.bench.BenchMain unchanged: NAME is a benchmark or
            `all` (an unknown NAME lists them), then its options, e.g. --quick and --json. Benchmarks start
            stores of their own in fresh directories under /dev/shm; --dir does not apply.
            """, "dev.depot.bench.BenchMain", "benchmark");
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public String synopsis() {
        return synopsis;
    }

    @Override
    public String summary() {
        return summary;
    }

    @Override
    public String details() {
        return details;
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
        return ExternalMain.run(mainClass, what, ctx.args().positionals().toArray(String[]::new), ctx.out(), ctx.err());
    }
}
