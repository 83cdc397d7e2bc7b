package dev.depot.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** The option syntax of docs/CLI.md ("Common rules"), as the command tree parses it. */
class OptionSyntaxTest {
    /** Parses {@code argv} without running anything; returns the subcommand's object. */
    @SuppressWarnings("unchecked")
    private static <T> T parse(String... argv) {
        CommandLine cl = Main.commandLine(InputStream.nullInputStream(), System.out, System.err);
        return (T) cl.parseArgs(argv).subcommand().commandSpec().userObject();
    }

    private static int status(String... argv) {
        return CliRunner.runExactly(new byte[0], argv).status();
    }

    /** What bash completes for {@code depot WORDS...} with the script loaded. */
    private static List<String> complete(String script, String... words) throws Exception {
        Path file = Files.createTempFile("depot-completion", ".bash");
        try {
            Files.writeString(file, script);
            String line = "depot " + String.join(" ", words);
            Process p = new ProcessBuilder("bash", "-c", "source \"$0\" && COMP_WORDS=(" + line + ") && COMP_CWORD="
                + words.length + " && COMP_LINE='" + line + "' && COMP_POINT=" + line.length()
                + " && _complete_depot 2>/dev/null; printf '%s\\n' \"${COMPREPLY[@]}\"", file.toString())
                .redirectErrorStream(true).start();
            try {
                String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                assertTrue(p.waitFor(30, TimeUnit.SECONDS), "bash did not finish");
                return out.lines().filter(l -> !l.isBlank()).sorted().toList();
            } finally {
                p.destroyForcibly();
                p.waitFor(10, TimeUnit.SECONDS);
            }
        } finally {
            Files.deleteIfExists(file);
        }
    }

    @Test
    void shouldTakeOptionValuesWithSpaceOrEquals() {
        GetCommand get = parse("get", "--timeout", "5", "-o", "f", "--dir=/x", "pos");
        assertEquals(5, get.timeout);
        assertEquals("f", get.output);
        assertEquals("/x", get.dirAfterName);
        assertEquals("pos", get.hex);
        assertEquals(-1, ((GetCommand) parse("get", "--timeout=-1")).timeout);
        assertEquals(-1, ((GetCommand) parse("get", "--timeout", "-1")).timeout);
    }

    @Test
    void shouldAcceptOptionsAfterPositionals() {
        RmCommand rm = parse("rm", "one", "--name", "n", "two");
        assertEquals(List.of("one", "two"), rm.hexes);
        assertEquals(List.of("n"), rm.names);
        PutCommand put = parse("put", "file", "--no-evict");
        assertTrue(put.noEvict);
        assertEquals("file", put.file);
    }

    @Test
    void shouldTreatDashAsPositionalAndStopAtDoubleDash() {
        RmCommand rm = parse("rm", "-", "--", "--name", "-o");
        assertEquals(List.of("-", "--name", "-o"), rm.hexes);
        assertEquals(List.of(), rm.names);
        assertEquals("-", ((PutCommand) parse("put", "-")).file);
    }

    @Test
    void shouldKeepEveryValueOfARepeatedListOptionAndTheLastOfAnyOther() {
        assertEquals(List.of("a", "b"), ((RmCommand) parse("rm", "--name", "a", "--name", "b")).names);
        assertEquals("b", ((GetCommand) parse("get", "-o", "a", "--output", "b")).output);
    }

    @Test
    void shouldRejectUnknownOptionsMissingValuesValuedFlagsAndStrayArguments() {
        assertEquals(2, status("ls", "--nope"));
        assertEquals(2, status("get", "--timeout"));
        assertEquals(2, status("ls", "--json=yes"));
        assertEquals(2, status("get", "--timeout", "soon", "x"));
        assertEquals(2, status("get", "a", "b"));
        assertEquals(2, status("ls", "extra"));
        assertEquals(2, status("evict"));
        assertEquals(2, status("--nope", "ls"));
    }

    @Test
    void shouldParseSizeArguments() {
        assertEquals(4L << 30, ((EvictCommand) parse("evict", "4g")).bytes);
        CliRunner.Result r = CliRunner.runExactly(new byte[0], "evict", "big");
        assertEquals(2, r.status(), r::toString);
        assertTrue(r.stderr().contains("not a size: 'big'"), r::toString);
    }

    @Test
    void shouldPrintTheVersionAndABashCompletionScript() throws Exception {
        CliRunner.Result version = CliRunner.runExactly(new byte[0], "--version");
        assertEquals(0, version.status(), version::toString);
        assertTrue(version.stdout().matches("depot \\d+\\.\\d+\\.\\d+(-SNAPSHOT)?\\R"), version::toString);
        CliRunner.Result bash = CliRunner.runExactly(new byte[0], "completion", "bash");
        assertEquals(0, bash.status(), bash::toString);
        assertTrue(bash.stdout().contains("complete -F"), "not a bash completion script");
        for (String word : List.of("serve", "--metrics", "--capacity", "--timeout", "--no-evict", "doctor")) {
            assertTrue(bash.stdout().contains(word), () -> word + " missing from the completion script");
        }
        assertEquals(List.of("--max-clients", "--max-objects", "--metrics"), complete(bash.stdout(), "serve", "--m"));
        assertEquals(List.of("serve"), complete(bash.stdout(), "se"));
        CliRunner.Result zsh = CliRunner.runExactly(new byte[0], "completion", "fish");
        assertEquals(2, zsh.status(), zsh::toString);
        assertFalse(zsh.stderr().isEmpty());
    }
}
