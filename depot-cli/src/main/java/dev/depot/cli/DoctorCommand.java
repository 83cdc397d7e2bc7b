package dev.depot.cli;

import dev.depot.core.store.Doctor;
import java.util.List;

/** {@code depot doctor}: checks a store and repairs what is safe to repair. */
final class DoctorCommand implements Command {
    @Override
    public String name() {
        return "doctor";
    }

    @Override
    public String synopsis() {
        return "[--check]";
    }

    @Override
    public String summary() {
        return "check the store for corruption and dead clients, and repair what is safe";
    }

    @Override
    public String details() {
        return """
            Checks the header, the client table (slots of processes that are gone), the index (every entry
            the daemon's recovery would drop: an unknown state, a block outside the heap, an overlap) and
            the heap (block sizes, free lists, used bytes). Unless --check is given it then repairs what
            recovery repairs: drops those entries, rebuilds the heap's metadata from the index (only when
            something was wrong) and reclaims dead clients. A store whose header is bad cannot be
            repaired: remove its directory and create it again. Safe to run while clients use the store.
            Exit status: 0 healthy or repaired, 1 problems left (or found with --check, or a bad header).
            """;
    }

    @Override
    public List<Args.Option> options() {
        return List.of(new Args.Option("--check", null, null, "only report; change nothing"));
    }

    @Override
    public int run(Context ctx) throws Exception {
        ctx.args().expectPositionals(0, 0, "no arguments");
        boolean repair = !ctx.args().has("--check");
        Doctor.Report report = Doctor.examine(ctx.dir(), repair);
        for (String f : report.findings()) {
            ctx.out().println("found: " + f);
        }
        for (String r : report.repaired()) {
            ctx.out().println("repaired: " + r);
        }
        if (report.fatal()) {
            ctx.err().println("depot: the store at " + ctx.dir() + " cannot be repaired: remove the directory and"
                + " start a new store with `depot serve --dir " + ctx.dir() + "` (its objects are lost)");
            return 1;
        }
        if (report.healthy()) {
            ctx.out().println("ok: no problems found in " + ctx.dir());
            return 0;
        }
        if (!repair) {
            ctx.err().println("depot: problems found; run `depot doctor --dir " + ctx.dir() + "` to repair them");
            return 1;
        }
        ctx.out().println("ok: repaired " + ctx.dir());
        return 0;
    }
}
