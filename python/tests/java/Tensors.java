import dev.depot.client.ArrayMetadata;
import dev.depot.client.DepotClient;
import dev.depot.client.ObjectId;
import dev.depot.client.ObjectView;
import dev.depot.client.ObjectWriter;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HexFormat;

/**
 * Run by python/tests/torch/test_torch_java.py (java's source launcher): Java's side of tensors shared through the
 * array format.
 *
 * <p>{@code read DIR NAME...}: for each object NAME (written by Python's {@code put_tensor}), prints
 * "NAME dtype [shape] extra-hex value..." with the values read from the object's memory in C order.
 *
 * <p>{@code write DIR PREFIX}: writes the arrays PREFIX-f32 (float32 3x4, i/2), PREFIX-i64 (int64 2x3, i*i-3),
 * PREFIX-u8 (uint8 5, 50*i), PREFIX-f64 (a float64 scalar, 2.25) and PREFIX-bf16 (bfloat16 [1.5, -2.0]: uint16
 * bits with the torch dtype tag "DPT1" after the header), then prints "written".
 */
public class Tensors {
    public static void main(String[] args) throws Exception {
        try (DepotClient client = DepotClient.open(Path.of(args[1]))) {
            if (args[0].equals("write")) {
                write(client, args[2]);
                System.out.println("written");
                return;
            }
            for (int a = 2; a < args.length; a++) {
                try (ObjectView view = client.get(ObjectId.of(args[a]), 10_000)) {
                    byte[] metadata = view.metadata();
                    ArrayMetadata array = ArrayMetadata.decode(metadata);
                    if (array.byteSize() != view.size()) {
                        throw new IllegalStateException(args[a] + ": header says " + array.byteSize()
                            + " bytes, object holds " + view.size());
                    }
                    StringBuilder line = new StringBuilder(args[a]).append(' ').append(array.dtype()).append(' ')
                        .append(Arrays.toString(array.shape()).replace(" ", "")).append(' ');
                    byte[] extra = Arrays.copyOfRange(metadata, array.headerLength(), metadata.length);
                    line.append(extra.length == 0 ? "-" : HexFormat.of().formatHex(extra));
                    for (long i = 0; i < array.elementCount(); i++) {
                        line.append(' ').append(element(view.data(), array.dtype(), i));
                    }
                    System.out.println(line);
                }
            }
        }
    }

    static String element(MemorySegment data, String dtype, long i) {
        return switch (dtype) {
            case "<f4" -> String.valueOf(data.getAtIndex(ValueLayout.JAVA_FLOAT, i));
            case "<f8" -> String.valueOf(data.getAtIndex(ValueLayout.JAVA_DOUBLE, i));
            case "<i8" -> String.valueOf(data.getAtIndex(ValueLayout.JAVA_LONG, i));
            case "<i4" -> String.valueOf(data.getAtIndex(ValueLayout.JAVA_INT, i));
            case "<i2" -> String.valueOf(data.getAtIndex(ValueLayout.JAVA_SHORT, i));
            case "<u2" -> String.valueOf(Short.toUnsignedInt(data.getAtIndex(ValueLayout.JAVA_SHORT, i)));
            case "|u1" -> String.valueOf(Byte.toUnsignedInt(data.get(ValueLayout.JAVA_BYTE, i)));
            case "|b1" -> String.valueOf(data.get(ValueLayout.JAVA_BYTE, i) != 0);
            default -> throw new IllegalArgumentException("no reader for dtype " + dtype);
        };
    }

    static void write(DepotClient client, String prefix) {
        ArrayMetadata f32 = ArrayMetadata.of(ArrayMetadata.FLOAT32, 3, 4);
        try (ObjectWriter w = client.create(ObjectId.of(prefix + "-f32"), f32.byteSize(), f32.encode())) {
            for (int i = 0; i < 12; i++) {
                w.data().setAtIndex(ValueLayout.JAVA_FLOAT, i, i / 2f);
            }
            w.seal();
        }
        ArrayMetadata i64 = ArrayMetadata.of(ArrayMetadata.INT64, 2, 3);
        try (ObjectWriter w = client.create(ObjectId.of(prefix + "-i64"), i64.byteSize(), i64.encode())) {
            for (int i = 0; i < 6; i++) {
                w.data().setAtIndex(ValueLayout.JAVA_LONG, i, (long) i * i - 3);
            }
            w.seal();
        }
        ArrayMetadata u8 = ArrayMetadata.of(ArrayMetadata.UINT8, 5);
        try (ObjectWriter w = client.create(ObjectId.of(prefix + "-u8"), u8.byteSize(), u8.encode())) {
            for (int i = 0; i < 5; i++) {
                w.data().set(ValueLayout.JAVA_BYTE, i, (byte) (50 * i));
            }
            w.seal();
        }
        ArrayMetadata f64 = ArrayMetadata.of(ArrayMetadata.FLOAT64);
        try (ObjectWriter w = client.create(ObjectId.of(prefix + "-f64"), f64.byteSize(), f64.encode())) {
            w.data().set(ValueLayout.JAVA_DOUBLE, 0, 2.25);
            w.seal();
        }
        // bfloat16 has no NumPy type: its bits as "<u2", and after the header the tag naming torch's dtype
        byte[] name = "bfloat16".getBytes(StandardCharsets.US_ASCII);
        byte[] tag = new byte[5 + name.length];
        System.arraycopy("DPT1".getBytes(StandardCharsets.US_ASCII), 0, tag, 0, 4);
        tag[4] = (byte) name.length;
        System.arraycopy(name, 0, tag, 5, name.length);
        ArrayMetadata bf16 = ArrayMetadata.of("<u2", 2);
        try (ObjectWriter w = client.create(ObjectId.of(prefix + "-bf16"), bf16.byteSize(), bf16.encode(tag))) {
            w.data().setAtIndex(ValueLayout.JAVA_SHORT, 0, (short) 0x3FC0); // 1.5
            w.data().setAtIndex(ValueLayout.JAVA_SHORT, 1, (short) 0xC000); // -2.0
            w.seal();
        }
    }
}
