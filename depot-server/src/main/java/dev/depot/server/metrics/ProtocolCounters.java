package dev.depot.server.metrics;

import dev.depot.errors.ErrorCode;
import java.util.Comparator;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * What the daemon's control protocol has served since it started: requests by type, error replies by request
 * type and error code, and seal waits (a GET that found its object unsealed and waited) with their wake-ups (the
 * object was sealed in time). Counted by every connection thread at once, read by the metrics endpoint; counts
 * only grow.
 */
public final class ProtocolCounters {
    /** A request type and the error code of the reply. */
    public record ErrorKey(String type, String code) {
    }

    private static final String UNKNOWN = "unknown";

    private final Map<String, LongAdder> requests = new ConcurrentHashMap<>();
    /**
     * The adder of each well-formed type name as it arrives ({@code "PUT"}, not its label): one map lookup per
     * request instead of a label computation. Only names that {@link #typeLabel} keeps go in, and the protocol
     * has a fixed set of those, so bad input cannot grow it.
     */
    private final Map<String, LongAdder> requestsByName = new ConcurrentHashMap<>();
    private final Map<ErrorKey, LongAdder> errors = new ConcurrentHashMap<>();
    private final LongAdder waits = new LongAdder();
    private final LongAdder wakeups = new LongAdder();

    /** Counters at zero, for a daemon that starts serving. */
    public ProtocolCounters() {
    }

    /**
     * A request of {@code typeName} (as in {@code docs/PROTOCOL.md}, e.g. {@code GET}) arrived. A type the
     * protocol does not have ({@code "type N"}) counts as {@code unknown}, so bad input cannot grow the label set.
     */
    public void request(String typeName) {
        LongAdder adder = requestsByName.get(typeName);
        if (adder == null) {
            String label = typeLabel(typeName);
            adder = requests.computeIfAbsent(label, k -> new LongAdder());
            if (!label.equals(UNKNOWN)) {
                requestsByName.putIfAbsent(typeName, adder);
            }
        }
        adder.increment();
    }

    /** The request of {@code typeName} was answered with error {@code code}. */
    public void error(String typeName, ErrorCode code) {
        errors.computeIfAbsent(new ErrorKey(typeLabel(typeName), code.name().toLowerCase(Locale.ROOT)),
            k -> new LongAdder()).increment();
    }

    public void waitStarted() {
        waits.increment();
    }

    public void wokeUp() {
        wakeups.increment();
    }

    /** Requests by type (lower case: {@code get}, {@code create}, ...). */
    public Map<String, Long> requests() {
        return snapshot(requests);
    }

    /** Error replies by request type and error code (lower case: {@code object_missing}). */
    public Map<ErrorKey, Long> errors() {
        return snapshot(errors);
    }

    public long waits() {
        return waits.sum();
    }

    public long wakeups() {
        return wakeups.sum();
    }

    private static <K> Map<K, Long> snapshot(Map<K, LongAdder> m) {
        Map<K, Long> out = new TreeMap<>(Comparator.comparing(Object::toString));
        m.forEach((k, v) -> out.put(k, v.sum()));
        return out;
    }

    /** {@code name} in lower case when it is made of capital letters and underscores, else {@code unknown}. */
    private static String typeLabel(String name) {
        if (name.isEmpty()) {
            return UNKNOWN;
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if ((c < 'A' || c > 'Z') && c != '_') {
                return UNKNOWN;
            }
        }
        return name.toLowerCase(Locale.ROOT);
    }
}
