package dev.depot.client.testing;

import dev.depot.core.clients.ClientTableDescriptor;
import dev.depot.core.store.AllocationLock;
import dev.depot.core.store.Store;
import java.nio.file.Path;

/**
 * A child process that opens the store in {@code args[0]}, takes its allocator lock, prints {@code locked PID}
 * and then holds it until killed: the test stops it with SIGSTOP to play a frozen lock holder.
 */
public final class LockHolder {
    private LockHolder() {
    }

    public static void main(String[] args) throws Exception {
        Store store = Store.open(Path.of(args[0]), ClientTableDescriptor.KIND_JAVA);
        new AllocationLock(store.header(), store.clients()).acquire(store.clientSlot());
        System.out.println("locked " + ProcessHandle.current().pid());
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
