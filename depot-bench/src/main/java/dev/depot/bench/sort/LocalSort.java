package dev.depot.bench.sort;

/** How a worker of the sort demo sorts its partition ({@code depot sort --local-sort}). */
public enum LocalSort {
    /**
     * Fine buckets of about {@link FineBuckets#TARGET_VALUES} values, each sorted in the cache: as fast as
     * {@link #WHOLE} on this machine (its partition pass costs what its sorts save), the store holds all the data.
     */
    BUCKETS,
    /** One {@code Arrays.sort} of the whole partition (the default). */
    WHOLE;

    public static LocalSort parse(String name) {
        return switch (name) {
            case "buckets" -> BUCKETS;
            case "whole" -> WHOLE;
            default -> throw new IllegalArgumentException("--local-sort is buckets or whole, got '" + name + "'");
        };
    }

    /** The name {@link #parse} takes. */
    public String option() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
