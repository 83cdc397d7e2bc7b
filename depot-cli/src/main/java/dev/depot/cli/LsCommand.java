package dev.depot.cli;

import com.fasterxml.jackson.core.JsonGenerator;
import dev.depot.client.DepotClient;
import dev.depot.client.ObjectInfo;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code depot ls}: every object in the store: a table, oldest first, or with {@code --json} one JSON array
 * holding one object per element (each on its own line), streamed in the index's order.
 */
@Command(name = "ls",
    customSynopsis = "depot ls [--json]",
    description = "list the objects in the store",
    footer = {"The table shows id, size, state (sealed, creating, spilled, delete_pending, deleting), pins (views",
        "open on the object), creation and last access time (UTC), oldest first. --json prints one JSON array,",
        "one element per line, in the store's own order (streamed; sort with e.g. jq 'sort_by(.created)'):",
        "{\"id\", \"size_bytes\", \"metadata_bytes\", \"state\", \"pins\", \"created\", \"last_access\"}",
        "with times as ISO-8601 strings in UTC."})
final class LsCommand extends StoreCommand {
    private static final String ROW = "%-40s  %10s  %-14s  %4s  %-20s  %-20s%n";

    @Option(names = "--json", description = "print a JSON array instead of a table")
    boolean json;

    @Override
    int run() {
        try (DepotClient depot = DepotClient.open(dir())) {
            if (json) {
                printJson(out(), depot);
            } else {
                List<ObjectInfo> objects = new ArrayList<>(depot.list());
                objects.sort(Comparator.comparing(ObjectInfo::created).thenComparing(ObjectInfo::id));
                printTable(out(), objects);
            }
        }
        return 0;
    }

    private static void printTable(PrintStream out, List<ObjectInfo> objects) {
        out.printf(ROW, "ID", "SIZE", "STATE", "PINS", "CREATED", "LAST ACCESS");
        for (ObjectInfo o : objects) {
            out.printf(ROW, o.id().toHex(), Size.format(o.dataSize()), state(o), o.pinCount(),
                time(o.created()), time(o.lastAccess()));
        }
    }

    /**
     * Streamed as the index is read, in its order: neither the listing nor the output of a million objects is
     * ever held, so memory stays flat at any store size.
     */
    private static void printJson(PrintStream out, DepotClient depot) {
        try (JsonGenerator g = Json.linesTo(out)) {
            g.writeStartArray();
            depot.forEachObject(o -> {
                try {
                    g.writeStartObject();
                    g.writeStringField("id", o.id().toHex());
                    g.writeNumberField("size_bytes", o.dataSize());
                    g.writeNumberField("metadata_bytes", o.metadataSize());
                    g.writeStringField("state", state(o));
                    g.writeNumberField("pins", o.pinCount());
                    g.writeStringField("created", o.created().toString());
                    g.writeStringField("last_access", o.lastAccess().toString());
                    g.writeEndObject();
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
            g.writeEndArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        out.println();
    }

    private static String state(ObjectInfo o) {
        return o.state().name().toLowerCase(Locale.ROOT);
    }

    private static String time(Instant t) {
        return t.getEpochSecond() == 0 && t.getNano() == 0 ? "-" : t.truncatedTo(ChronoUnit.SECONDS).toString();
    }
}
