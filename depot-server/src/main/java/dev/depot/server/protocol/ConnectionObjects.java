package dev.depot.server.protocol;

import dev.depot.client.ObjectId;
import dev.depot.client.ObjectView;
import dev.depot.client.ObjectWriter;
import dev.depot.errors.ObjectExistsException;
import dev.depot.errors.ObjectMissingException;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;

/**
 * What one connection holds in the store on its peer's behalf: writers of objects it is creating and views
 * (pins) of objects it got. Owned by the connection's handler thread; {@link #closeAll} runs there when the
 * connection ends, however it ends, so a killed client's pins and unsealed objects come back at once.
 */
final class ConnectionObjects {
    private final Map<ObjectId, ObjectWriter> writers = new HashMap<>();
    /** One view per GET not yet released; the same object may be pinned several times. */
    private final Map<ObjectId, ArrayDeque<ObjectView>> views = new HashMap<>();
    private int viewCount;

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

    void addView(ObjectView v) {
        views.computeIfAbsent(v.id(), k -> new ArrayDeque<>()).add(v);
        viewCount++;
    }

    /** Releases one of this connection's pins of {@code id}. */
    void release(ObjectId id) {
        ArrayDeque<ObjectView> q = views.get(id);
        if (q == null) {
            throw new ObjectMissingException("this connection holds no view of object " + id + " to release");
        }
        ObjectView v = q.poll();
        if (q.isEmpty()) {
            views.remove(id);
        }
        viewCount--;
        v.close();
    }

    int viewCount() {
        return viewCount;
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
        for (ArrayDeque<ObjectView> q : views.values()) {
            for (ObjectView v : q) {
                try {
                    v.close();
                } catch (RuntimeException e) {
                    failure = addTo(failure, e);
                }
            }
        }
        views.clear();
        viewCount = 0;
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
