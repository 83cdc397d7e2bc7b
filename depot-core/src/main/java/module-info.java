/**
 * Depot's shared-memory layouts and algorithms. Its one public API package is {@code dev.depot.errors}, the
 * exceptions every part of Depot throws (they live here because the store throws them). Each internal package
 * is exported only to the modules whose main code uses it:
 *
 * <ul>
 *   <li>{@code dev.depot.client}, the API, maps and uses the store;</li>
 *   <li>{@code dev.depot.server}, the daemon, creates, recovers and reaps it, and spills objects;</li>
 *   <li>{@code dev.depot.cli} sizes new stores and reads them for {@code depot doctor};</li>
 *   <li>{@code dev.depot.shuffle} names the processes that own shuffles ({@code sys});</li>
 *   <li>{@code dev.depot.bench} and {@code dev.depot.torture} measure and check the layouts and take their
 *       stores' directories from {@code ScratchDirectory}.</li>
 * </ul>
 *
 * A program on the module path that {@code requires dev.depot.client} reaches none of them. depot-spark and
 * depot-bench-spark run on Spark's class path, where module boundaries do not apply.
 */
@SuppressWarnings("module")  // the modules named below are compiled after this one: "module not found" is expected
module dev.depot.core {
    exports dev.depot.errors;

    exports dev.depot.core.clients to dev.depot.client, dev.depot.server, dev.depot.cli, dev.depot.torture;
    exports dev.depot.core.heap to dev.depot.server, dev.depot.bench, dev.depot.torture;
    exports dev.depot.core.index to dev.depot.client, dev.depot.server, dev.depot.bench;
    exports dev.depot.core.memory to dev.depot.server, dev.depot.bench;
    exports dev.depot.core.notify to dev.depot.client;
    exports dev.depot.core.store to dev.depot.client, dev.depot.server, dev.depot.cli, dev.depot.bench,
        dev.depot.torture;
    exports dev.depot.core.sys to dev.depot.client, dev.depot.server, dev.depot.cli, dev.depot.shuffle,
        dev.depot.torture;
}
