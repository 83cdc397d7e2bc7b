package dev.depot.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.depot.client.DepotClient;
import dev.depot.client.StoreStats;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/** {@code depot stat}: the store's figures, for people or (with {@code --json}) as one JSON object. */
final class StatCommand implements Command {
    @Override
    public String name() {
        return "stat";
    }

    @Override
    public String synopsis() {
        return "[--json]";
    }

    @Override
    public String summary() {
        return "show the store's capacity, usage, objects and clients";
    }

    @Override
    public String details() {
        return """
            --json prints one JSON object with the keys directory, capacity_bytes, used_bytes, free_bytes,
            pinned_bytes, unsealed_bytes, largest_free_block, fragmentation, object_count, sealed_count,
            max_objects, client_count, eviction_count, evicted_bytes, daemon_pid (0: no daemon running).
            used, free and largest_free_block are heap bytes (with block headers and alignment), pinned and
            unsealed are data bytes; fragmentation = 1 - largest_free_block / free_bytes.
            """;
    }

    @Override
    public List<Args.Option> options() {
        return List.of(new Args.Option("--json", null, null, "print one JSON object instead of a summary"));
    }

    @Override
    public int run(Context ctx) {
        ctx.args().expectPositionals(0, 0, "no arguments");
        StoreStats s;
        try (DepotClient depot = DepotClient.open(ctx.dir())) {
            s = depot.stats();
        }
        if (ctx.args().has("--json")) {
            ctx.out().println(json(ctx.dir(), s));
        } else {
            printSummary(ctx.out(), ctx.dir(), s);
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
            .put("daemon_pid", s.daemonPid());
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
    }

    private static String percent(long part, long whole) {
        return whole == 0 ? "0.0%" : String.format(Locale.ROOT, "%.1f%%", 100.0 * part / whole);
    }
}
