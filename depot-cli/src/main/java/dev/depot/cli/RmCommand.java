package dev.depot.cli;

import dev.depot.client.DepotClient;
import dev.depot.client.ObjectId;
import dev.depot.errors.ErrorCode;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code depot rm}: deletes objects. An object that is pinned (a view is open on it) disappears from gets at
 * once and its space is freed when the last view closes. Every id is tried; a missing one is reported and the
 * exit status is then 3.
 */
final class RmCommand implements Command {
    @Override
    public String name() {
        return "rm";
    }

    @Override
    public String synopsis() {
        return "ID... [--name NAME]...";
    }

    @Override
    public String summary() {
        return "delete objects";
    }

    @Override
    public String details() {
        return """
            Prints nothing on success. Exit status 3 when any of the objects does not exist (the others are
            still deleted).
            """;
    }

    @Override
    public List<Args.Option> options() {
        return List.of(new Args.Option("--name", null, "NAME", "delete the object named NAME (repeatable)"));
    }

    @Override
    public int run(Context ctx) {
        Args args = ctx.args();
        List<ObjectId> ids = new ArrayList<>();
        for (String hex : args.positionals()) {
            ids.add(ObjectIds.parseHex(hex));
        }
        for (String name : args.values("--name")) {
            ids.add(ObjectId.of(name));
        }
        if (ids.isEmpty()) {
            throw new Args.UsageException("missing object ID (or --name NAME)");
        }
        int status = 0;
        try (DepotClient depot = DepotClient.open(ctx.dir())) {
            for (ObjectId id : ids) {
                if (!depot.delete(id)) {
                    ctx.err().println("depot: object " + id + " does not exist in the store at " + ctx.dir()
                        + " (or is still being created); list objects with `depot ls`");
                    status = ErrorCode.OBJECT_MISSING.exitStatus;
                }
            }
        }
        return status;
    }
}
