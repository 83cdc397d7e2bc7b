package dev.depot.cli;

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
        return new JsonWriter().beginObject()
            .name("directory").value(dir.toString())
            .name("capacity_bytes").value(s.capacityBytes())
            .name("used_bytes").value(s.usedBytes())
            .name("free_bytes").value(s.freeBytes())
            .name("pinned_bytes").value(s.pinnedBytes())
            .name("unsealed_bytes").value(s.unsealedBytes())
            .name("largest_free_block").value(s.largestFreeBlock())
            .name("fragmentation").value(s.fragmentation())
            .name("object_count").value(s.objectCount())
            .name("sealed_count").value(s.sealedCount())
            .name("max_objects").value(s.maxObjects())
            .name("client_count").value(s.clientCount())
            .name("eviction_count").value(s.evictionCount())
            .name("evicted_bytes").value(s.evictedBytes())
            .name("daemon_pid").value(s.daemonPid())
            .endObject().toString();
    }

    private static void printSummary(PrintStream out, Path dir, StoreStats s) {
        out.printf("store       %s%n", dir);
        out.printf("daemon      %s%n", s.daemonPid() > 0 ? "pid " + s.daemonPid() : "none running");
        out.printf("capacity    %s%n", Size.format(s.capacityBytes()));
        out.printf("used        %s (%s)%n", Size.format(s.usedBytes()), percent(s.usedBytes(), s.capacityBytes()));
        out.printf("free        %s (largest block %s, fragmentation %s)%n", Size.format(s.freeBytes()),
            Size.format(s.largestFreeBlock()), String.format(Locale.ROOT, "%.1f%%", 100 * s.fragmentation()));
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
