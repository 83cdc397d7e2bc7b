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
            store.lockAndRecover();
            try {
                findings.addAll(store.allocator.check());
            } finally {
                store.releaseLock();
            }
            if (repair) {
                int reaped = store.reapDeadClients();
                if (reaped > 0) {
                    repaired.add("reclaimed " + reaped + " dead client(s)");
                }
                List<String> dropped = store.recover();
                findings.addAll(dropped);
                repaired.add("rebuilt the heap metadata from the index" + (dropped.isEmpty() ? ""
                    : " and dropped " + dropped.size() + " corrupt entr" + (dropped.size() == 1 ? "y" : "ies")));
            }
        }
        return new Report(findings, repaired, false);
    }
}
