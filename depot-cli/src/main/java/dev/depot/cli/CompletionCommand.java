package dev.depot.cli;

import java.util.concurrent.Callable;
import picocli.AutoComplete;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code depot completion bash}: prints a bash completion script for every command and option, made by picocli. */
@Command(name = "completion",
    customSynopsis = "depot completion bash",
    description = "print a shell completion script (bash)",
    footer = {"Load it in the current shell:   source <(depot completion bash)",
        "or install it:                  depot completion bash > ~/.local/share/bash-completion/completions/depot"})
final class CompletionCommand implements Callable<Integer> {
    @ParentCommand
    DepotCommand depot;

    @Spec
    CommandSpec spec;

    @Mixin
    HelpOption help;

    @Parameters(paramLabel = "SHELL", description = "the shell: bash (zsh reads it too, with bashcompinit)")
    String shell;

    @Override
    public Integer call() {
        if (!shell.equals("bash")) {
            throw new UsageException("no completion for shell '" + shell + "'; only bash (zsh: with bashcompinit)");
        }
        depot.out.print(AutoComplete.bash("depot", spec.root().commandLine()));
        return 0;
    }
}
