package dev.depot.client.testing;

import dev.depot.client.DepotClient;
import dev.depot.client.internal.StoreClients;
import dev.depot.core.store.Store;

/**
 * The tests' way to {@link StoreClients}: a client over a store a test created ({@link TempStore#create}), and
 * the store under a client, for tests that check the client table, the header or recovery.
 */
public final class ClientStores {
    private ClientStores() {
    }

    /** A client over {@code store}; closing it closes the store. */
    public static DepotClient over(Store store) {
        return StoreClients.over(store, null);
    }

    /** The store under {@code client}. */
    public static Store storeOf(DepotClient client) {
        return StoreClients.storeOf(client);
    }
}
