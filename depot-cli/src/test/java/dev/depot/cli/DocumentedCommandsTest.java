package dev.depot.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.MissingParameterException;
import picocli.CommandLine.ParameterException;

/**
 * Every {@code depot} command line that README.md and docs/*.md show, in shell and config blocks and in inline
 * code, names a command that exists with options it has: a synopsis ({@code depot get ID | --name NAME
 * [--timeout MS]}) by its option names, a concrete line ({@code depot serve --capacity 16g ...}) by parsing it
 * as the command would, values included. The options of a command that hands its arguments to another
 * module's program ({@code bench}, {@code demo}, {@code sort}) are that program's, checked by its own tests.
 * And docs/CLI.md names every option of every command.
 */
class DocumentedCommandsTest {
    private static final Pattern FENCE = Pattern.compile("^(```+|~~~+)\\s*(\\S*)");
    /** {@code depot} where a shell or a unit file runs it: first on the line, after variable assignments or a
     *  unit's {@code ExecStart=}, in {@code <(...)}; with or without a path. */
    private static final String RUN = "(?:\\w+=\\S+\\s+)*(?:ExecStart=)?(?:[^`\\s]*\\(|)(?:[^`\\s]*/)?depot\\s+";
    private static final Pattern IN_BLOCK = Pattern.compile("^\\s*" + RUN + "(\\S.*)");
    private static final Pattern INLINE = Pattern.compile("`(?:[^`]*\\()?" + RUN + "([^`]+)`");
    private static final Pattern OPTION = Pattern.compile("(?<![\\w-])(--?[a-zA-Z][\\w-]*)");
    private static final Pattern PLACEHOLDER = Pattern.compile("(?<![$\\w])[A-Z][A-Z_]+(?![\\w])");
    private static final List<String> SHELL_BLOCKS = List.of("", "sh", "bash", "console", "ini");

    /** One documented command line: where it is and the words after {@code depot}. */
    record Shown(String where, String line) {
        boolean isSynopsis() {
            return line.contains("[") || line.contains("...") || PLACEHOLDER.matcher(line).find();
        }
    }

    private static List<Path> documents() throws IOException {
        Path root = Path.of("..").toAbsolutePath().normalize();
        List<Path> docs = new ArrayList<>(List.of(root.resolve("README.md")));
        try (Stream<Path> files = Files.list(root.resolve("docs"))) {
            files.filter(p -> p.toString().endsWith(".md")).sorted().forEach(docs::add);
        }
        return docs;
    }

    /** The command lines of one document: in shell and config blocks (continued lines joined), and inline. */
    static List<Shown> commandLines(String name, String text) {
        List<Shown> shown = new ArrayList<>();
        String[] lines = text.split("\n", -1);
        String fence = null;
        boolean shell = false;
        for (int i = 0; i < lines.length; i++) {
            String line = lines[i];
            if (fence != null) {
                if (line.startsWith(fence)) {
                    fence = null;
                    continue;
                }
                if (!shell) {
                    continue;
                }
                int first = i;
                while (line.endsWith("\\") && i + 1 < lines.length) {
                    line = line.substring(0, line.length() - 1) + " " + lines[++i].strip();
                }
                Matcher m = IN_BLOCK.matcher(line);
                if (m.find()) {
                    shown.add(new Shown(name + ":" + (first + 1), cut(m.group(1))));
                }
                continue;
            }
            Matcher opening = FENCE.matcher(line);
            if (opening.find()) {
                fence = opening.group(1);
                shell = SHELL_BLOCKS.contains(opening.group(2));
                continue;
            }
            Matcher inline = INLINE.matcher(line);
            while (inline.find()) {
                shown.add(new Shown(name + ":" + (i + 1), cut(inline.group(1))));
            }
        }
        return shown;
    }

    /** The command itself: without a comment, a redirection, a pipe into another program or a closing paren. */
    private static String cut(String line) {
        String cut = line.replaceAll("\\s+", " ");
        for (String end : List.of(" #", " > ", " &", ")", ";")) {
            int at = cut.indexOf(end);
            if (at >= 0) {
                cut = cut.substring(0, at);
            }
        }
        int pipe = cut.indexOf(" | ");
        if (pipe >= 0 && !new Shown("", cut).isSynopsis()) {
            cut = cut.substring(0, pipe);
        }
        return cut.strip();
    }

    private static CommandLine commandLine() {
        return Main.commandLine(InputStream.nullInputStream(), System.out, System.err);
    }

    private static boolean forwards(CommandLine command) {
        return command.getCommand() instanceof ForwardingCommand;
    }

    private static void checkSynopsis(Shown shown) {
        CommandLine root = commandLine();
        CommandLine command = root;
        List<String> words = Arrays.asList(shown.line().split("\\s+"));
        for (String word : words) {
            if (word.matches("[a-z]+")) {
                command = root.getSubcommands().get(word);
                assertTrue(command != null, () -> shown.where() + ": `depot " + shown.line() + "`: no command " + word);
                break;
            }
        }
        if (forwards(command)) {
            return;
        }
        Matcher options = OPTION.matcher(shown.line());
        while (options.find()) {
            String option = options.group(1);
            CommandSpec spec = command.getCommandSpec();
            boolean known = spec.findOption(option) != null || root.getCommandSpec().findOption(option) != null;
            assertTrue(known, () -> shown.where() + ": `depot " + shown.line() + "`: " + spec.name() + " has no "
                + option);
        }
    }

    private static void checkConcrete(Shown shown) {
        try {
            commandLine().parseArgs(shown.line().split("\\s+"));
        } catch (MissingParameterException e) {
            if (OPTION.matcher(shown.line().substring(shown.line().lastIndexOf(' ') + 1)).matches()) {
                checkSynopsis(shown); // text that names an option, as "`depot serve --spill-dir`"
                return;
            }
            fail(shown.where() + ": `depot " + shown.line() + "` does not parse: " + e.getMessage());
        } catch (ParameterException e) {
            fail(shown.where() + ": `depot " + shown.line() + "` does not parse: " + e.getMessage());
        }
    }

    @Test
    void shouldHaveEveryCommandAndOptionTheDocsShow() throws IOException {
        int synopses = 0;
        int concrete = 0;
        for (Path doc : documents()) {
            String name = doc.getParent().getFileName() + "/" + doc.getFileName();
            for (Shown shown : commandLines(name, Files.readString(doc))) {
                if (shown.isSynopsis()) {
                    checkSynopsis(shown);
                    synopses++;
                } else {
                    checkConcrete(shown);
                    concrete++;
                }
            }
        }
        assertTrue(synopses >= 15, "the synopses of docs/CLI.md were not found: " + synopses);
        assertTrue(concrete >= 10, "the command lines of the docs were not found: " + concrete);
    }

    @Test
    void shouldDocumentEveryOptionOfEveryCommandInCliMd() throws IOException {
        String cli = Files.readString(Path.of("..", "docs", "CLI.md"));
        for (CommandLine command : commandLine().getSubcommands().values()) {
            String name = command.getCommandName();
            assertTrue(cli.contains("depot " + name), () -> "docs/CLI.md does not show `depot " + name + "`");
            for (OptionSpec option : command.getCommandSpec().options()) {
                for (String optionName : option.names()) {
                    assertTrue(cli.contains(optionName),
                        () -> "docs/CLI.md does not name " + optionName + " of `depot " + name + "`");
                }
            }
        }
    }

    @Test
    void shouldTellSynopsesFromCommandLinesAndCutWhatIsNotTheCommand() {
        String doc = "```sh\nbin/depot demo     # a pipeline\ndepot serve --dir /d \\\n    --capacity 16g &\n```\n"
            + "Run `depot get ID | --name NAME` or `depot ls --json | jq .` or `source <(depot completion bash)`.\n"
            + "```python\nimport depot\nclient = depot.connect()\n```\n";
        List<Shown> shown = commandLines("X.md", doc);
        assertEquals(List.of(new Shown("X.md:2", "demo"), new Shown("X.md:3", "serve --dir /d --capacity 16g"),
            new Shown("X.md:6", "get ID | --name NAME"), new Shown("X.md:6", "ls --json"),
            new Shown("X.md:6", "completion bash")), shown);
        assertTrue(shown.get(2).isSynopsis());
        assertFalse(shown.get(1).isSynopsis());
    }
}
