/** Depot's shuffle service: map outputs and partitions as objects of a Depot store ({@code dev.depot.shuffle}). */
module dev.depot.shuffle {
    requires transitive dev.depot.client;

    exports dev.depot.shuffle;
}
