package dev.depot.cli;

import dev.depot.client.DepotClient;
import dev.depot.client.ObjectId;
import dev.depot.errors.ErrorCode;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code depot rm}: deletes objects. An object that is pinned (a view is open on it) disappears from gets at
 * once and its space is freed when the last view closes. Every id is tried; a missing one is reported and the
 * exit status is then 3.
 */
@Command(name = "rm",
    customSynopsis = "depot rm ID... [--name NAME]...",
    description = "delete objects",
    footer = {"Prints nothing on success. Exit status 3 when any of the objects does not exist (the others are",
        "still deleted)."})
final class RmCommand extends StoreCommand {
    @Parameters(paramLabel = "ID", description = "ids of objects to delete, 40 hex digits each")
    List<String> hexes = new ArrayList<>();

    @Option(names = "--name", paramLabel = "NAME", description = "delete the object named NAME (repeatable)")
    List<String> names = new ArrayList<>();

    @Override
    int run() {
        List<ObjectId> ids = new ArrayList<>();
        for (String hex : hexes) {
            ids.add(ObjectIds.parseHex(hex));
        }
        for (String name : names) {
            ids.add(ObjectId.of(name));
        }
        if (ids.isEmpty()) {
            throw new UsageException("missing object ID (or --name NAME)");
        }
        int status = 0;
        Path dir = dir();
        try (DepotClient depot = DepotClient.open(dir)) {
            for (ObjectId id : ids) {
                if (!depot.delete(id)) {
                    err().println("depot: object " + id + " does not exist in the store at " + dir
                        + " (or is still being created); list objects with `depot ls`");
                    status = ErrorCode.OBJECT_MISSING.exitStatus;
                }
            }
        }
        return status;
    }
}
