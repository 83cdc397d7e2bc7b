/**
 * A shuffle service over Depot: map tasks write each reduce partition's slice straight into shared-memory
 * objects, reduce tasks read every map's slice in place. Entry point: {@link dev.depot.shuffle.Shuffle}.
 * The sort demo ({@code dev.depot.bench.sort}, module depot-bench) sorts numbers by a sample sort through it.
 */
package dev.depot.shuffle;
