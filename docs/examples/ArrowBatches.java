import dev.depot.arrow.DepotArrow;
import dev.depot.arrow.DepotArrowReader;
import dev.depot.client.DepotClient;
import dev.depot.client.ObjectId;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.VectorSchemaRoot;

/** Stores two Arrow record batches as one Depot object, then reads them back in place. */
public class ArrowBatches {
    public static void main(String[] args) {
        ObjectId id = ObjectId.of("dataset/prices");
        try (DepotClient depot = DepotClient.open(); // $DEPOT_DIR, else /dev/shm/depot-$USER
             BufferAllocator allocator = new RootAllocator()) {
            try (VectorSchemaRoot first = prices(allocator, 1.5, 2.0);
                 VectorSchemaRoot second = prices(allocator, 4.25)) {
                long size = DepotArrow.put(depot, id, first, second); // one object, sized exactly, one copy
                System.out.println("stored " + size + " bytes");
            }
            double sum = 0;
            try (DepotArrowReader reader = DepotArrow.open(depot, id, allocator)) { // any process on the machine
                while (reader.hasNext()) {
                    try (VectorSchemaRoot batch = reader.next()) { // its buffers are the shared memory
                        Float8Vector price = (Float8Vector) batch.getVector("price");
                        for (int i = 0; i < batch.getRowCount(); i++) {
                            sum += price.get(i);
                        }
                    }
                }
            } // the object stays pinned until the reader and every batch it returned are closed
            System.out.println("sum " + sum);
            depot.delete(id);
        }
    }

    private static VectorSchemaRoot prices(BufferAllocator allocator, double... values) {
        Float8Vector price = new Float8Vector("price", allocator);
        price.allocateNew(values.length);
        for (int i = 0; i < values.length; i++) {
            price.set(i, values[i]);
        }
        price.setValueCount(values.length);
        return VectorSchemaRoot.of(price);
    }
}
