package dev.depot.spark;

import java.util.List;
import org.apache.spark.sql.connector.read.InputPartition;

/** One input partition of a dataset: one or more parts (Arrow stream objects) written on one host, read there. */
record DepotInputPartition(List<Catalogue.Part> parts) implements InputPartition {
    DepotInputPartition {
        parts = List.copyOf(parts);
    }

    @Override
    public String[] preferredLocations() {
        return new String[] {parts.getFirst().host()};
    }
}
