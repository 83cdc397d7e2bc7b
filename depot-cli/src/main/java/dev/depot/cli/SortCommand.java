package dev.depot.cli;

import picocli.CommandLine.Command;

/** {@code depot sort}: {@code dev.depot.bench.sort.SortMain} (module depot-shuffle) with the arguments unchanged. */
@Command(name = "sort",
    customSynopsis = "depot sort [--count 1e8] [--workers N] [--dtype float64|int64] [--json] [ARGS...]",
    description = "sort numbers by a sample sort through a Depot shuffle, beside the single-process Arrays.sort",
    footer = {"Every argument after `sort` is passed to dev.depot.bench.sort.SortMain unchanged: --count N (1e8),",
        "--workers N, --dtype float64|int64, --runs single,1,N, --specials (NaN, -0.0, duplicates), --seed S, --json,",
        "--no-pretouch (big runs: store pages are first touched inside the timed part), --no-warmup (every JVM cold).",
        "Worker JVMs are started and reaped by the command, on a store of its own in a fresh directory under",
        "/dev/shm that it removes; --dir does not apply. See docs/SHUFFLE.md."})
final class SortCommand extends ForwardingCommand {
    @Override
    String mainClass() {
        return "dev.depot.bench.sort.SortMain";
    }

    @Override
    String what() {
        return "sort demo";
    }
}
