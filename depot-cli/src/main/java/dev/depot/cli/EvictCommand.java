package dev.depot.cli;

import dev.depot.client.DepotClient;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** {@code depot evict}: frees space by evicting least-recently-used unpinned objects. */
@Command(name = "evict",
    customSynopsis = "depot evict BYTES",
    description = "evict least-recently-used unpinned objects until BYTES are freed",
    footer = {"BYTES is a size: plain bytes or with a unit (64k, 512m, 4g). Prints the bytes actually freed,",
        "which can be fewer (everything else pinned) or more (whole objects): `evicted N bytes (SIZE)`."})
final class EvictCommand extends StoreCommand {
    @Parameters(paramLabel = "BYTES", converter = Size.Converter.class,
        description = "the size to free: 64k, 512m, 4g or bytes")
    long bytes;

    @Override
    int run() {
        long freed;
        try (DepotClient depot = DepotClient.open(dir())) {
            freed = depot.evict(bytes);
        }
        out().println("evicted " + freed + " bytes (" + Size.format(freed) + ")");
        return 0;
    }
}
