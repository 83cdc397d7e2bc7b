package dev.depot.spark;

import java.util.Map;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableProvider;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.sources.DataSourceRegister;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * The {@code depot} data source: {@code df.write.format("depot").mode("overwrite").save("name")} stores each
 * task's rows as Arrow stream objects in the node's Depot store; {@code spark.read.format("depot").load("name")}
 * reads them back as columnar batches over the shared memory, from this application or any other on the node.
 * Options: {@code dir} (the store; default {@code spark.depot.dir}, else Depot's default),
 * {@code maxRowsPerObject} and {@code maxBytesPerObject} (how a task splits its rows into objects).
 */
public final class DepotDataSource implements TableProvider, DataSourceRegister {
    public static final String SHORT_NAME = "depot";
    public static final String DIR_OPTION = "dir";

    @Override
    public String shortName() {
        return SHORT_NAME;
    }

    @Override
    public StructType inferSchema(CaseInsensitiveStringMap options) {
        String name = nameOf(options);
        Catalogue c = Catalogue.read(DepotNode.client(directoryOf(options)), name);
        if (c == null) {
            throw new IllegalArgumentException("there is no Depot dataset named '" + name + "' in the store at "
                + directoryOf(options) + "; write one with df.write.format(\"depot\").save(\"" + name + "\")");
        }
        return c.schema();
    }

    @Override
    public Table getTable(StructType schema, Transform[] partitioning, Map<String, String> properties) {
        CaseInsensitiveStringMap options = new CaseInsensitiveStringMap(properties);
        return new DepotTable(nameOf(options), schema, directoryOf(options).toString());
    }

    /** Writes give their schema; a dataset's schema otherwise comes from its catalogue. */
    @Override
    public boolean supportsExternalMetadata() {
        return true;
    }

    static String nameOf(CaseInsensitiveStringMap options) {
        String name = options.get("path");
        if (name == null || name.isBlank() || name.contains("\n") || name.contains(" ")) {
            throw new IllegalArgumentException("a Depot dataset needs a name without spaces: save(\"name\") or "
                + "load(\"name\"), got " + (name == null ? "none" : "'" + name + "'"));
        }
        return name;
    }

    static java.nio.file.Path directoryOf(CaseInsensitiveStringMap options) {
        String dir = options.get(DIR_OPTION);
        if (dir == null) {
            SparkEnv env = SparkEnv.get();
            SparkConf conf = env == null ? null : env.conf();
            dir = conf == null ? null : conf.get(DepotNode.DIR_CONF, null);
        }
        return DepotNode.directory(dir);
    }
}
