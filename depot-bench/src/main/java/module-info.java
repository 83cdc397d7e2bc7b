/**
 * Depot's benchmarks, demo and sort demo, run by {@code depot bench}, {@code demo} and {@code sort} (by class
 * name, from a class-path jar) and by {@code scripts/bench}. The allocation bench reads the store's header and
 * index ({@code dev.depot.core.*}, {@code dev.depot.client.internal}, exported to it). JMH is optional: only the
 * benchmarks in {@code dev.depot.bench.jmh} use it.
 */
@SuppressWarnings("requires-automatic")  // HdrHistogram and JMH have no module descriptor of their own
module dev.depot.bench {
    requires com.fasterxml.jackson.databind;
    requires dev.depot.server;
    requires dev.depot.shuffle;
    requires HdrHistogram;
    requires jdk.management;
    requires static jmh.core;
}
