package dev.depot.client.internal;

import dev.depot.client.DepotClient;
import dev.depot.core.store.Store;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.invoke.VarHandle;

/**
 * Clients over a {@link Store} that their process opened itself, and the store under a client: what Depot's
 * daemon and tools need from this module beyond its API. The module exports this package only to them
 * ({@code dev.depot.server}, {@code dev.depot.bench}, {@code dev.depot.torture}); a program that
 * {@code requires dev.depot.client} sees {@link DepotClient} alone.
 *
 * <ul>
 *   <li>{@link #over}: the daemon's own client, and an embedding application's client over the store its
 *       in-process daemon opened ({@code DepotServer.embedded}).</li>
 *   <li>{@link #session}: one client per control connection, in a slot of the client table of its own, so that
 *       what a connection pins or creates is released when it ends.</li>
 *   <li>{@link #storeOf}: the store under a client, for the tools that inspect the client table, the index and
 *       the heap.</li>
 * </ul>
 *
 * <p>{@link DepotClient} keeps its constructor and its store private and knows nothing of this package (the
 * dependency goes one way); this class reaches them with a private lookup, which a module grants its own code.
 */
public final class StoreClients {
    private static final MethodHandle NEW_CLIENT;
    private static final VarHandle STORE;

    static {
        try {
            MethodHandles.Lookup client = MethodHandles.privateLookupIn(DepotClient.class, MethodHandles.lookup());
            NEW_CLIENT = client.findConstructor(DepotClient.class,
                MethodType.methodType(void.class, Store.class, AutoCloseable.class));
            STORE = client.findVarHandle(DepotClient.class, "store", Store.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private StoreClients() {
    }

    /**
     * A client over {@code store}, an open store of this process. Closing the client closes {@code owner} (when
     * not null), then the store.
     */
    public static DepotClient over(Store store, AutoCloseable owner) {
        try {
            return (DepotClient) NEW_CLIENT.invokeExact(store, owner);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("DepotClient's constructor threw " + t, t);
        }
    }

    /**
     * A client in a session of its own over {@code store} ({@link Store#openSession}): a slot of the client table
     * registered as {@code kind}, its own pins. Closing the client gives the slot back; the store stays open.
     */
    public static DepotClient session(Store store, int kind) {
        Store session = store.openSession(kind);
        try {
            return over(session, null);
        } catch (RuntimeException | Error e) {
            session.close();
            throw e;
        }
    }

    /** The store under {@code client}. */
    public static Store storeOf(DepotClient client) {
        return (Store) STORE.get(client);
    }
}
