package dev.depot.spark;

import java.util.List;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/** Makes columnar readers on executors; rows are never produced (Spark converts batches where it needs rows). */
record DepotReaderFactory(String dir, List<String> columns) implements PartitionReaderFactory {
    @Override
    public boolean supportColumnarReads(InputPartition partition) {
        return true;
    }

    @Override
    public PartitionReader<InternalRow> createReader(InputPartition partition) {
        throw new UnsupportedOperationException("the depot source reads columnar batches only");
    }

    @Override
    public PartitionReader<ColumnarBatch> createColumnarReader(InputPartition partition) {
        return new DepotPartitionReader(dir, columns, ((DepotInputPartition) partition).parts());
    }
}
