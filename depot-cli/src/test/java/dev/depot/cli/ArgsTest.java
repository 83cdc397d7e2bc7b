package dev.depot.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class ArgsTest {
    private static final List<Args.Option> OPTIONS = List.of(
        new Args.Option("--timeout", null, "MS", "wait"),
        new Args.Option("--output", "-o", "FILE", "out"),
        new Args.Option("--json", null, null, "json"));

    private static Args parse(String... tokens) {
        return Args.parse(List.of(tokens), OPTIONS, "test");
    }

    @Test
    void shouldTakeOptionValuesWithSpaceOrEquals() {
        Args a = parse("--timeout", "5", "-o", "f", "--dir=/x", "pos");
        assertEquals(5, a.number("--timeout", 0));
        assertEquals("f", a.value("--output"));
        assertEquals("/x", a.value("--dir"));
        assertEquals(List.of("pos"), a.positionals());
        assertEquals(-1, parse("--timeout=-1").number("--timeout", 0));
        assertEquals(-1, parse("--timeout", "-1").number("--timeout", 0));
    }

    @Test
    void shouldAcceptOptionsAfterPositionals() {
        Args a = parse("one", "--json", "two");
        assertTrue(a.has("--json"));
        assertEquals(List.of("one", "two"), a.positionals());
    }

    @Test
    void shouldTreatDashAsPositionalAndStopAtDoubleDash() {
        Args a = parse("-", "--", "--json", "-o");
        assertFalse(a.has("--json"));
        assertEquals(List.of("-", "--json", "-o"), a.positionals());
    }

    @Test
    void shouldKeepEveryValueOfARepeatedOption() {
        Args a = parse("-o", "a", "--output", "b");
        assertEquals(List.of("a", "b"), a.values("--output"));
        assertEquals("b", a.value("--output"));
    }

    @Test
    void shouldRejectUnknownOptionsMissingValuesAndValuedFlags() {
        assertThrows(Args.UsageException.class, () -> parse("--nope"));
        assertThrows(Args.UsageException.class, () -> parse("--timeout"));
        assertThrows(Args.UsageException.class, () -> parse("--json=yes"));
        assertThrows(Args.UsageException.class, () -> parse("--timeout", "soon").number("--timeout", 0));
        assertThrows(Args.UsageException.class, () -> parse("a", "b").expectPositionals(1, 1, "one"));
        assertThrows(Args.UsageException.class, () -> parse().expectPositionals(1, 1, "one"));
    }

    @Test
    void shouldParseSizeOptions() {
        List<Args.Option> options = List.of(new Args.Option("--capacity", null, "SIZE", "c"));
        assertEquals(4L << 30, Args.parse(List.of("--capacity", "4g"), options, "t").size("--capacity", 0));
        assertEquals(7, Args.parse(List.of(), options, "t").size("--capacity", 7));
        assertThrows(Args.UsageException.class,
            () -> Args.parse(List.of("--capacity", "big"), options, "t").size("--capacity", 0));
    }
}
