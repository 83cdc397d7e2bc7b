package dev.depot.spark;

import dev.depot.client.DepotClient;
import dev.depot.client.ObjectId;
import dev.depot.client.ObjectView;
import dev.depot.errors.ObjectExistsException;
import java.io.Serializable;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;

/**
 * A named dataset in Depot: its Spark schema and its parts (Arrow stream objects), stored as one small text object
 * with id {@code ObjectId.of("spark/" + name)}, so that any process (another Spark application, Python's
 * {@code depot.arrow.read_dataset}) finds it by name:
 *
 * <pre>
 * depot-spark 1
 * schema {"type":"struct","fields":[...]}       (StructType.json(), one line)
 * part &lt;40 hex digits&gt; &lt;rows&gt; &lt;host&gt;               (one line per part, in order)
 * </pre>
 */
public record Catalogue(String name, StructType schema, List<Part> parts) implements Serializable {
    public static final String MAGIC = "depot-spark 1";
    public static final String ID_PREFIX = "spark/";

    /** One Arrow stream object of the dataset, written on {@code host}. */
    public record Part(String id, long rows, String host) implements Serializable {
        public ObjectId objectId() {
            return ObjectId.fromHex(id);
        }
    }

    public static ObjectId idOf(String name) {
        return ObjectId.of(ID_PREFIX + name);
    }

    /** The id of part {@code seq} written by a task attempt of write {@code writeId}. */
    static ObjectId partId(String name, String writeId, int partition, long taskId, int seq) {
        return ObjectId.of(ID_PREFIX + name + "/" + writeId + "/" + partition + "-" + taskId + "-" + seq);
    }

    public long rows() {
        return parts.stream().mapToLong(Part::rows).sum();
    }

    String encode() {
        StringBuilder b = new StringBuilder(MAGIC).append('\n').append("schema ").append(schema.json()).append('\n');
        for (Part p : parts) {
            b.append("part ").append(p.id()).append(' ').append(p.rows()).append(' ').append(p.host()).append('\n');
        }
        return b.toString();
    }

    static Catalogue decode(String name, String text) {
        String[] lines = text.split("\n");
        if (lines.length < 2 || !lines[0].equals(MAGIC) || !lines[1].startsWith("schema ")) {
            throw new IllegalStateException("the catalogue of Depot dataset '" + name + "' is not a '" + MAGIC
                + "' catalogue");
        }
        StructType schema = (StructType) DataType.fromJson(lines[1].substring("schema ".length()));
        List<Part> parts = new ArrayList<>();
        for (int i = 2; i < lines.length; i++) {
            String[] f = lines[i].split(" ");
            if (f.length != 4 || !f[0].equals("part")) {
                throw new IllegalStateException("line " + (i + 1) + " of the catalogue of Depot dataset '" + name
                    + "' is not 'part ID ROWS HOST': " + lines[i]);
            }
            parts.add(new Part(f[1], Long.parseLong(f[2]), f[3]));
        }
        return new Catalogue(name, schema, List.copyOf(parts));
    }

    /** The catalogue of dataset {@code name}, or null when there is none. */
    public static Catalogue read(DepotClient client, String name) {
        try (ObjectView v = client.tryGet(idOf(name), 0)) {
            if (v == null) {
                return null;
            }
            return decode(name, new String(v.data().toArray(ValueLayout.JAVA_BYTE), StandardCharsets.UTF_8));
        }
    }

    /** Publishes this catalogue, replacing the previous one of the same name (readers that hold it keep it). */
    void publish(DepotClient client) {
        byte[] bytes = encode().getBytes(StandardCharsets.UTF_8);
        while (true) {
            client.delete(idOf(name));
            try {
                client.put(idOf(name), bytes);
                return;
            } catch (ObjectExistsException raced) {
                // another writer published in between: replace it too (last commit wins)
            }
        }
    }
}
