package dev.depot.core.testing;

import static org.junit.jupiter.api.Assertions.fail;

import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * Spins until a condition another thread or process makes true. JUnit's {@code @Timeout} interrupts the test
 * thread, which a bare {@code Thread.onSpinWait()} loop never notices: this one looks, and has a deadline of its
 * own, so that a broken build fails instead of hanging. Nothing asserts on time.
 */
public final class SpinUntil {
    /** Far beyond any wait a sound build has; only a lost wake-up or a missed count reaches it. */
    public static final long DEADLINE_SECONDS = 20;

    private SpinUntil() {
    }

    /** Returns once {@code condition} holds; fails naming {@code what} at the deadline or on an interrupt. */
    public static void spinUntil(BooleanSupplier condition, String what) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(DEADLINE_SECONDS);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline || Thread.currentThread().isInterrupted()) {
                fail(what + " did not happen within " + DEADLINE_SECONDS + " s");
            }
            Thread.onSpinWait();
        }
    }
}
