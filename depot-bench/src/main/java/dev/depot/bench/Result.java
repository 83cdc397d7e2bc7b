package dev.depot.bench;

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
        return Json.write(m);
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
}
