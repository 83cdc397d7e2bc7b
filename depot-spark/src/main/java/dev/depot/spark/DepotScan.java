package dev.depot.spark;

import java.util.Arrays;
import org.apache.spark.sql.connector.read.Batch;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.read.SupportsPushDownRequiredColumns;
import org.apache.spark.sql.types.StructType;

/** A scan of one dataset: one input partition per part, preferring the host that holds it; columns pruned. */
final class DepotScan implements Scan, Batch {
    private final Catalogue catalogue;
    private final StructType readSchema;
    private final String dir;

    private DepotScan(Catalogue catalogue, StructType readSchema, String dir) {
        this.catalogue = catalogue;
        this.readSchema = readSchema;
        this.dir = dir;
    }

    static final class Builder implements ScanBuilder, SupportsPushDownRequiredColumns {
        private final Catalogue catalogue;
        private final String dir;
        private StructType required;

        Builder(Catalogue catalogue, String dir) {
            this.catalogue = catalogue;
            this.dir = dir;
            this.required = catalogue.schema();
        }

        @Override
        public void pruneColumns(StructType requiredSchema) {
            this.required = requiredSchema;
        }

        @Override
        public Scan build() {
            return new DepotScan(catalogue, required, dir);
        }
    }

    @Override
    public StructType readSchema() {
        return readSchema;
    }

    @Override
    public String description() {
        return "depot:" + catalogue.name() + " (" + catalogue.parts().size() + " parts, " + catalogue.rows() + " rows)";
    }

    @Override
    public Batch toBatch() {
        return this;
    }

    @Override
    public InputPartition[] planInputPartitions() {
        return catalogue.parts().stream().map(DepotInputPartition::new).toArray(InputPartition[]::new);
    }

    @Override
    public PartitionReaderFactory createReaderFactory() {
        return new DepotReaderFactory(dir, Arrays.asList(readSchema.fieldNames()));
    }
}
