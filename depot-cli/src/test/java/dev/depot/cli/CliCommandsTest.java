package dev.depot.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.depot.client.DepotClient;
import dev.depot.client.ObjectId;
import dev.depot.client.ObjectView;
import dev.depot.client.WriterIdDescriptor;
import dev.depot.client.testing.ChildJvm;
import dev.depot.client.testing.ClientStores;
import dev.depot.client.testing.Eventually;
import dev.depot.client.testing.TempStore;
import dev.depot.core.store.Store;
import dev.depot.server.DepotServer;
import dev.depot.server.ServerConfig;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The client commands, run in this JVM against a daemon started by the test. */
class CliCommandsTest {
    private static final long CAPACITY = 8 << 20;

    private final TempStore temp = new TempStore();
    private DepotServer server;
    private CliRunner depot;

    @TempDir
    Path files;

    @BeforeEach
    void startStore() {
        server = DepotServer.start(ServerConfig.defaults().withDirectory(temp.dir()).withCapacity(CAPACITY)
            .withControlSocket(false), msg -> { });
        depot = new CliRunner(temp.dir());
    }

    @AfterEach
    void stopStore() {
        try {
            if (server != null) {
                server.close();
            }
        } finally {
            temp.close();
        }
    }

    private static byte[] randomBytes(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    private String put(byte[] data, String... options) {
        CliRunner.Result r = depot.runWithInput(data, concat("put", options));
        assertEquals(0, r.status(), r::toString);
        return r.stdout().strip();
    }

    private static String[] concat(String first, String... rest) {
        String[] all = new String[rest.length + 1];
        all[0] = first;
        System.arraycopy(rest, 0, all, 1, rest.length);
        return all;
    }

    @Test
    void shouldPrintASealAsAJsonLineInWatch() throws Exception {
        var watch = java.util.concurrent.CompletableFuture.supplyAsync(() -> depot.run("watch", "--json", "--count", "2"));
        Store store = ClientStores.storeOf(server.client());
        Eventually.await("depot watch subscribing", () -> store.subscriberCount() > 0);
        ObjectId id = ObjectId.of("watched");
        server.client().put(id, new byte[123]);
        server.client().delete(id);
        CliRunner.Result r = watch.get(60, java.util.concurrent.TimeUnit.SECONDS);
        assertEquals(0, r.status(), r::toString);
        List<String> lines = r.stdout().lines().toList();
        assertEquals(2, lines.size(), r::toString);
        long pid = ProcessHandle.current().pid();
        assertTrue(lines.get(0).matches("\\{\"time\":\"[0-9T:.-]+Z\",\"event\":\"sealed\",\"id\":\"" + id.toHex()
            + "\",\"size_bytes\":123,\"metadata_bytes\":0,\"pid\":" + pid + "}"), lines.get(0));
        assertTrue(lines.get(1).contains("\"event\":\"deleted\",\"id\":\"" + id.toHex() + "\""), lines.get(1));
        assertEquals(0, store.subscriberCount(), "watch gave its subscriber slot back");
        assertEquals(2, depot.run("watch", "--count", "0").status());
    }

    @Test
    void shouldKeepObjectsReadWithGetOverOlderUnreadOnesWhenPutsNeedRoom() {
        int size = 640 << 10;  // ten fill the 8 MiB store to 78 %; four more need room
        List<String> first = new java.util.ArrayList<>();
        for (int i = 0; i < 10; i++) {
            first.add(put(randomBytes(size, i)));
        }
        for (String id : first.subList(0, 2)) {
            assertEquals(0, depot.run("get", id).status());
        }
        for (int i = 0; i < 4; i++) {
            put(randomBytes(size, 100 + i));
        }
        long evicted = server.client().stats().evictionCount();
        assertTrue(evicted > 0, "the puts needed room");
        List<Boolean> present = first.stream().map(id -> depot.run("get", id).status() == 0).toList();
        assertEquals(List.of(true, true), present.subList(0, 2), "the two objects read survive: " + present);
        for (int i = 2; i < 10; i++) {
            assertEquals(i - 2 >= evicted, present.get(i), evicted + " evicted, oldest first: " + present);
        }
    }

    @Test
    void shouldRoundTripStdinToStdout() {
        byte[] data = new byte[256 * 3];
        for (int i = 0; i < data.length; i++) {
            data[i] = (byte) i;
        }
        String id = put(data);
        assertTrue(id.matches("[0-9a-f]{40}"), id);
        CliRunner.Result got = depot.run("get", id);
        assertEquals(0, got.status(), got::toString);
        assertArrayEquals(data, got.stdoutBytes());
        assertEquals("", got.stderr());
    }

    @Test
    void shouldRoundTripFilesLargerThanOneChunk() throws IOException {
        byte[] data = randomBytes(3 * PutCommand.CHUNK + 17, 7);
        Path in = Files.write(files.resolve("in.bin"), data);
        Path out = files.resolve("out.bin");
        CliRunner.Result put = depot.run("put", in.toString());
        assertEquals(0, put.status(), put::toString);
        String id = put.stdout().strip();
        CliRunner.Result get = depot.run("get", id, "-o", out.toString());
        assertEquals(0, get.status(), get::toString);
        assertEquals(0, get.stdoutBytes().length);
        assertArrayEquals(data, Files.readAllBytes(out));
        assertArrayEquals(data, depot.run("get", id).stdoutBytes());
    }

    @Test
    void shouldStoreAnEmptyObject() {
        String id = put(new byte[0]);
        CliRunner.Result got = depot.run("get", id);
        assertEquals(0, got.status(), got::toString);
        assertEquals(0, got.stdoutBytes().length);
    }

    @Test
    void shouldUseTheIdDerivedFromANameAndKeepMetadata() {
        String id = put("hello".getBytes(StandardCharsets.UTF_8), "--name", "greeting", "--meta", "lang=en");
        assertEquals(ObjectId.of("greeting").toHex(), id);
        assertEquals("hello", depot.run("get", "--name", "greeting").stdout());
        Map<String, Object> info = JsonText.parseArrayOfObjects(depot.run("ls", "--json").stdout()).getFirst();
        assertEquals(7L, info.get("metadata_bytes"));
    }

    @Test
    void shouldUseAnExplicitHexId() {
        String hex = ObjectId.random().toHex();
        assertEquals(hex, put(new byte[] {1}, "--id", hex));
        assertArrayEquals(new byte[] {1}, depot.run("get", hex).stdoutBytes());
    }

    @Test
    void shouldListObjectsAsOneJsonArray() {
        String a = put(new byte[100]);
        String b = put(new byte[2000]);
        CliRunner.Result r = depot.run("ls", "--json");
        assertEquals(0, r.status(), r::toString);
        List<Map<String, Object>> objects = JsonText.parseArrayOfObjects(r.stdout());
        assertEquals(2, objects.size());
        List<String> lines = r.stdout().lines().toList();
        assertEquals(4, lines.size(), "[, one line per object, ]: " + r.stdout());
        assertEquals("[", lines.getFirst());
        assertTrue(lines.get(1).startsWith("{\"id\":\"") && lines.get(1).endsWith("},"), lines::toString);
        assertTrue(lines.get(2).startsWith("{\"id\":\"") && lines.get(2).endsWith("}"), lines::toString);
        assertEquals("]", lines.getLast());
        for (Map<String, Object> o : objects) {
            assertEquals(List.of("id", "size_bytes", "metadata_bytes", "state", "pins", "created", "last_access"),
                List.copyOf(o.keySet()));
            assertEquals("sealed", o.get("state"));
            assertEquals(0L, o.get("pins"));
        }
        Map<String, Long> sizes = Map.of((String) objects.get(0).get("id"), (Long) objects.get(0).get("size_bytes"),
            (String) objects.get(1).get("id"), (Long) objects.get(1).get("size_bytes"));
        assertEquals(Map.of(a, 100L, b, 2000L), sizes);
    }

    @Test
    void shouldListAnEmptyStoreAsAnEmptyArray() {
        assertEquals("[]\n", depot.run("ls", "--json").stdout());
    }

    @Test
    void shouldListObjectsAsATable() {
        String id = put(new byte[64 << 10]);
        CliRunner.Result r = depot.run("ls");
        assertEquals(0, r.status(), r::toString);
        List<String> lines = r.stdout().lines().toList();
        assertEquals(2, lines.size(), r::toString);
        assertTrue(lines.get(0).startsWith("ID"), lines.get(0));
        assertTrue(lines.get(1).startsWith(id) && lines.get(1).contains("64.0 KiB") && lines.get(1).contains("sealed"),
            lines.get(1));
    }

    @Test
    void shouldPrintStatsAsOneJsonObjectWithEveryKey() {
        put(new byte[1000]);
        CliRunner.Result r = depot.run("stat", "--json");
        assertEquals(0, r.status(), r::toString);
        assertEquals(1, r.stdout().strip().lines().count());
        Map<String, Object> s = JsonText.parseObject(r.stdout());
        for (String key : List.of("capacity_bytes", "used_bytes", "free_bytes", "pinned_bytes", "object_count",
            "client_count", "eviction_count", "unsealed_bytes", "largest_free_block", "fragmentation", "daemon_pid",
            "sealed_count", "max_objects", "evicted_bytes", "directory")) {
            assertTrue(s.containsKey(key), () -> "no " + key + " in " + s);
        }
        assertEquals(CAPACITY, s.get("capacity_bytes"));
        assertEquals(1L, s.get("object_count"));
        assertEquals(ProcessHandle.current().pid(), s.get("daemon_pid"));
        assertEquals(temp.dir().toString(), s.get("directory"));
        assertEquals(CAPACITY, (Long) s.get("used_bytes") + (Long) s.get("free_bytes"));
    }

    @Test
    void shouldPrintAHumanSummary() {
        CliRunner.Result r = depot.run("stat");
        assertEquals(0, r.status(), r::toString);
        assertTrue(r.stdout().contains("capacity    8.0 MiB"), r::toString);
        assertTrue(r.stdout().contains("pid " + ProcessHandle.current().pid()), r::toString);
    }

    @Test
    void shouldRemoveObjectsByIdAndName() {
        String a = put(new byte[10]);
        put(new byte[10], "--name", "b");
        CliRunner.Result r = depot.run("rm", a, "--name", "b");
        assertEquals(0, r.status(), r::toString);
        assertEquals(3, depot.run("get", a).status());
        assertEquals(List.of(), JsonText.parse(depot.run("ls", "--json").stdout()));
    }

    @Test
    void shouldRemoveTheOthersAndExit3WhenAnObjectIsMissing() {
        String a = put(new byte[10]);
        String missing = ObjectId.random().toHex();
        CliRunner.Result r = depot.run("rm", missing, a);
        assertEquals(3, r.status(), r::toString);
        assertTrue(r.stderr().startsWith("depot: object " + missing + " does not exist"), r::toString);
        assertEquals(3, depot.run("get", a).status());
    }

    @Test
    void shouldEvictUnpinnedObjects() {
        put(new byte[100 << 10]);
        put(new byte[100 << 10]);
        CliRunner.Result r = depot.run("evict", "64k");
        assertEquals(0, r.status(), r::toString);
        assertTrue(r.stdout().matches("evicted \\d+ bytes \\(.*\\)\\R"), r::toString);
        long freed = Long.parseLong(r.stdout().split(" ")[1]);
        assertTrue(freed >= 64 << 10, r::toString);
        Map<String, Object> s = JsonText.parseObject(depot.run("stat", "--json").stdout());
        assertEquals(1L, s.get("object_count"));
        assertTrue((Long) s.get("eviction_count") >= 1, s::toString);
    }

    @Test
    void shouldWaitForAnObjectSealedLater() throws InterruptedException {
        CliRunner.Result[] got = new CliRunner.Result[1];
        Thread getter = Thread.ofPlatform().start(() -> got[0] = depot.run("get", "--name", "later", "--timeout", "60000"));
        put("late data".getBytes(StandardCharsets.UTF_8), "--name", "later");
        getter.join();
        assertEquals(0, got[0].status(), got[0]::toString);
        assertEquals("late data", got[0].stdout());
    }

    @Test
    void shouldShowPinsOfOpenViews() {
        String id = put(new byte[4096]);
        try (DepotClient client = DepotClient.open(temp.dir());
             ObjectView view = client.get(ObjectId.fromHex(id), 0)) {
            Map<String, Object> info = JsonText.parseArrayOfObjects(depot.run("ls", "--json").stdout()).getFirst();
            assertEquals(1L, info.get("pins"));
            Map<String, Object> s = JsonText.parseObject(depot.run("stat", "--json").stdout());
            assertEquals(view.size(), s.get("pinned_bytes"));
        }
    }

    @Test
    void shouldExit3WhenTheObjectIsMissing() {
        String id = ObjectId.random().toHex();
        CliRunner.Result r = depot.run("get", id);
        assertEquals(3, r.status(), r::toString);
        assertTrue(r.stderr().startsWith("depot: object " + id + " does not exist"), r::toString);
        assertTrue(r.stderr().contains("depot ls"), r::toString);
        assertEquals(1, r.stderr().lines().count(), r::toString);
        assertEquals(3, depot.run("get", id, "--timeout", "20").status());
    }

    @Test
    void shouldExit4WhenTheObjectDoesNotFit() {
        byte[] big = new byte[(int) CAPACITY + 1];
        CliRunner.Result r = depot.runWithInput(big, "put");
        assertEquals(4, r.status(), r::toString);
        assertTrue(r.stderr().startsWith("depot: ") && r.stderr().contains("raise --capacity"), r::toString);
        put(new byte[6 << 20]);
        CliRunner.Result noEvict = depot.runWithInput(new byte[4 << 20], "put", "--no-evict");
        assertEquals(4, noEvict.status(), noEvict::toString);
    }

    @Test
    void shouldExit1WhenTheIdExistsAlready() {
        String id = put(new byte[1]);
        CliRunner.Result r = depot.runWithInput(new byte[1], "put", "--id", id);
        assertEquals(1, r.status(), r::toString);
        assertTrue(r.stderr().startsWith("depot: object " + id + " exists already"), r::toString);
    }

    @Test
    void shouldExit2OnUsageErrorsWithAShortUsage() {
        for (String[] argv : List.of(new String[] {"frobnicate"}, new String[] {"get"}, new String[] {"get", "xyz"},
            new String[] {"ls", "--bogus"}, new String[] {"put", "--id", "00", "--name", "n"},
            new String[] {"evict"}, new String[] {"evict", "lots"}, new String[] {"rm"},
            new String[] {"get", "--timeout"}, new String[] {"serve", "--max-clients", "1"},
            new String[] {"serve", "--max-objects", "0"}, new String[] {"serve", "--capacity", "1k"})) {
            CliRunner.Result r = depot.run(argv);
            assertEquals(2, r.status(), () -> String.join(" ", argv) + ": " + r);
            assertTrue(r.stderr().startsWith("depot: "), r::toString);
            assertTrue(r.stderr().contains("usage: depot"), r::toString);
        }
        CliRunner.Result none = CliRunner.runExactly(new byte[0]);
        assertEquals(2, none.status(), none::toString);
        assertTrue(none.stderr().startsWith("depot: no command given"), none::toString);
    }

    @Test
    void shouldPrintHelpForEveryCommand() {
        CliRunner.Result top = depot.run("--help");
        assertEquals(0, top.status());
        for (String name : Main.commandNames()) {
            assertTrue(top.stdout().contains("  " + name + " "), name);
            CliRunner.Result r = depot.run(name, "--help");
            assertEquals(0, r.status(), r::toString);
            assertTrue(r.stdout().startsWith("usage: depot " + name), r::toString);
            assertEquals(r.stdout(), depot.run("help", name).stdout());
        }
    }

    @Test
    void shouldAcceptDirAfterTheCommandName() {
        put(new byte[5]);
        CliRunner.Result r = CliRunner.runExactly(new byte[0], "stat", "--json", "--dir", temp.dir().toString());
        assertEquals(0, r.status(), r::toString);
        assertEquals(1L, JsonText.parseObject(r.stdout()).get("object_count"));
        CliRunner.Result eq = CliRunner.runExactly(new byte[0], "--dir=" + temp.dir(), "ls", "--json");
        assertEquals(1, JsonText.parseArrayOfObjects(eq.stdout()).size(), eq::toString);
    }

    @Test
    void shouldReportAHealthyStoreAndRefuseABadHeader() throws IOException {
        put(new byte[] {1, 2, 3});
        CliRunner.Result ok = depot.run("doctor");
        assertEquals(0, ok.status(), ok::toString);
        assertTrue(ok.stdout().contains("ok: no problems found"), ok::toString);
        assertTrue(!ok.stdout().contains("repaired"), ok::toString);
        CliRunner.Result check = depot.run("doctor", "--check");
        assertEquals(0, check.status(), check::toString);
        try (TempStore broken = new TempStore()) {
            broken.create(1 << 20).close();
            Path file = broken.dir().resolve("store.depot");
            byte[] bytes = java.nio.file.Files.readAllBytes(file);
            bytes[0] = 'X';
            java.nio.file.Files.write(file, bytes);
            CliRunner.Result bad = new CliRunner(broken.dir()).run("doctor");
            assertEquals(1, bad.status(), bad::toString);
            assertTrue(bad.stdout().contains("is not a Depot store"), bad::toString);
            assertTrue(bad.stderr().contains("cannot be repaired"), bad::toString);
        }
    }

    @Test
    void shouldReportAndThenDeleteAShuffleWhoseCoordinatorDied() throws Exception {
        try (ChildJvm coordinator = ChildJvm.start(AbandonedShuffleMain.class, temp.dir().toString(), "lost-1")) {
            coordinator.awaitLine("created", 60);
            long pid = coordinator.pid();
            CliRunner.Result alive = depot.run("doctor", "--check");
            assertEquals(0, alive.status(), alive::toString);
            coordinator.kill();
            var objects = server.client().list();
            long bytes = objects.stream().mapToLong(o -> o.dataSize()).sum();
            String what = "abandoned shuffle lost-1 (creator pid " + pid + " gone; " + objects.size() + " objects, "
                + bytes + " bytes)";
            CliRunner.Result check = depot.run("doctor", "--check");
            assertEquals(1, check.status(), check::toString);
            assertTrue(check.stdout().contains("found: " + what), check::toString);
            assertEquals(objects.stream().map(o -> o.id()).toList(), server.client().list().stream().map(o -> o.id())
                .toList(), "--check changes nothing");
            CliRunner.Result repair = depot.run("doctor");
            assertEquals(0, repair.status(), repair::toString);
            assertTrue(repair.stdout().contains("repaired: deleted " + what), repair::toString);
            assertEquals(List.of(), server.client().list());
            CliRunner.Result again = depot.run("doctor");
            assertTrue(again.stdout().contains("ok: no problems found"), again::toString);
        }
    }

    @Test
    void shouldReportAndThenDeleteTheObjectsOfWritersThatAreGone() throws Exception {
        Process gone = new ProcessBuilder("sleep", "60").start();
        long goneIdentity = dev.depot.core.sys.ProcessIdentity.compute(gone.pid());
        gone.destroyForcibly().waitFor();
        ObjectId deadOne = WriterIdDescriptor.idOf(goneIdentity, 1);
        ObjectId deadTwo = WriterIdDescriptor.idOf(goneIdentity, 2);
        ObjectId live = WriterIdDescriptor.idOf(dev.depot.core.sys.ProcessIdentity.self(), 3);
        for (ObjectId id : List.of(deadOne, deadTwo, live)) {
            try (var w = server.client().create(id, 100, new byte[0], DepotClient.CreateOption.KEEP)) {
                w.seal();
            }
        }
        assertEquals(goneIdentity, WriterIdDescriptor.writerIdentity(deadOne));
        String what = "2 object(s), 200 bytes, of Dask worker results and shuffle slices whose writer is gone (pid "
            + gone.pid() + ")";
        CliRunner.Result check = depot.run("doctor", "--check");
        assertEquals(1, check.status(), check::toString);
        assertTrue(check.stdout().contains("found: " + what), check::toString);
        assertEquals(3, server.client().list().size(), "--check changes nothing");
        CliRunner.Result repair = depot.run("doctor");
        assertEquals(0, repair.status(), repair::toString);
        assertTrue(repair.stdout().contains("repaired: deleted " + what), repair::toString);
        assertEquals(List.of(live), server.client().list().stream().map(o -> o.id()).toList(), "a live writer's stays");
    }

    @Test
    void shouldExit1WithAHintWhenThereIsNoStore() {
        try (TempStore none = new TempStore()) {
            for (String cmd : List.of("ls", "stat", "put")) {
                CliRunner.Result r = new CliRunner(none.dir()).run(cmd);
                assertEquals(1, r.status(), r::toString);
                assertTrue(r.stderr().startsWith("depot: no store at " + none.dir() + ": start one with `depot serve"),
                    r::toString);
                assertEquals(1, r.stderr().lines().count(), r::toString);
            }
        }
    }

    @Test
    void shouldExit1NamingTheFileOnIoErrors() {
        Path nowhere = files.resolve("no-such-dir").resolve("f");
        CliRunner.Result put = depot.run("put", nowhere.toString());
        assertEquals(1, put.status(), put::toString);
        assertEquals("depot: no such file or directory: " + nowhere + "; check the path", put.stderr().strip());
        String id = put(new byte[3]);
        CliRunner.Result get = depot.run("get", id, "-o", nowhere.toString());
        assertEquals(1, get.status(), get::toString);
        assertEquals("depot: no such file or directory: " + nowhere + "; check the path", get.stderr().strip());
    }

    @Test
    void shouldRefuseToServeAStoreThatADaemonServes() {
        CliRunner.Result r = depot.run("serve");
        assertEquals(1, r.status(), r::toString);
        assertTrue(r.stderr().startsWith("depot: a daemon (pid " + ProcessHandle.current().pid() + ") already serves"),
            r::toString);
    }

    @Test
    void shouldCallACapacityBeyondTheLimitTooLargeInsteadOfOverflowing() {
        CliRunner.Result r = depot.run("serve", "--capacity", "9223372036854775807");
        assertEquals(2, r.status(), r::toString);
        assertTrue(r.stderr().startsWith("depot: --capacity 9223372036854775807 is too large (at most 1.0 EiB)"),
            r::toString);
        assertTrue(!r.stderr().contains("-9"), r::toString);
    }

    @Test
    void shouldSayThatADirectoryCannotBePut() throws IOException {
        Path dir = Files.createDirectory(files.resolve("a-dir"));
        CliRunner.Result r = depot.run("put", dir.toString());
        assertEquals(1, r.status(), r::toString);
        assertTrue(r.stderr().startsWith("depot: " + dir + " is a directory; `depot put` stores one file"), r::toString);
    }

    @Test
    void shouldWaitForeverForATimeoutTooLargeToRepresent() throws Exception {
        var result = new java.util.concurrent.CompletableFuture<CliRunner.Result>();
        Thread getter = Thread.ofPlatform().start(() -> result.complete(
            depot.run("get", "--name", "later", "--timeout", "9223372036854775807")));
        try {
            assertThrows(java.util.concurrent.TimeoutException.class,
                () -> result.get(300, java.util.concurrent.TimeUnit.MILLISECONDS), "returned at once");
        } finally {
            put("late".getBytes(StandardCharsets.UTF_8), "--name", "later");
            getter.join(10_000);
        }
        CliRunner.Result r = result.getNow(null);
        assertEquals(0, r.status(), r::toString);
        assertEquals("late", r.stdout());
    }

    @Test
    void shouldRefuseAStoreDirectoryOthersCanEnterAndSayANonDirectoryIsNotOne() throws IOException {
        try (TempStore open = new TempStore()) {
            Files.createDirectory(open.dir());
            Files.setPosixFilePermissions(open.dir(), java.nio.file.attribute.PosixFilePermissions.fromString("rwxrwxrwx"));
            for (String cmd : List.of("serve", "stat", "doctor")) {
                CliRunner.Result r = new CliRunner(open.dir()).run(cmd);
                assertEquals(1, r.status(), r::toString);
                assertTrue(r.stderr().startsWith("depot: the store directory " + open.dir() + " (owner "), r::toString);
                assertTrue(r.stderr().contains("has mode 0777"), r::toString);
            }
        }
        Path plain = Files.write(files.resolve("plain"), new byte[1]);
        CliRunner.Result r = new CliRunner(plain).run("serve");
        assertEquals(1, r.status(), r::toString);
        assertTrue(r.stderr().startsWith("depot: " + plain + " is not a directory"), r::toString);
    }
}
