package dev.depot.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.depot.client.DepotClient;
import dev.depot.client.ObjectEvent;
import dev.depot.client.Subscription;
import java.io.PrintStream;
import java.util.Locale;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code depot watch}: prints every object event of the store as it happens, one line each, until interrupted
 * (or {@code --count} events). Asleep on the subscription's futex word between events.
 */
@Command(name = "watch",
    customSynopsis = "depot watch [--json] [--count N]",
    description = "print the store's object events (sealed, deleted, evicted, spilled, restored) as they happen",
    footer = {"One line per event: time (UTC), event, id, data size, metadata size, pid of the process that did it",
        "(the daemon for evictions, spills, restores and Python writes). A subscriber that falls more than 512",
        "events behind gets a line 'missed N events' instead of them. --json prints one JSON object per line:",
        "{\"time\", \"event\", \"id\", \"size_bytes\", \"metadata_bytes\", \"pid\"}, and for missed events",
        "{\"time\", \"event\": \"missed\", \"missed\": N}. Runs until interrupted (Ctrl-C) or --count events."})
final class WatchCommand extends StoreCommand {
    private static final String ROW = "%-24s  %-8s  %-40s  %10s  %8s  %s%n";

    @Option(names = "--json", description = "print one JSON object per line")
    boolean json;

    @Option(names = "--count", paramLabel = "N", description = "stop after N events (default: run until interrupted)")
    long count = -1;

    @Override
    int run() {
        if (count == 0 || count < -1) {
            throw new UsageException("--count needs a positive number of events, got " + count);
        }
        PrintStream out = out();
        try (DepotClient depot = DepotClient.open(dir()); Subscription events = depot.subscribe()) {
            // Ctrl-C ends the JVM: give the subscriber slot back at once (the daemon's reaper would, later).
            Thread hook = new Thread(events::close, "depot-watch-close");
            Runtime.getRuntime().addShutdownHook(hook);
            try {
                for (long n = 0; count < 0 || n < count; n++) {
                    ObjectEvent e;
                    try {
                        e = events.next(-1);
                    } catch (IllegalStateException closedByTheHook) {
                        if (events.isClosed()) {
                            return 0;  // interrupted: the JVM is exiting
                        }
                        throw closedByTheHook;
                    }
                    out.print(json ? Json.compact(json(e)) + System.lineSeparator() : line(e));
                    out.flush();
                }
            } finally {
                try {
                    Runtime.getRuntime().removeShutdownHook(hook);
                } catch (IllegalStateException shuttingDown) {
                    // the hook runs (or ran) and closes the subscription
                }
            }
        }
        return 0;
    }

    static ObjectNode json(ObjectEvent e) {
        ObjectNode o = Json.object().put("time", e.time().toString()).put("event", name(e));
        if (e.type() == ObjectEvent.Type.MISSED) {
            return o.put("missed", e.missed());
        }
        return o.put("id", e.id().toHex()).put("size_bytes", e.dataSize()).put("metadata_bytes", e.metadataSize())
            .put("pid", e.publisherPid());
    }

    static String line(ObjectEvent e) {
        if (e.type() == ObjectEvent.Type.MISSED) {
            return String.format(Locale.ROOT, "%-24s  missed %d events%n", e.time(), e.missed());
        }
        return String.format(Locale.ROOT, ROW, e.time(), name(e), e.id().toHex(), Size.format(e.dataSize()),
            Size.format(e.metadataSize()), "pid " + e.publisherPid());
    }

    private static String name(ObjectEvent e) {
        return e.type().name().toLowerCase(Locale.ROOT);
    }
}
