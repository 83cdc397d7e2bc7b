package dev.depot.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ResultTest {
    @Test
    void shouldWriteOneLineOfJsonWithFourDigitDoublesAndEscapedStrings() throws Exception {
        Map<String, Object> figures = new LinkedHashMap<>();
        figures.put("s", "a \"b\"\\\n");
        figures.put("d", 1234.5678);
        figures.put("small", 0.000123456);
        figures.put("n", 42L);
        figures.put("nan", Double.NaN);
        figures.put("inner", Map.of("x", 1));
        Result r = new Result("get-latency", "1 KiB", figures, Map.of("p50_ns", 10L), 3.0, "fast", true);
        String line = r.toJson();
        assertEquals("{\"name\":\"get-latency\",\"case\":\"1 KiB\",\"figures\":{\"s\":\"a \\\"b\\\"\\\\\\n\",\"d\":1235,"
            + "\"small\":0.0001235,\"n\":42,\"nan\":null,\"inner\":{\"x\":1}},\"baseline\":{\"p50_ns\":10},\"ratio\":3,"
            + "\"target\":\"fast\",\"met\":true}", line);
        JsonNode back = new ObjectMapper().readTree(line);
        assertEquals(figures.get("s"), back.path("figures").path("s").asText());
    }
}
