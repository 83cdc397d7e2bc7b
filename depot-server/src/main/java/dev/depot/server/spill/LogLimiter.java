package dev.depot.server.spill;

import java.util.HashMap;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Logs at most one line per condition per {@link #INTERVAL_NANOS}: a spiller that fails the same way over and
 * over (a full disk, a store with no room) says so once, then how many times it happened since, instead of
 * flooding the log. Used by the spiller thread only.
 */
final class LogLimiter {
    static final long INTERVAL_NANOS = 10_000_000_000L;

    private record Seen(long loggedAt, int suppressed) {
    }

    private final Consumer<String> log;
    private final Map<String, Seen> seen = new HashMap<>();

    LogLimiter(Consumer<String> log) {
        this.log = log;
    }

    /** Logs {@code message} unless {@code condition} was logged within the interval (then counts it). */
    void log(String condition, String message) {
        long now = System.nanoTime();
        Seen s = seen.get(condition);
        if (s != null && now - s.loggedAt() < INTERVAL_NANOS) {
            seen.put(condition, new Seen(s.loggedAt(), s.suppressed() + 1));
            return;
        }
        int suppressed = s == null ? 0 : s.suppressed();
        log.accept(suppressed == 0 ? message
            : message + " (" + suppressed + " more time(s) since the last such line, not logged)");
        seen.put(condition, new Seen(now, 0));
    }
}
