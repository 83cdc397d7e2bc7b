package dev.depot.bench.sort;

import java.io.IOException;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * What a phase of a sort worker cost besides its thread's CPU time: the whole process's CPU time (JIT compiler
 * and GC threads included), the JIT's compile time, the GC's time and the thread's page faults. Read at each
 * phase boundary; the differences tell where wall time went that the phase's own CPU time does not show.
 */
final class PhaseCosts {
    /** The counters, in the order of {@link #sample}: each reported per phase as {@code PHASE_NAME}. */
    static final String[] NAMES = {"proc_cpu_ms", "jit_ms", "gc_ms", "minflt", "majflt", "runq_ms"};

    private static final com.sun.management.OperatingSystemMXBean OS =
        (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();

    private PhaseCosts() {
    }

    static long[] sample() {
        long gc = 0;
        for (GarbageCollectorMXBean b : ManagementFactory.getGarbageCollectorMXBeans()) {
            gc += Math.max(0, b.getCollectionTime());
        }
        long[] faults = threadFaults();
        return new long[] {OS.getProcessCpuTime() / 1_000_000, ManagementFactory.getCompilationMXBean().getTotalCompilationTime(),
            gc, faults[0], faults[1], runQueueMillis()};
    }

    /**
     * Milliseconds the calling thread has been runnable but waiting for a core ({@code /proc/thread-self/schedstat},
     * second field): with its CPU time, what of a phase's wall time was not spent blocked.
     */
    private static long runQueueMillis() {
        try {
            return Long.parseLong(Files.readString(Path.of("/proc/thread-self/schedstat")).trim().split(" ")[1]) / 1_000_000;
        } catch (IOException | RuntimeException e) {
            return 0;
        }
    }

    /** Minor and major page faults of the calling thread ({@code /proc/thread-self/stat} fields 10 and 12). */
    private static long[] threadFaults() {
        try {
            String stat = Files.readString(Path.of("/proc/thread-self/stat"));
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");  // f[0] is field 3, the state
            return new long[] {Long.parseLong(f[7]), Long.parseLong(f[9])};
        } catch (IOException | RuntimeException e) {
            return new long[] {0, 0};
        }
    }
}
