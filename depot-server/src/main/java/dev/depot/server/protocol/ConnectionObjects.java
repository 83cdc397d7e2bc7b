package dev.depot.server.protocol;

import dev.depot.client.ObjectId;
import dev.depot.client.ObjectView;
import dev.depot.client.ObjectWriter;
import dev.depot.errors.ObjectExistsException;
import dev.depot.errors.ObjectMissingException;
import java.util.HashMap;
import java.util.Map;

/**
 * What one connection holds in the store on its peer's behalf: writers of objects it is creating and views
 * (pins) of objects it got. Owned by the connection's handler thread; {@link #closeAll} runs there when the
 * connection ends, however it ends, so a killed client's pins and unsealed objects come back at once.
 */
final class ConnectionObjects {
    private final Map<ObjectId, ObjectWriter> writers = new HashMap<>();
    /**
     * One view per GET (or found GET_MANY entry) not yet released, by the handle its reply carried. The same
     * object may be pinned several times, even in different generations (deleted and created again in
     * between): the handle says which pin a RELEASE ends.
     */
    private final Map<Long, ObjectView> views = new HashMap<>();
    private long lastHandle;

    void addWriter(ObjectWriter w) {
        if (writers.putIfAbsent(w.id(), w) != null) {
            w.abort();
            throw new ObjectExistsException("this connection is creating object " + w.id() + " already");
        }
    }

    /** Removes and returns this connection's writer of {@code id}. */
    ObjectWriter takeWriter(ObjectId id) {
        ObjectWriter w = writers.remove(id);
        if (w == null) {
            throw new ObjectMissingException("this connection is not creating object " + id
                + "; only the connection that created an object can seal or abort it");
        }
        return w;
    }

    /** Holds {@code v} for the connection; returns its handle (never 0). */
    long addView(ObjectView v) {
        long handle = ++lastHandle;
        views.put(handle, v);
        return handle;
    }

    /** Releases exactly the pin that {@code handle} names, which must be a view of {@code id}. */
    void release(ObjectId id, long handle) {
        ObjectView v = views.get(handle);
        if (v == null || !v.id().equals(id)) {
            throw new ObjectMissingException("this connection holds no view of object " + id + " with pin handle "
                + handle + (v == null ? "" : " (that handle pins object " + v.id() + ")")
                + "; release each view once, with the handle its GET replied with");
        }
        views.remove(handle);
        v.close();
    }

    int viewCount() {
        return views.size();
    }

    int writerCount() {
        return writers.size();
    }

    /**
     * Aborts every writer and closes every view. Every one is attempted; the first failure is thrown with the
     * others suppressed.
     */
    void closeAll() {
        RuntimeException failure = null;
        for (ObjectWriter w : writers.values()) {
            try {
                w.abort();
            } catch (RuntimeException e) {
                failure = addTo(failure, e);
            }
        }
        writers.clear();
        for (ObjectView v : views.values()) {
            try {
                v.close();
            } catch (RuntimeException e) {
                failure = addTo(failure, e);
            }
        }
        views.clear();
        if (failure != null) {
            throw failure;
        }
    }

    private static RuntimeException addTo(RuntimeException first, RuntimeException next) {
        if (first == null) {
            return next;
        }
        first.addSuppressed(next);
        return first;
    }
}
