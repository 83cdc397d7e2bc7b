package dev.depot.cli;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.util.List;
import java.util.Map;

/**
 * Strict JSON reading for the tests, by Jackson: objects become {@code Map<String, Object>} (in order), arrays
 * {@code List<Object>}, integers {@code Long}, other numbers {@code Double}. Malformed text, trailing text or a
 * duplicate key fails with IllegalArgumentException, so a test that parses the CLI's output also checks it.
 */
final class JsonText {
    private static final ObjectMapper STRICT = JsonMapper.builder()
        .enable(DeserializationFeature.USE_LONG_FOR_INTS, DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
        .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION)
        .build();

    private JsonText() {
    }

    static Object parse(String text) {
        try {
            return STRICT.readValue(text, Object.class);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("not one valid JSON text: " + e.getOriginalMessage() + ": " + text, e);
        }
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> parseObject(String text) {
        return (Map<String, Object>) parse(text);
    }

    @SuppressWarnings("unchecked")
    static List<Map<String, Object>> parseArrayOfObjects(String text) {
        return (List<Map<String, Object>>) parse(text);
    }
}
