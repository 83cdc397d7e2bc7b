package dev.depot.core.testing;

import java.io.IOException;

/** Identities of processes that have exited and been reaped. */
public final class DeadProcess {
    private DeadProcess() {
    }

    /** Runs {@code true}, waits for it, and returns its pid (now free). */
    public static long reapedPid() throws IOException, InterruptedException {
        Process p = new ProcessBuilder("true").start();
        try {
            p.waitFor();
            return p.pid();
        } finally {
            p.destroyForcibly();
        }
    }

    /**
     * A packed identity ({@code pid << 32 | start ticks}) of a reaped child with arbitrary start ticks: no running
     * process has it (even if the pid is reused, the start time differs).
     */
    public static long identity() throws IOException, InterruptedException {
        return (reapedPid() << 32) | 12_345L;
    }
}
