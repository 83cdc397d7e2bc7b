package dev.depot.cli;

import picocli.CommandLine.Option;

/** {@code -h}/{@code --help} for a subcommand ({@code @Mixin}): prints its usage on stdout and exits 0. */
final class HelpOption {
    @Option(names = {"-h", "--help"}, usageHelp = true, description = "show this help and exit", order = 101)
    boolean help;
}
