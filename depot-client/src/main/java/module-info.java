/**
 * Depot's Java API: {@code dev.depot.client} ({@code DepotClient}, {@code ObjectId}, views and writers), and,
 * through {@code requires transitive}, the exceptions in {@code dev.depot.errors}. The layouts, index, allocator
 * and store ({@code dev.depot.core.*}) stay internal.
 *
 * <p>{@code dev.depot.client.internal} (clients over a store their own process opened, and the store under a
 * client) is exported only to Depot's daemon and its tools.
 *
 * <p>The store uses the foreign-function API: run with {@code --enable-native-access=dev.depot.core}.
 */
@SuppressWarnings("module")  // the daemon and the tools are compiled after this module: "module not found" is expected
module dev.depot.client {
    requires transitive dev.depot.core;

    exports dev.depot.client;
    exports dev.depot.client.internal to dev.depot.server, dev.depot.bench, dev.depot.torture;
}
