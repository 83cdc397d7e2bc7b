package dev.depot.server.protocol;

import dev.depot.client.DepotClient;
import dev.depot.client.ObjectId;
import dev.depot.client.ObjectView;
import dev.depot.errors.DepotException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * Waits for objects to be sealed on platform threads. The wait is a futex system call made through FFM, which
 * would pin a connection's virtual thread to its carrier for the whole wait; a few waiting clients could then
 * stall every other connection. The connection thread parks on the future instead. The view is handed over
 * through the future (a happens-before edge) and used by the connection thread alone from then on.
 */
final class SealWaiter implements AutoCloseable {
    private final ExecutorService threads = Executors.newCachedThreadPool(
        Thread.ofPlatform().daemon().name("depot-seal-wait-", 0).factory());

    SealWaiter() {
    }

    /** Gets {@code id} through {@code client}, waiting at most {@code millis} (> 0); null when still missing. */
    ObjectView await(DepotClient client, ObjectId id, long millis) throws InterruptedException {
        Future<ObjectView> f = threads.submit(() -> client.tryGet(id, millis));
        try {
            return f.get();
        } catch (InterruptedException e) {
            // The wait ends within millis; take the view back if it arrives so its pin is not lost.
            threads.execute(() -> closeQuietly(f));
            throw e;
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            throw new DepotException("waiting for object " + id + " failed: " + e.getCause(), e.getCause());
        }
    }

    private static void closeQuietly(Future<ObjectView> f) {
        try {
            ObjectView v = f.get();
            if (v != null) {
                v.close();
            }
        } catch (InterruptedException | ExecutionException | RuntimeException ignored) {
            // nothing was pinned
        }
    }

    @Override
    public void close() {
        threads.shutdown();
        try {
            threads.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
