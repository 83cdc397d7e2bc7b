package dev.depot.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class JsonTest {
    @Test
    void shouldEscapeStringsAndRoundDoublesToFourDigits() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("s", "a \"b\"\\\n");
        m.put("d", 1234.5678);
        m.put("n", 42L);
        m.put("nan", Double.NaN);
        m.put("ok", true);
        m.put("inner", Map.of("x", 1));
        assertEquals("{\"s\":\"a \\\"b\\\"\\\\\\n\",\"d\":1235,\"n\":42,\"nan\":null,\"ok\":true,\"inner\":{\"x\":1}}",
            Json.write(m));
        assertEquals(m.get("s"), ((Map<?, ?>) MiniJson.parse(Json.write(m))).get("s"));
    }
}
