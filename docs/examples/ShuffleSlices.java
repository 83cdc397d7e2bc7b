import dev.depot.client.DepotClient;
import dev.depot.shuffle.Shuffle;
import dev.depot.shuffle.ShuffleReader;
import dev.depot.shuffle.ShuffleWriter;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Two maps send values below 5 to partition 0 and the others to partition 1; each reducer reads its slices in
 * place. Every task runs in this process here; in a job each map and each reducer can be a process of its own.
 */
public class ShuffleSlices {
    public static void main(String[] args) {
        double[][] mapInputs = {{1.5, 7.0, 4.25}, {9.5, 2.0}};
        try (DepotClient depot = DepotClient.open(); // $DEPOT_DIR, else /dev/shm/depot-$USER
             Shuffle s = Shuffle.create(depot, "sort-42", 2, 2, Shuffle.Options.defaults().withDtype("<f8"))) {
            for (int map = 0; map < 2; map++) { // a map task; another process gets s from Shuffle.open(depot, "sort-42", timeoutMillis)
                long[] sliceBytes = new long[2]; // bytes for each partition: count first ...
                for (double v : mapInputs[map]) {
                    sliceBytes[partitionOf(v)] += Double.BYTES;
                }
                try (ShuffleWriter w = s.writer(map, sliceBytes)) {
                    long[] filled = new long[2];
                    for (double v : mapInputs[map]) { // ... then scatter into writable shared memory
                        int p = partitionOf(v);
                        w.partition(p).setAtIndex(ValueLayout.JAVA_DOUBLE, filled[p]++, v);
                    }
                    w.commit();
                }
            }
            for (int partition = 0; partition < 2; partition++) { // a reduce task
                try (ShuffleReader r = s.reader(partition, 60_000)) { // waits up to 60 s for maps still running
                    double sum = 0;
                    for (MemorySegment slice : r.slices()) { // read-only, zero-copy, in map order
                        for (long i = 0; i < slice.byteSize() / Double.BYTES; i++) {
                            sum += slice.getAtIndex(ValueLayout.JAVA_DOUBLE, i);
                        }
                    }
                    System.out.println("partition " + partition + " sum " + sum);
                }
            }
        } // closing the shuffle deletes every object of it
    }

    private static int partitionOf(double v) {
        return v < 5 ? 0 : 1;
    }
}
