package dev.depot.spark;

import java.util.EnumSet;
import java.util.Set;
import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.SupportsWrite;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/** A named Depot dataset as a Spark table: batch reads and writes (append, or overwrite by truncating). */
final class DepotTable implements SupportsRead, SupportsWrite {
    private final String name;
    private final StructType schema;
    private final String dir;

    DepotTable(String name, StructType schema, String dir) {
        this.name = name;
        this.schema = schema;
        this.dir = dir;
    }

    @Override
    public String name() {
        return "depot:" + name;
    }

    /** Spark 4 deprecates {@code schema()} for {@code columns()}, whose default implementation calls it. */
    @Override
    @SuppressWarnings("deprecation")
    public StructType schema() {
        return schema;
    }

    @Override
    public Set<TableCapability> capabilities() {
        return EnumSet.of(TableCapability.BATCH_READ, TableCapability.BATCH_WRITE, TableCapability.TRUNCATE);
    }

    @Override
    public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
        Catalogue c = Catalogue.read(DepotNode.client(DepotNode.directory(dir)), name);
        if (c == null) {
            throw new IllegalArgumentException("there is no Depot dataset named '" + name + "' in the store at " + dir);
        }
        return new DepotScan.Builder(c, dir, options.get(DepotScan.MAX_PARTITION_BYTES_OPTION));
    }

    @Override
    public WriteBuilder newWriteBuilder(LogicalWriteInfo info) {
        return new DepotWrite.Builder(name, dir, info);
    }
}
