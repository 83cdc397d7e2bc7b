package dev.depot.spark;

import org.apache.spark.sql.connector.read.InputPartition;

/** One part of a dataset: an Arrow stream object, read where it was written. */
record DepotInputPartition(Catalogue.Part part) implements InputPartition {
    @Override
    public String[] preferredLocations() {
        return new String[] {part.host()};
    }
}
