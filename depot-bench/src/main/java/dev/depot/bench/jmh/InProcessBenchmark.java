package dev.depot.bench.jmh;

import dev.depot.client.DepotClient;
import dev.depot.client.ObjectId;
import dev.depot.client.ObjectView;
import dev.depot.client.ObjectWriter;
import dev.depot.server.DepotServer;
import dev.depot.server.ServerConfig;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * In-process micro-benchmarks of the client's hot paths, with their heap baselines in the same class:
 * get/pin/release of a sealed 1 KiB object vs a {@link ConcurrentHashMap} lookup, and create/write/seal/delete of
 * 1 KiB vs copying 1 KiB into a new byte[] and putting it in a map. Run with
 * {@code java --enable-native-access=ALL-UNNAMED -cp CLASSPATH org.openjdk.jmh.Main InProcessBenchmark}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class InProcessBenchmark {
    private static final int SIZE = 1024;
    private static final ObjectId GET_ID = ObjectId.of("depot-bench/jmh/get");
    private static final ObjectId PUT_ID = ObjectId.of("depot-bench/jmh/put");

    private Path dir;
    private DepotServer server;
    private DepotClient client;
    private Arena arena;
    private MemorySegment payload;
    private final ConcurrentHashMap<ObjectId, byte[]> heap = new ConcurrentHashMap<>();

    @Setup(Level.Trial)
    public void setUp() {
        dir = Path.of("/dev/shm", "depot-bench-jmh-" + UUID.randomUUID());
        server = DepotServer.start(ServerConfig.defaults().withDirectory(dir).withCapacity(64L << 20)
            .withControlSocket(false), msg -> { });
        client = DepotClient.open(dir);
        arena = Arena.ofShared();
        payload = arena.allocate(SIZE);
        payload.fill((byte) 5);
        client.put(GET_ID, new byte[SIZE]);
        heap.put(GET_ID, new byte[SIZE]);
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
        try {
            client.close();
            server.close();
            arena.close();
        } finally {
            try (Stream<Path> s = Files.walk(dir)) {
                for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(p);
                }
            }
        }
    }

    @Benchmark
    public byte getPinRelease() {
        try (ObjectView v = client.get(GET_ID, 0)) {
            return v.data().get(ValueLayout.JAVA_BYTE, 0);
        }
    }

    @Benchmark
    public byte baselineHeapMapGet() {
        return heap.get(GET_ID)[0];
    }

    @Benchmark
    public boolean createSealDelete1KiB() {
        try (ObjectWriter w = client.create(PUT_ID, SIZE)) {
            MemorySegment.copy(payload, 0, w.data(), 0, SIZE);
            w.seal();
        }
        return client.delete(PUT_ID);
    }

    @Benchmark
    public byte[] baselineHeapCopyPutRemove1KiB() {
        byte[] copy = payload.toArray(ValueLayout.JAVA_BYTE);
        heap.put(PUT_ID, copy);
        return heap.remove(PUT_ID);
    }
}
