package dev.depot.bench;

import java.util.function.Consumer;

/** One named benchmark. {@link #run} hands each measured case to {@code out} as soon as it is measured. */
interface Benchmark {
    String name();

    /** One line: what is measured against what. */
    String description();

    void run(boolean quick, Consumer<Result> out) throws Throwable;
}
