package dev.depot.core.store;

import dev.depot.core.clients.ClientTableDescriptor;
import dev.depot.core.sys.ProcessIdentity;
import dev.depot.errors.StoreFormatException;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Examines a store and repairs what is safe to repair: reclaims dead clients, rebuilds the heap's derived
 * metadata from the index, and drops index entries that point outside the heap or overlap another object.
 * A store whose header is unreadable (bad magic, other major version, truncated) is reported, not repaired:
 * its region table cannot be trusted, so the only safe repair is to remove and recreate it.
 */
public final class Doctor {
    /** What was found; {@code repaired} lists what was done about it; {@code fatal} when the header is bad. */
    public record Report(List<String> findings, List<String> repaired, boolean fatal) {
        public boolean healthy() {
            return findings.isEmpty();
        }
    }

    private Doctor() {
    }

    /**
     * Examines the store in {@code dir}; with {@code repair}, repairs what the daemon's recovery repairs (and
     * says so only when something was wrong).
     */
    public static Report examine(Path dir, boolean repair) throws IOException {
        List<String> findings = new ArrayList<>();
        List<String> repaired = new ArrayList<>();
        Store store;
        try {
            store = Store.open(dir, ClientTableDescriptor.KIND_JAVA);
        } catch (StoreFormatException e) {
            findings.add(e.getMessage());
            return new Report(findings, repaired, true);
        }
        try (store) {
            var clients = store.clients;
            for (int c = 0; c < clients.maxClients(); c++) {
                long identity = clients.identity(c);
                if (identity != 0 && c != store.me() && !ProcessIdentity.isAlive(identity)) {
                    findings.add("client slot " + c + " belongs to pid " + ProcessIdentity.pidOf(identity)
                        + ", which is gone");
                }
            }
            if (!repair) {
                findings.addAll(inspect(store));
                return new Report(findings, repaired, false);
            }
            // Recovery first: it drops corrupt entries, which settling dead clients would otherwise trip over.
            List<String> heap = new ArrayList<>();
            store.heapLock.lockAndRecover();
            try {
                heap.addAll(store.allocator.check());
            } finally {
                store.heapLock.release();
            }
            List<String> dropped = store.recover();
            findings.addAll(heap);
            findings.addAll(dropped);
            if (!heap.isEmpty() || !dropped.isEmpty()) {
                repaired.add("rebuilt the heap metadata from the index" + (dropped.isEmpty() ? ""
                    : " and dropped " + dropped.size() + " corrupt entr" + (dropped.size() == 1 ? "y" : "ies")));
            }
            int reaped = store.reapDeadClients();
            if (reaped > 0) {
                repaired.add("reclaimed " + reaped + " dead client(s)");
            }
        }
        return new Report(findings, repaired, false);
    }

    /**
     * Everything recovery would repair, found without changing anything: entries it would drop, and heap
     * metadata that disagrees with itself. A lock left by a dead holder is reported and left for the next holder
     * to rebuild (marked so), not rebuilt here.
     */
    private static List<String> inspect(Store store) {
        List<String> found = new ArrayList<>();
        if (store.lock.acquire(store.me())) {
            found.add("the allocator lock was left by a process that died holding it; the next change (or"
                + " `depot doctor`) rebuilds the heap metadata");
            store.lock.releaseForRebuild(store.me());
            return found;
        }
        try {
            found.addAll(new Recovery(store).inspectUnderLock());
            found.addAll(store.allocator.check());
        } finally {
            store.heapLock.release();
        }
        return found;
    }
}
