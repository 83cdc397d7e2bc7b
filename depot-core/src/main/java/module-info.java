/**
 * Depot's shared-memory layouts and algorithms. Its one public API package is {@code dev.depot.errors}, the
 * exceptions every part of Depot throws (they live here because the store throws them); the rest is exported
 * only to {@code dev.depot.client}, so a program on the module path cannot reach the store's internals.
 * (Depot's own daemon, CLI and tools run on the class path, where module boundaries do not apply.)
 */
@SuppressWarnings("module")  // dev.depot.client is compiled after this module: "module not found" is expected
module dev.depot.core {
    exports dev.depot.errors;
    exports dev.depot.core.clients to dev.depot.client;
    exports dev.depot.core.index to dev.depot.client;
    exports dev.depot.core.notify to dev.depot.client;
    exports dev.depot.core.store to dev.depot.client;
    exports dev.depot.core.sys to dev.depot.client;
}
