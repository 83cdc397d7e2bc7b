package dev.depot.cli;

import dev.depot.client.DepotClient;
import dev.depot.client.ObjectInfo;
import dev.depot.client.ObjectState;
import dev.depot.client.WriterIdDescriptor;
import dev.depot.core.sys.ProcessIdentity;
import dev.depot.errors.DepotException;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

/**
 * For {@code depot doctor}: the objects whose id names a writer process that is gone ({@link WriterIdDescriptor}:
 * depot.dask.distributed's worker results and Dask DataFrame shuffle slices, kept, never evicted). Live workers
 * delete them as they go; when every worker died at once, nothing else would.
 */
final class DeadWriters {
    private final List<ObjectInfo> objects;
    private final TreeSet<Integer> pids = new TreeSet<>();

    private DeadWriters(List<ObjectInfo> objects) {
        this.objects = objects;
        for (ObjectInfo o : objects) {
            pids.add(ProcessIdentity.pidOf(WriterIdDescriptor.writerIdentity(o.id())));
        }
    }

    /** The sealed and spilled objects of dead writers in the store now. */
    static DeadWriters find(DepotClient client) {
        List<ObjectInfo> dead = new ArrayList<>();
        for (ObjectInfo o : client.list()) {
            long writer = WriterIdDescriptor.writerIdentity(o.id());
            if (writer != 0 && (o.state() == ObjectState.SEALED || o.state() == ObjectState.SPILLED)
                && !ProcessIdentity.isAlive(writer)) {
                dead.add(o);
            }
        }
        return new DeadWriters(dead);
    }

    boolean isEmpty() {
        return objects.isEmpty();
    }

    /** Deletes them (an object pinned by a reader goes when it lets go). */
    void delete(DepotClient client) {
        for (ObjectInfo o : objects) {
            try {
                client.delete(o.id());
            } catch (DepotException e) {
                // being deleted by a live worker's sweep right now
            }
        }
    }

    @Override
    public String toString() {
        long bytes = objects.stream().mapToLong(ObjectInfo::dataSize).sum();
        return objects.size() + " object(s), " + bytes + " bytes, of Dask worker results and shuffle slices whose"
            + " writer is gone (pid" + (pids.size() > 1 ? "s " : " ") + String.join(", ", pids.stream()
            .map(String::valueOf).toList()) + ")";
    }
}
