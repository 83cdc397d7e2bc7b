/**
 * The Depot daemon: {@code DepotServer} (started by {@code depot serve}, or embedded in an application),
 * {@code ServerConfig}, and the metrics endpoint ({@code dev.depot.server.metrics}). The control protocol's wire
 * layouts ({@code dev.depot.server.protocol}) are exported only to the protocol fuzzer; the spiller and the tools
 * stay internal.
 *
 * <p>The daemon makes its own client, the embedding application's and one session per control connection
 * through {@code dev.depot.client.internal}, which its module exports to this one.
 */
// "module": dev.depot.torture is compiled after this module, so "module not found" is expected;
// "requires-automatic": the Prometheus text format has no module descriptor of its own
@SuppressWarnings({"module", "requires-automatic"})
module dev.depot.server {
    requires transitive dev.depot.client;
    requires jdk.net;
    requires io.prometheus.metrics.config;
    requires io.prometheus.metrics.model;
    requires io.prometheus.writer.text;

    exports dev.depot.server;
    exports dev.depot.server.metrics;
    exports dev.depot.server.protocol to dev.depot.torture;
}
