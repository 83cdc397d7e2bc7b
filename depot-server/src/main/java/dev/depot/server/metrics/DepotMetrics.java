package dev.depot.server.metrics;

import dev.depot.client.StoreStats;
import dev.depot.core.store.OperationCounts;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.CounterSnapshot.CounterDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot.GaugeDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import io.prometheus.metrics.model.snapshots.Unit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The daemon's figures as Prometheus metric snapshots, taken at each scrape: the store's figures from shared
 * memory ({@link StoreStats}, the same numbers as {@code depot stat --json}), and what the control protocol
 * served ({@link ProtocolCounters}). The names are listed in {@code docs/CLI.md}; counters get their
 * {@code _total} suffix from the text format writer. A running daemon gives its {@link Source} with
 * {@code DepotServer.metricsSource()}.
 */
public final class DepotMetrics {
    /** What one scrape reads. */
    public interface Source {
        StoreStats stats();

        /** Control-protocol connections (sessions) open now. */
        int openSessions();

        /** Control-protocol connections accepted since the daemon started. */
        long sessionsOpened();

        ProtocolCounters protocol();

        /** Every client's operations, in-process ones included (the client slots' counters). */
        @SuppressWarnings("exports")  // core's record: the daemon implements Source, and core exports it to the CLI
        OperationCounts operations();

        /** Subscribers to the store's object events now. */
        int subscribers();
    }

    private DepotMetrics() {
    }

    /** The metrics of one scrape (for {@link MetricsServer}). */
    static MetricSnapshots snapshot(Source source) {
        StoreStats s = source.stats();
        ProtocolCounters p = source.protocol();
        List<MetricSnapshot> m = new ArrayList<>();
        m.add(bytes("depot_capacity_bytes", "heap size of the store", s.capacityBytes()));
        m.add(bytes("depot_used_bytes", "heap bytes in use, with block headers and alignment", s.usedBytes()));
        m.add(bytes("depot_free_bytes", "heap bytes free (capacity - used)", s.freeBytes()));
        m.add(bytes("depot_pinned_bytes", "data bytes of objects with open views (not evictable)", s.pinnedBytes()));
        m.add(bytes("depot_unsealed_bytes", "data bytes of objects being created", s.unsealedBytes()));
        if (s.largestFreeBlock() >= 0) {  // negative: unknown, the allocator lock was held
            m.add(bytes("depot_largest_free_block_bytes", "largest contiguous free heap block", s.largestFreeBlock()));
            m.add(gauge("depot_fragmentation_ratio", Unit.RATIO, "1 - largest free block / free bytes",
                s.fragmentation()));
        }
        m.add(bytes("depot_kept_bytes", "data bytes of KEEP objects in memory", s.keptBytes()));
        m.add(gauge("depot_kept_objects", null, "KEEP objects in memory", s.keptObjects()));
        m.add(bytes("depot_spilled_bytes", "data bytes of KEEP objects spilled to disk", s.spilledBytes()));
        m.add(gauge("depot_spilled_objects", null, "KEEP objects spilled to disk", s.spilledObjects()));
        m.add(counter("depot_spills", null, "objects spilled to disk since the store was created", s.spillCount()));
        m.add(counter("depot_restores", null, "spilled objects restored into memory since the store was created",
            s.restoreCount()));
        m.add(counter("depot_spill_failures", null, "spill files the daemon could not write (full or failing disk) plus"
            + " spilled objects it could not restore (damaged file, or no room), since the store was created",
            s.spillFailureCount()));
        m.add(gauge("depot_objects", null, "objects in the index, in any state", s.objectCount()));
        m.add(gauge("depot_sealed_objects", null, "sealed objects", s.sealedCount()));
        m.add(gauge("depot_max_objects", null, "objects the index can hold", s.maxObjects()));
        m.add(gauge("depot_clients", null, "processes registered in the client table (the daemon included)",
            s.clientCount()));
        m.add(gauge("depot_sessions", null, "control-protocol connections open now", source.openSessions()));
        m.add(counter("depot_sessions_opened", null, "control-protocol connections accepted", source.sessionsOpened()));
        m.add(counter("depot_evictions", null, "objects evicted since the store was created", s.evictionCount()));
        m.add(counter("depot_evicted", Unit.BYTES, "bytes evicted since the store was created", s.evictedBytes()));
        OperationCounts ops = source.operations();
        m.add(counter("depot_creates", null, "objects created by any client (in-process Java creates, and the"
            + " daemon's for control-protocol clients)", ops.creates()));
        m.add(counter("depot_gets", null, "objects pinned by gets of any client (socket-free Java and Python gets"
            + " included)", ops.gets()));
        m.add(counter("depot_deletes", null, "objects deleted by any client", ops.deletes()));
        m.add(counter("depot_waits", null, "gets of any client that went to sleep waiting for a seal", ops.waits()));
        m.add(counter("depot_wakeups", null, "seals that woke sleeping gets", ops.wakeups()));
        m.add(gauge("depot_subscribers", null, "subscriptions to the store's object events (of 16)",
            source.subscribers()));
        m.add(counter("depot_seal_waits", null, "control-protocol gets that waited for a seal", p.waits()));
        m.add(counter("depot_seal_wakeups", null, "control-protocol seal waits that ended with the object sealed",
            p.wakeups()));
        m.add(requests(p.requests()));
        m.add(errors(p.errors()));
        return new MetricSnapshots(m);
    }

    private static MetricSnapshot bytes(String name, String help, long value) {
        return gauge(name, Unit.BYTES, help, value);
    }

    private static MetricSnapshot gauge(String name, Unit unit, String help, double value) {
        GaugeSnapshot.Builder b = GaugeSnapshot.builder().name(name).help(help)
            .dataPoint(GaugeDataPointSnapshot.builder().value(value).build());
        return (unit == null ? b : b.unit(unit)).build();
    }

    private static MetricSnapshot counter(String name, Unit unit, String help, long value) {
        CounterSnapshot.Builder b = CounterSnapshot.builder().name(name).help(help)
            .dataPoint(CounterDataPointSnapshot.builder().value(value).build());
        return (unit == null ? b : b.unit(unit)).build();
    }

    private static MetricSnapshot requests(Map<String, Long> byType) {
        CounterSnapshot.Builder b = CounterSnapshot.builder().name("depot_requests")
            .help("control-protocol requests by type (create, get, delete, ...)");
        byType.forEach((type, n) -> b.dataPoint(
            CounterDataPointSnapshot.builder().labels(Labels.of("type", type)).value(n).build()));
        return b.build();
    }

    private static MetricSnapshot errors(Map<ProtocolCounters.ErrorKey, Long> byKey) {
        CounterSnapshot.Builder b = CounterSnapshot.builder().name("depot_request_errors")
            .help("control-protocol error replies by request type and error code");
        byKey.forEach((k, n) -> b.dataPoint(CounterDataPointSnapshot.builder()
            .labels(Labels.of("type", k.type(), "code", k.code())).value(n).build()));
        return b.build();
    }
}
