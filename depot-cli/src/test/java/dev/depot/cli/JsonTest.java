package dev.depot.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.fasterxml.jackson.databind.node.ArrayNode;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class JsonTest {
    @Test
    void shouldEscapeQuotesBackslashesAndControlCharactersSoTheTextReadsBack() {
        StringBuilder all = new StringBuilder("quote \" backslash \\ ");
        for (char c = 0; c < 0x20; c++) {
            all.append(c);
        }
        String text = Json.compact(Json.object().put("k\"ey\n", all.toString()));
        assertEquals(Map.of("k\"ey\n", all.toString()), JsonText.parseObject(text));
    }

    @Test
    void shouldWriteNonFiniteDoublesAsNull() {
        String text = Json.compact(Json.putFinite(Json.putFinite(Json.object(), "nan", Double.NaN), "f", 0.25));
        assertEquals("{\"nan\":null,\"f\":0.25}", text);
    }

    @Test
    void shouldPutEachElementOfTheOutermostArrayOnItsOwnLine() {
        ArrayNode a = Json.array();
        a.addObject().put("a", 1).putArray("inner").add(1).add(2);
        a.addObject().put("b", "x");
        String text = Json.lines(a);
        assertEquals("[\n{\"a\":1,\"inner\":[1,2]},\n{\"b\":\"x\"}\n]", text);
        assertEquals(List.of(Map.of("a", 1L, "inner", List.of(1L, 2L)), Map.of("b", "x")), JsonText.parse(text));
        assertEquals("[]", Json.lines(Json.array()));
    }

    @Test
    void testParserShouldRejectTrailingTextAndDuplicateKeys() {
        assertThrows(IllegalArgumentException.class, () -> JsonText.parse("{} {}"));
        assertThrows(IllegalArgumentException.class, () -> JsonText.parse("{\"a\":1,\"a\":2}"));
        assertThrows(IllegalArgumentException.class, () -> JsonText.parse("[1,]"));
    }
}
