package dev.depot.spark;

import dev.depot.arrow.ArrowStreamPlan;
import dev.depot.client.DepotClient;
import dev.depot.shuffle.Shuffle;
import dev.depot.shuffle.ShuffleWriter;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.Iterator;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.TaskContext;
import org.apache.spark.api.java.function.VoidFunction;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.execution.arrow.ArrowWriter;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.ArrowUtils;

/**
 * One map task of {@link DepotShuffle}: its rows carry their target partition in the column after {@code schema}'s;
 * Spark's {@code ArrowWriter} fills one Arrow batch per target partition, and the map's shuffle object receives them
 * as one Arrow IPC stream per partition, each starting 64-byte aligned, with one copy.
 */
record ShuffleMapTask(String dir, String shuffleId, StructType schema, String timeZone, int partitions)
    implements VoidFunction<Iterator<InternalRow>> {
    private static final long ALIGNMENT = 64;

    @Override
    public void call(Iterator<InternalRow> rows) {
        int map = TaskContext.getPartitionId();
        int partitionOrdinal = schema.fields().length;
        DepotClient client = DepotNode.client(Path.of(dir));
        Schema arrowSchema = ArrowUtils.toArrowSchema(schema, timeZone, true, false);
        VectorSchemaRoot[] roots = new VectorSchemaRoot[partitions];
        ArrowWriter[] writers = new ArrowWriter[partitions];
        ArrowStreamPlan[] plans = new ArrowStreamPlan[partitions];
        try (BufferAllocator allocator = DepotNode.allocator().newChildAllocator("depot-shuffle-map-" + map, 0,
            Long.MAX_VALUE)) {
            try {
                while (rows.hasNext()) {
                    InternalRow row = rows.next();
                    int p = row.getInt(partitionOrdinal);
                    if (writers[p] == null) {
                        roots[p] = VectorSchemaRoot.create(arrowSchema, allocator);
                        writers[p] = ArrowWriter.create(roots[p]);
                    }
                    writers[p].write(row);  // the fields of schema only: the partition column is left out
                }
                long[] sliceBytes = new long[partitions];
                long total = 0;
                for (int p = 0; p < partitions; p++) {
                    if (writers[p] != null) {
                        writers[p].finish();
                        plans[p] = ArrowStreamPlan.of(roots[p]);
                        sliceBytes[p] = (plans[p].size() + ALIGNMENT - 1) & -ALIGNMENT;
                        total += sliceBytes[p];
                    }
                }
                try (Shuffle shuffle = Shuffle.open(client, shuffleId, DepotShuffle.READ_TIMEOUT_MILLIS);
                     ShuffleWriter w = shuffle.writer(map, total)) {
                    MemorySegment data = w.data();
                    long at = 0;
                    for (int p = 0; p < partitions; p++) {
                        if (plans[p] != null) {
                            MemorySegment slice = data.asSlice(at, sliceBytes[p]);
                            plans[p].writeTo(slice);
                            slice.asSlice(plans[p].size()).fill((byte) 0);
                            at += sliceBytes[p];
                        }
                    }
                    w.commit(sliceBytes);
                }
            } finally {
                for (int p = 0; p < partitions; p++) {
                    if (plans[p] != null) {
                        plans[p].close();
                    }
                    if (roots[p] != null) {
                        roots[p].close();
                    }
                }
            }
        }
    }
}
