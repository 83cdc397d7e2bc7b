package dev.depot.bench;

import java.util.Arrays;
import java.util.concurrent.TimeUnit;

/**
 * Entry point of the benchmarks' child JVMs: {@code ChildMain ROLE ARGS...}. The driver ({@link Child}) reads
 * our stdout and writes our stdin; a watchdog exits when the driver process is gone, so no child outlives it.
 */
public final class ChildMain {
    private ChildMain() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length == 0) {
            throw new IllegalArgumentException("usage: ChildMain ROLE ARGS...");
        }
        watchParent();
        String role = args[0];
        String[] rest = Arrays.copyOfRange(args, 1, args.length);
        ChildIo io = new ChildIo();
        switch (role) {
            case GetLatencyBench.ROLE -> GetLatencyBench.child(rest, io);
            case SmallPutBench.ROLE, SmallPutBench.SOCKET_ROLE -> SmallPutBench.child(role, rest, io);
            case WakeBench.ROLE -> WakeBench.child(rest, io);
            case Pipeline.PRODUCER_ROLE, Pipeline.CONSUMER_ROLE, Pipeline.TCP_PRODUCER_ROLE,
                 Pipeline.TCP_CONSUMER_ROLE -> Pipeline.child(role, rest, io);
            case ShareBench.WRITER_ROLE, ShareBench.READER_ROLE, ShareBench.COPY_ROLE -> ShareBench.child(role, rest, io);
            default -> throw new IllegalArgumentException("unknown child role '" + role + "'");
        }
        System.exit(0);
    }

    private static void watchParent() {
        long parent = ProcessHandle.current().parent().map(ProcessHandle::pid).orElse(-1L);
        Thread.ofPlatform().daemon().name("parent-watchdog").start(() -> {
            while (true) {
                try {
                    TimeUnit.MILLISECONDS.sleep(500);
                } catch (InterruptedException e) {
                    return;
                }
                long now = ProcessHandle.current().parent().map(ProcessHandle::pid).orElse(-1L);
                if (now != parent) {
                    System.err.println("depot-bench child: driver " + parent + " is gone; exiting");
                    Runtime.getRuntime().halt(3);
                }
            }
        });
    }
}
