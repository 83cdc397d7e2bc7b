package dev.depot.cli;

import java.util.List;

/** {@code depot demo}: runs {@code dev.depot.bench.DemoMain} (module depot-bench) with the arguments given. */
final class DemoCommand implements Command {
    static final String MAIN_CLASS = "dev.depot.bench.DemoMain";

    @Override
    public String name() {
        return "demo";
    }

    @Override
    public String synopsis() {
        return "[--quick]";
    }

    @Override
    public String summary() {
        return "run the guided demo (producer and consumer processes sharing objects)";
    }

    @Override
    public String details() {
        return """
            Every argument after `demo` is passed to %s unchanged (--quick: fewer, smaller arrays).
            The demo starts a store of its own in a fresh directory under /dev/shm and removes it; --dir does
            not apply.
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
        return ExternalMain.run(MAIN_CLASS, "demo", ctx.args().positionals().toArray(String[]::new), ctx.out(),
            ctx.err());
    }
}
