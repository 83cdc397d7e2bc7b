package dev.depot.cli;

import picocli.CommandLine.Command;

/** {@code depot bench}: {@code dev.depot.bench.BenchMain} with the arguments unchanged. */
@Command(name = "bench",
    customSynopsis = "depot bench NAME|all [ARGS...]",
    description = "run the benchmark NAME",
    footer = {"Every argument after `bench` is passed to dev.depot.bench.BenchMain unchanged: NAME is a benchmark or",
        "`all` (an unknown NAME lists them), then its options, e.g. --quick and --json. Benchmarks start",
        "stores of their own in fresh directories under /dev/shm; --dir does not apply."})
final class BenchCommand extends ForwardingCommand {
    @Override
    String mainClass() {
        return "dev.depot.bench.BenchMain";
    }

    @Override
    String what() {
        return "benchmark";
    }
}
