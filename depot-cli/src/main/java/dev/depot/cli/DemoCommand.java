package dev.depot.cli;

import picocli.CommandLine.Command;

/** {@code depot demo}: {@code dev.depot.bench.DemoMain} with the arguments unchanged. */
@Command(name = "demo",
    customSynopsis = "depot demo [--quick]",
    description = "run the guided demo (producer and consumer processes sharing objects)",
    footer = {"Every argument after `demo` is passed to dev.depot.bench.DemoMain unchanged (--quick: fewer, smaller",
        "arrays). The demo starts a store of its own in a fresh directory under /dev/shm and removes it; --dir",
        "does not apply."})
final class DemoCommand extends ForwardingCommand {
    @Override
    String mainClass() {
        return "dev.depot.bench.DemoMain";
    }

    @Override
    String what() {
        return "demo";
    }
}
