package dev.depot.cli;

import dev.depot.client.DepotClient;
import dev.depot.core.store.Doctor;
import dev.depot.shuffle.AbandonedShuffle;
import dev.depot.shuffle.Shuffle;
import java.nio.file.Path;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code depot doctor}: checks a store and repairs what is safe to repair. */
@Command(name = "doctor",
    customSynopsis = "depot doctor [--check]",
    description = "check the store for corruption and dead clients, and repair what is safe",
    footer = {"Checks the header, the client table (slots of processes that are gone), the index (every entry",
        "the daemon's recovery would drop: an unknown state, a block outside the heap, an overlap) and",
        "the heap (block sizes, free lists, used bytes), then looks for objects no live process will",
        "ever delete, which are kept (never evicted): shuffles whose coordinator died without closing",
        "them, and Dask worker results and shuffle slices whose writer is gone. Unless --check is given",
        "it then repairs what recovery repairs: drops those entries, rebuilds the heap's metadata from",
        "the index (only when something was wrong) and reclaims dead clients; and it deletes those",
        "objects. A store whose header is bad cannot be",
        "repaired: remove its directory and create it again. Safe to run while clients use the store.",
        "Exit status: 0 healthy or repaired, 1 problems left (or found with --check, or a bad header)."})
final class DoctorCommand extends StoreCommand {
    @Option(names = "--check", description = "only report; change nothing")
    boolean check;

    @Override
    int run() throws Exception {
        Path dir = dir();
        Doctor.Report report = Doctor.examine(dir, !check);
        for (String f : report.findings()) {
            out().println("found: " + f);
        }
        for (String r : report.repaired()) {
            out().println("repaired: " + r);
        }
        if (report.fatal()) {
            err().println("depot: the store at " + dir + " cannot be repaired: remove the directory and"
                + " start a new store with `depot serve --dir " + dir + "` (its objects are lost)");
            return 1;
        }
        List<AbandonedShuffle> abandoned;
        DeadWriters deadWriters;
        try (DepotClient client = DepotClient.open(dir)) {
            abandoned = check ? Shuffle.findAbandoned(client) : Shuffle.sweepAbandoned(client);
            deadWriters = DeadWriters.find(client);
            if (!check) {
                deadWriters.delete(client);
            }
        }
        for (AbandonedShuffle a : abandoned) {
            out().println((check ? "found: abandoned " : "repaired: deleted abandoned ") + a);
        }
        if (!deadWriters.isEmpty()) {
            out().println((check ? "found: " : "repaired: deleted ") + deadWriters);
        }
        if (report.healthy() && abandoned.isEmpty() && deadWriters.isEmpty()) {
            out().println("ok: no problems found in " + dir);
            return 0;
        }
        if (check) {
            err().println("depot: problems found; run `depot doctor --dir " + dir + "` to repair them");
            return 1;
        }
        out().println("ok: repaired " + dir);
        return 0;
    }
}
