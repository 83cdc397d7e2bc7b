package dev.depot.shuffle;

import dev.depot.client.ObjectId;
import java.util.ArrayList;
import java.util.List;

/**
 * The names of a shuffle's objects. Every id is {@code ObjectId.of(name)} (SHA-256 of the name), so any
 * process, in Java or Python, derives the same ids from the shuffle id alone:
 *
 * <pre>
 *  depot-shuffle/ID/manifest           maps, partitions, layout, dtype           (Shuffle.create)
 *  depot-shuffle/ID/map/M/owner        the writing process                       (writer opened)
 *  depot-shuffle/ID/map/M/part/P       slice of map M for partition P            (PER_SLICE layout)
 *  depot-shuffle/ID/map/M/data         all of map M's slices, in partition order (PER_MAP layout)
 *  depot-shuffle/ID/map/M/status       committed or failed, and the slice lengths (sealed last)
 * </pre>
 */
final class ShuffleIds {
    static final String PREFIX = "depot-shuffle/";
    /** The longest shuffle id, in characters. */
    static final int MAX_LENGTH = 200;

    private final String base;

    ShuffleIds(String shuffleId) {
        if (shuffleId.isEmpty() || shuffleId.length() > MAX_LENGTH) {
            throw new IllegalArgumentException("a shuffle id has 1.." + MAX_LENGTH + " characters, got "
                + shuffleId.length());
        }
        this.base = PREFIX + shuffleId + "/";
    }

    ObjectId manifest() {
        return ObjectId.of(base + "manifest");
    }

    ObjectId owner(int map) {
        return ObjectId.of(base + "map/" + map + "/owner");
    }

    ObjectId status(int map) {
        return ObjectId.of(base + "map/" + map + "/status");
    }

    ObjectId mapData(int map) {
        return ObjectId.of(base + "map/" + map + "/data");
    }

    ObjectId slice(int map, int partition) {
        return ObjectId.of(base + "map/" + map + "/part/" + partition);
    }

    /** Every object a shuffle of {@code maps} x {@code partitions} may have made, in either layout; manifest last. */
    List<ObjectId> all(int maps, int partitions) {
        List<ObjectId> all = new ArrayList<>();
        for (int m = 0; m < maps; m++) {
            all.add(status(m));
            all.add(mapData(m));
            for (int p = 0; p < partitions; p++) {
                all.add(slice(m, p));
            }
            all.add(owner(m));
        }
        all.add(manifest());
        return all;
    }
}
