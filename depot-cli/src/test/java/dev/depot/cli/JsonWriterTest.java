package dev.depot.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class JsonWriterTest {
    @Test
    void shouldEscapeEveryCharacterJsonRequires() {
        StringBuilder all = new StringBuilder("quote\" backslash\\ slash/ unicode é ✓ \u2028");
        for (char c = 0; c < 0x20; c++) {
            all.append(c);
        }
        String text = new JsonWriter().beginObject().name("k\"ey\n").value(all.toString()).endObject().toString();
        Map<String, Object> back = JsonParser.parseObject(text);
        assertEquals(all.toString(), back.get("k\"ey\n"));
    }

    @Test
    void shouldWriteNumbersBooleansAndNull() {
        String text = new JsonWriter().beginArray().value(42).value(-1L).value(0.25).value(Double.NaN).value(true)
            .value((String) null).beginObject().endObject().beginArray().endArray().endArray().toString();
        assertEquals("[42,-1,0.25,null,true,null,{},[]]", text);
        List<?> back = (List<?>) JsonParser.parse(text);
        assertEquals(8, back.size());
        assertNull(back.get(3));
    }

    @Test
    void shouldPutEachTopLevelArrayElementOnItsOwnLine() {
        String text = new JsonWriter(true).beginArray()
            .beginObject().name("a").value(1).endObject()
            .beginObject().name("b").beginArray().value(1).value(2).endArray().endObject()
            .endArray().toString();
        assertEquals("[\n{\"a\":1},\n{\"b\":[1,2]}\n]", text);
        assertEquals("[]", new JsonWriter(true).beginArray().endArray().toString());
    }

    @Test
    void shouldFailLoudlyOnMisuse() {
        assertThrows(IllegalStateException.class, () -> new JsonWriter().beginObject().value(1));
        assertThrows(IllegalStateException.class, () -> new JsonWriter().beginArray().name("x"));
        assertThrows(IllegalStateException.class, () -> new JsonWriter().beginObject().name("x").endObject());
        assertThrows(IllegalStateException.class, () -> new JsonWriter().beginArray().toString());
        assertThrows(IllegalStateException.class, () -> new JsonWriter().value(1).value(2));
        assertThrows(IllegalStateException.class, () -> new JsonWriter().beginArray().endObject());
    }
}
