package dev.depot.bench;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.DoubleBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import org.HdrHistogram.Histogram;

/**
 * The child side of {@link Pipeline}'s baseline: the producer fills a {@code double[]}, serializes it (after the
 * 8-byte stamp) into a direct buffer and writes it to a TCP loopback socket; the consumer reads it whole and
 * deserializes it into a {@code double[]} before summing. In the lock-step phase the consumer answers one byte.
 */
final class PipelineTcpRoles {
    private PipelineTcpRoles() {
    }

    static void producer(int port, Pipeline.Plan plan, ChildIo io) throws IOException {
        try (SocketChannel c = SocketChannel.open(new InetSocketAddress(InetAddress.getLoopbackAddress(), port))) {
            c.setOption(StandardSocketOptions.TCP_NODELAY, true);
            double[] small = new double[PipelineDepotRoles.WARM_DOUBLES];
            JitWarmUp.repeat(() -> fill(small));
            double[] array = new double[(int) plan.doubles()];
            ByteBuffer message = ByteBuffer.allocateDirect((int) plan.size()).order(ByteOrder.nativeOrder());
            DoubleBuffer body = message.slice(Long.BYTES, message.capacity() - Long.BYTES)
                .order(ByteOrder.nativeOrder()).asDoubleBuffer();
            ByteBuffer ack = ByteBuffer.allocate(1);
            int go = plan.measuredFrom();
            for (int i = 0; i < plan.total(); i++) {
                if (i == go) {
                    io.say("READY");
                    io.expect("GO");
                }
                fill(array);
                message.clear();
                message.putLong(0, System.nanoTime());
                body.clear();
                body.put(array);
                UnixSockets.writeFully(c, message);
                if (plan.lockstep(i)) {
                    ack.clear();
                    UnixSockets.readFully(c, ack);
                }
            }
        }
        io.say("RESULT");
    }

    /** The producer's work in a method of its own, as in {@link PipelineDepotRoles} (compiled as a whole). */
    private static void fill(double[] array) {
        for (int j = 0; j < array.length; j++) {
            array[j] = j;
        }
    }

    private static double sum(double[] array) {
        double sum = 0;
        for (double v : array) {
            sum += v;
        }
        return sum;
    }

    static void consumer(Pipeline.Plan plan, ChildIo io) throws IOException {
        Histogram handoff = Latencies.histogram();
        long start = 0;
        long faults = 0;
        try (ServerSocketChannel server = ServerSocketChannel.open()) {
            server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            io.say("PORT port=" + ((InetSocketAddress) server.getLocalAddress()).getPort());
            try (SocketChannel c = server.accept()) {
                c.setOption(StandardSocketOptions.TCP_NODELAY, true);
                double[] small = new double[PipelineDepotRoles.WARM_DOUBLES];
                JitWarmUp.repeat(() -> sum(small));
                double[] array = new double[(int) plan.doubles()];
                ByteBuffer message = ByteBuffer.allocateDirect((int) plan.size()).order(ByteOrder.nativeOrder());
                DoubleBuffer body = message.slice(Long.BYTES, message.capacity() - Long.BYTES)
                    .order(ByteOrder.nativeOrder()).asDoubleBuffer();
                ByteBuffer ack = ByteBuffer.allocate(1);
                Pipeline.Progress progress = new Pipeline.Progress(io);
                int go = plan.measuredFrom();
                for (int i = 0; i < plan.total(); i++) {
                    if (i == go) {
                        io.say("READY");
                        io.expect("GO");
                        start = System.nanoTime();
                        faults = MinorFaults.now();
                    }
                    message.clear();
                    UnixSockets.readFully(c, message);
                    body.clear();
                    body.get(array);
                    long now = System.nanoTime();
                    if (plan.recordsHandoff(i)) {
                        Latencies.record(handoff, now - message.getLong(0));
                    }
                    Pipeline.check(sum(array), plan, i);
                    if (plan.lockstep(i)) {
                        ack.clear();
                        UnixSockets.writeFully(c, ack);
                    }
                    progress.consumed(i == plan.total() - 1);
                }
            }
        }
        io.say("RESULT handoff=" + Latencies.summary(handoff) + " nanos=" + (System.nanoTime() - start)
            + " faults=" + (MinorFaults.now() - faults));
    }
}
