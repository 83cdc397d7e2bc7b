package dev.depot.spark;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.spark.TaskContext;

/**
 * What each task holds in Depot (readers, hence pins), so that it is all released when the task ends, successful
 * or not: by a task completion listener, and again by {@link DepotPlugin}'s executor hooks, which run on the task's
 * thread after it has finished. Closing is idempotent.
 */
final class TaskPins {
    private static final Map<Thread, List<AutoCloseable>> BY_THREAD = new ConcurrentHashMap<>();

    private TaskPins() {
    }

    /** Registers {@code resource} with the current task (no-op outside a task). */
    static void register(AutoCloseable resource) {
        TaskContext task = TaskContext.get();
        if (task == null) {
            return;
        }
        Thread thread = Thread.currentThread();
        List<AutoCloseable> held = BY_THREAD.computeIfAbsent(thread, t -> new ArrayList<>());
        synchronized (held) {
            if (held.isEmpty()) {
                task.addTaskCompletionListener((TaskContext ignored) -> releaseHeldBy(thread));
            }
            held.add(resource);
        }
    }

    /** Releases what the task running on the current thread still holds. */
    static void releaseCurrentTask() {
        releaseHeldBy(Thread.currentThread());
    }

    private static void releaseHeldBy(Thread thread) {
        List<AutoCloseable> held = BY_THREAD.remove(thread);
        if (held == null) {
            return;
        }
        List<AutoCloseable> copy;
        synchronized (held) {
            copy = new ArrayList<>(held);
        }
        RuntimeException failure = null;
        for (AutoCloseable r : copy) {
            try {
                r.close();
            } catch (Exception e) {
                if (failure == null) {
                    failure = new IllegalStateException("releasing a task's Depot pins failed", e);
                } else {
                    failure.addSuppressed(e);
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
    }
}
