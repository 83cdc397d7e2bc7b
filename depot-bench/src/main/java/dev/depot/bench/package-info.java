/** Benchmarks (each with a baseline measured in the same run) and the demo. */
package dev.depot.bench;
