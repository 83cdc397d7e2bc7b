package dev.depot.bench;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializerProvider;
import com.fasterxml.jackson.databind.module.SimpleModule;
import com.fasterxml.jackson.databind.ser.std.StdSerializer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One measured case of a benchmark: its figures, the baseline measured in the same run, and how many times
 * better Depot is ({@code ratio} > 1 is better: baseline / depot for times, depot / baseline for rates).
 *
 * @param name     benchmark name, e.g. {@code get-latency}
 * @param label    which case of it, e.g. {@code 64 MiB} or {@code 2 clients}
 * @param figures  Depot's figures, unit in the key ({@code p50_ns}, {@code objects_per_s})
 * @param baseline the baseline's figures, same keys where they compare
 * @param ratio    how many times better than the baseline on the headline figure
 * @param target   the target, in words
 * @param met      whether this run met the target
 */
record Result(String name, String label, Map<String, Object> figures, Map<String, Object> baseline, double ratio,
              String target, boolean met) {
    /** Doubles go out with four significant digits and no exponent ({@link Units#round}); NaN and infinities as null. */
    private static final ObjectMapper JSON = new ObjectMapper().registerModule(
        new SimpleModule("depot-bench").addSerializer(Double.class, new RoundedDoubleSerializer()));

    /** One JSON object, no newline. */
    String toJson() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("name", name);
        m.put("case", label);
        m.put("figures", figures);
        m.put("baseline", baseline);
        m.put("ratio", ratio);
        m.put("target", target);
        m.put("met", met);
        try {
            return JSON.writeValueAsString(m);
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Figures as {@code key=value} pairs for the human table. */
    static String pairs(Map<String, Object> m) {
        StringBuilder b = new StringBuilder();
        for (Map.Entry<String, Object> e : m.entrySet()) {
            if (!b.isEmpty()) {
                b.append(' ');
            }
            b.append(e.getKey()).append('=').append(Units.plain(e.getValue()));
        }
        return b.toString();
    }

    private static final class RoundedDoubleSerializer extends StdSerializer<Double> {
        RoundedDoubleSerializer() {
            super(Double.class);
        }

        @Override
        public void serialize(Double d, JsonGenerator gen, SerializerProvider provider) throws IOException {
            if (Double.isFinite(d)) {
                gen.writeNumber(Units.round(d));
            } else {
                gen.writeNull();
            }
        }
    }
}
