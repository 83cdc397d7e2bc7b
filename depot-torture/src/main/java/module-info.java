/**
 * Depot's crash torture, protocol fuzzer and soak. They read what a client cannot, through packages exported to
 * them alone: the client table and recovery's findings ({@code dev.depot.client.internal},
 * {@code dev.depot.core.clients}, {@code dev.depot.core.store}), block sizes ({@code dev.depot.core.heap}) and
 * the control protocol's wire layouts ({@code dev.depot.server.protocol}).
 */
module dev.depot.torture {
    requires dev.depot.server;
    requires java.management;
}
