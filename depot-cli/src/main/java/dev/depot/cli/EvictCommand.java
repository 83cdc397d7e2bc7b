package dev.depot.cli;

import dev.depot.client.DepotClient;
import java.util.List;

/** {@code depot evict}: frees space by evicting least-recently-used unpinned objects. */
final class EvictCommand implements Command {
    @Override
    public String name() {
        return "evict";
    }

    @Override
    public String synopsis() {
        return "BYTES";
    }

    @Override
    public String summary() {
        return "evict least-recently-used unpinned objects until BYTES are freed";
    }

    @Override
    public String details() {
        return """
            BYTES is a size: plain bytes or with a unit (64k, 512m, 4g). Prints the bytes actually freed,
            which can be fewer (everything else pinned) or more (whole objects): `evicted N bytes (SIZE)`.
            """;
    }

    @Override
    public List<Args.Option> options() {
        return List.of();
    }

    @Override
    public int run(Context ctx) {
        ctx.args().expectPositionals(1, 1, "BYTES, the size to free (64k, 512m, 4g)");
        long bytes;
        try {
            bytes = Size.parse(ctx.args().positionals().getFirst());
        } catch (IllegalArgumentException e) {
            throw new Args.UsageException(e.getMessage(), e);
        }
        long freed;
        try (DepotClient depot = DepotClient.open(ctx.dir())) {
            freed = depot.evict(bytes);
        }
        ctx.out().println("evicted " + freed + " bytes (" + Size.format(freed) + ")");
        return 0;
    }
}
