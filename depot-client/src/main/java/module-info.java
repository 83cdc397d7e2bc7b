/**
 * Depot's Java API: {@code dev.depot.client} ({@code DepotClient}, {@code ObjectId}, views and writers), and,
 * through {@code requires transitive}, the exceptions in {@code dev.depot.errors}. Nothing else is exported:
 * the layouts, index, allocator and store ({@code dev.depot.core.*}) stay internal.
 *
 * <p>The store uses the foreign-function API: run with {@code --enable-native-access=dev.depot.core}.
 */
module dev.depot.client {
    requires transitive dev.depot.core;

    exports dev.depot.client;
}
