package dev.depot.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.depot.client.DepotClient;
import dev.depot.client.StoreStats;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Locale;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code depot stat}: the store's figures, for people or (with {@code --json}) as one JSON object. */
@Command(name = "stat",
    customSynopsis = "depot stat [--json]",
    description = "show the store's capacity, usage, objects and clients",
    footer = {"--json prints one JSON object with the keys directory, capacity_bytes, used_bytes, free_bytes,",
        "pinned_bytes, unsealed_bytes, largest_free_block, fragmentation, object_count, sealed_count,",
        "max_objects, client_count, eviction_count, evicted_bytes, daemon_pid (0: no daemon running),",
        "kept_bytes, kept_objects (KEEP objects in memory), spilled_bytes, spilled_objects, spill_count,",
        "restore_count, spill_directory (null: the daemon does not spill).",
        "used, free and largest_free_block are heap bytes (with block headers and alignment), pinned and",
        "unsealed are data bytes; fragmentation = 1 - largest_free_block / free_bytes."})
final class StatCommand extends StoreCommand {
    @Option(names = "--json", description = "print one JSON object instead of a summary")
    boolean json;

    @Override
    int run() {
        Path dir = dir();
        StoreStats s;
        try (DepotClient depot = DepotClient.open(dir)) {
            s = depot.stats();
        }
        if (json) {
            out().println(json(dir, s));
        } else {
            printSummary(out(), dir, s);
        }
        return 0;
    }

    static String json(Path dir, StoreStats s) {
        ObjectNode json = Json.object()
            .put("directory", dir.toString())
            .put("capacity_bytes", s.capacityBytes())
            .put("used_bytes", s.usedBytes())
            .put("free_bytes", s.freeBytes())
            .put("pinned_bytes", s.pinnedBytes())
            .put("unsealed_bytes", s.unsealedBytes())
            .put("largest_free_block", s.largestFreeBlock());
        Json.putFinite(json, "fragmentation", s.fragmentation())
            .put("object_count", s.objectCount())
            .put("sealed_count", s.sealedCount())
            .put("max_objects", s.maxObjects())
            .put("client_count", s.clientCount())
            .put("eviction_count", s.evictionCount())
            .put("evicted_bytes", s.evictedBytes())
            .put("daemon_pid", s.daemonPid())
            .put("kept_bytes", s.keptBytes())
            .put("kept_objects", s.keptObjects())
            .put("spilled_bytes", s.spilledBytes())
            .put("spilled_objects", s.spilledObjects())
            .put("spill_count", s.spillCount())
            .put("restore_count", s.restoreCount())
            .put("spill_directory", s.spillDirectory());
        return Json.compact(json);
    }

    private static void printSummary(PrintStream out, Path dir, StoreStats s) {
        out.printf("store       %s%n", dir);
        out.printf("daemon      %s%n", s.daemonPid() > 0 ? "pid " + s.daemonPid() : "none running");
        out.printf("capacity    %s%n", Size.format(s.capacityBytes()));
        out.printf("used        %s (%s)%n", Size.format(s.usedBytes()), percent(s.usedBytes(), s.capacityBytes()));
        out.printf("free        %s (largest block %s, fragmentation %s)%n", Size.format(s.freeBytes()),
            s.largestFreeBlock() < 0 ? "unknown: the allocator lock is held" : Size.format(s.largestFreeBlock()),
            s.largestFreeBlock() < 0 ? "unknown" : String.format(Locale.ROOT, "%.1f%%", 100 * s.fragmentation()));
        out.printf("pinned      %s%n", Size.format(s.pinnedBytes()));
        out.printf("unsealed    %s%n", Size.format(s.unsealedBytes()));
        out.printf("objects     %d (%d sealed, at most %d)%n", s.objectCount(), s.sealedCount(), s.maxObjects());
        out.printf("clients     %d%n", s.clientCount());
        out.printf("evictions   %d (%s evicted)%n", s.evictionCount(), Size.format(s.evictedBytes()));
        out.printf("kept        %s in %d object(s) (never evicted)%n", Size.format(s.keptBytes()), s.keptObjects());
        out.printf("spilled     %s in %d object(s) %s (%d spills, %d restores)%n", Size.format(s.spilledBytes()),
            s.spilledObjects(), s.spillDirectory() == null ? "(no spilling daemon)" : "to " + s.spillDirectory(),
            s.spillCount(), s.restoreCount());
    }

    private static String percent(long part, long whole) {
        return whole == 0 ? "0.0%" : String.format(Locale.ROOT, "%.1f%%", 100.0 * part / whole);
    }
}
