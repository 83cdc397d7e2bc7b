package dev.depot.client.testing;

import java.util.concurrent.TimeUnit;

/**
 * Waits, polling, for a condition that a daemon, another thread or a child process makes true (a reaper
 * round, an asynchronous close). Its deadline is far beyond any wait a sound build has: it only turns a lost
 * wake-up or a leak into a failure that names what did not happen, instead of a hang. Nothing asserts on time.
 */
public final class Eventually {
    /** How long a condition may take before the test fails: generous, so that a loaded CI machine passes. */
    public static final long DEADLINE_SECONDS = 30;
    private static final long POLL_MILLIS = 10;

    /** A condition whose check may throw (listing a directory, scraping an endpoint). */
    @FunctionalInterface
    public interface Condition {
        boolean holds() throws Exception;
    }

    private Eventually() {
    }

    /**
     * Returns once {@code condition} holds; fails naming {@code what} after {@link #DEADLINE_SECONDS}. An
     * exception thrown by the condition fails at once.
     */
    public static void await(String what, Condition condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(DEADLINE_SECONDS);
        while (!check(what, condition)) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("not true after " + DEADLINE_SECONDS + " s: " + what);
            }
            Thread.sleep(POLL_MILLIS);
        }
    }

    private static boolean check(String what, Condition condition) {
        try {
            return condition.holds();
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Exception e) {
            throw new AssertionError("checking " + what + " failed: " + e, e);
        }
    }
}
