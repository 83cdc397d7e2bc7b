package dev.depot.client;

import java.nio.file.Path;

/** Where a store lives when none is named: {@code $DEPOT_DIR}, else {@code /dev/shm/depot-$USER}. */
public final class DepotDirectory {
    public static final String DIR_ENV_NAME = "DEPOT_DIR";

    private DepotDirectory() {
    }

    public static Path defaultDirectory() {
        String env = System.getenv(DIR_ENV_NAME);
        if (env != null && !env.isBlank()) {
            return Path.of(env);
        }
        return Path.of("/dev/shm", "depot-" + System.getProperty("user.name", "user"));
    }
}
