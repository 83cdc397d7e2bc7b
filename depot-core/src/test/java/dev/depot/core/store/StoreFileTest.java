package dev.depot.core.store;

import static dev.depot.core.store.StoreHeaderDescriptor.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.depot.core.testing.ShmDir;
import dev.depot.errors.DepotException;
import dev.depot.errors.ErrorCode;
import dev.depot.errors.StoreFormatException;
import dev.depot.errors.StoreNotFoundException;
import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

class StoreFileTest {
    static final StoreLayout SMALL = StoreLayout.forCapacity(64 * 1024, 4, 16, 16);

    private static Path createClosed(Path dir) throws IOException {
        try (StoreFile f = StoreFile.create(dir, SMALL)) {
            return f.path();
        }
    }

    private static void pokeLong(Path file, long offset, long value) throws IOException {
        poke(file, offset, ByteBuffer.allocate(8).order(ByteOrder.nativeOrder()).putLong(0, value));
    }

    private static void pokeInt(Path file, long offset, int value) throws IOException {
        poke(file, offset, ByteBuffer.allocate(4).order(ByteOrder.nativeOrder()).putInt(0, value));
    }

    private static void poke(Path file, long offset, ByteBuffer b) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
            ch.write(b, offset);
        }
    }

    @Test
    void shouldSeeTheMappedFilesLengthNowAndNothingOnceThePathNamesAnotherFile() throws IOException {
        try (ShmDir dir = new ShmDir(); StoreFile file = StoreFile.create(dir.path(), SMALL)) {
            assertEquals(SMALL.fileLength(), file.currentLength());
            try (FileChannel ch = FileChannel.open(file.path(), StandardOpenOption.WRITE)) {
                ch.truncate(8192);  // nothing touches the lost pages here
            }
            assertEquals(8192, file.currentLength(), "truncated under the mapping");
            Path other = Files.write(dir.path().resolve("other"), new byte[100]);
            Files.move(other, file.path(), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            assertEquals(-1, file.currentLength(), "the path names another file now");
            Files.delete(file.path());
            assertEquals(-1, file.currentLength(), "removed");
        }
    }

    @Test
    void shouldOpenTheStoreItCreatedWithTheSameLayout() throws IOException {
        try (ShmDir dir = new ShmDir()) {
            try (StoreFile created = StoreFile.create(dir.path(), SMALL)) {
                assertEquals(StoreFile.fileIn(dir.path()), created.path());
                assertEquals(SMALL, created.layout());
            }
            try (StoreFile opened = StoreFile.open(dir.path())) {
                assertEquals(SMALL, opened.layout());
                assertEquals(SMALL.fileLength(), Files.size(opened.path()));
                assertEquals(MAGIC, opened.header().get(ValueLayout.JAVA_LONG, MAGIC_OFFSET));
                assertEquals(MAJOR_VERSION, opened.header().get(ValueLayout.JAVA_INT, MAJOR_VERSION_OFFSET));
                assertTrue(opened.header().get(ValueLayout.JAVA_LONG, CREATE_TIME_OFFSET) > 0);
                assertEquals(SMALL.heapLength(), opened.heap().byteSize());
                assertEquals((long) SMALL.indexSlots() * 64, opened.index().byteSize());
                assertEquals(SMALL.indexOffset() - SMALL.clientTableOffset(), opened.clientTable().byteSize());
            }
            try (Stream<Path> files = Files.list(dir.path())) {
                assertEquals(1, files.count(), "no temporary file is left behind");
            }
        }
    }

    @Test
    void shouldCreateTheFileWithMode0600InADirectoryWithMode0700() throws IOException {
        try (ShmDir dir = new ShmDir()) {
            Path file = createClosed(dir.path());
            assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(file)));
            assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.path())));
        }
    }

    @Test
    void shouldRefuseToCreateOverAnExistingStore() throws IOException {
        try (ShmDir dir = new ShmDir()) {
            createClosed(dir.path());
            assertThrows(FileAlreadyExistsException.class, () -> StoreFile.create(dir.path(), SMALL));
            StoreFile.open(dir.path()).close();
        }
    }

    @Test
    void shouldNameTheDirectoryAndDepotServeWhenThereIsNoStore() {
        try (ShmDir dir = new ShmDir()) {
            var e = assertThrows(StoreNotFoundException.class, () -> StoreFile.open(dir.path()));
            assertEquals("no store at " + dir.path() + ": start one with `depot serve --dir " + dir.path()
                + "` or open it embedded", e.getMessage());
            assertEquals(ErrorCode.STORE_NOT_FOUND, e.code());
        }
    }

    @Test
    void shouldRejectAFileShorterThanItsHeader() throws IOException {
        try (ShmDir dir = new ShmDir()) {
            dir.createPrivate();
            Path file = StoreFile.fileIn(dir.path());
            Files.write(file, new byte[100]);
            Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
            var e = assertThrows(StoreFormatException.class, () -> StoreFile.open(dir.path()));
            assertEquals("store file " + file + " is truncated: 100 bytes, less than its 4096-byte header; remove it"
                + " and create the store again", e.getMessage());
        }
    }

    @Test
    void shouldRejectAFileCutShortAfterItsHeader() throws IOException {
        try (ShmDir dir = new ShmDir()) {
            Path file = createClosed(dir.path());
            long cut = SMALL.fileLength() - 4096;
            try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
                ch.truncate(cut);
            }
            var e = assertThrows(StoreFormatException.class, () -> StoreFile.open(dir.path()));
            assertEquals("store file " + file + " is truncated or resized: its header says " + SMALL.fileLength()
                + " bytes but the file has " + cut + "; remove the store directory and create it again", e.getMessage());
        }
    }

    @Test
    void shouldRejectAHeaderWhoseFileLengthDiffersFromTheFile() throws IOException {
        try (ShmDir dir = new ShmDir()) {
            Path file = createClosed(dir.path());
            pokeLong(file, FILE_LENGTH_OFFSET, SMALL.fileLength() * 2);
            var e = assertThrows(StoreFormatException.class, () -> StoreFile.open(dir.path()));
            assertEquals("store file " + file + " is truncated or resized: its header says " + SMALL.fileLength() * 2
                + " bytes but the file has " + SMALL.fileLength() + "; remove the store directory and create it again",
                e.getMessage());
        }
    }

    @Test
    void shouldRejectAFileWithoutTheMagic() throws IOException {
        try (ShmDir dir = new ShmDir()) {
            Path file = createClosed(dir.path());
            pokeLong(file, MAGIC_OFFSET, 0x1234L);
            var e = assertThrows(StoreFormatException.class, () -> StoreFile.open(dir.path()));
            assertEquals(file + " is not a Depot store (magic 0x1234, expected 0x4f5453544f504544)", e.getMessage());
        }
    }

    @Test
    void shouldRejectAnotherMajorVersionNamingBoth() throws IOException {
        try (ShmDir dir = new ShmDir()) {
            Path file = createClosed(dir.path());
            pokeInt(file, MAJOR_VERSION_OFFSET, MAJOR_VERSION + 1);
            pokeInt(file, MINOR_VERSION_OFFSET, 3);
            var e = assertThrows(StoreFormatException.class, () -> StoreFile.open(dir.path()));
            assertEquals(file + " is format version " + (MAJOR_VERSION + 1) + ".3 but this Depot reads " + MAJOR_VERSION
                + ".x; use a matching Depot or remove the store", e.getMessage());
        }
    }

    @Test
    void shouldGiveUpOnAFileWhoseVersionWasNeverPublished() throws IOException {
        try (ShmDir dir = new ShmDir()) {
            Path file = createClosed(dir.path());
            pokeInt(file, MAJOR_VERSION_OFFSET, 0);
            var e = assertThrows(StoreFormatException.class, () -> StoreFile.open(dir.path()));
            assertEquals(file + " has no version: its creator died while writing it; remove it", e.getMessage());
        }
    }

    @Test
    void shouldRejectAnInconsistentRegionTable() throws IOException {
        try (ShmDir dir = new ShmDir()) {
            Path file = createClosed(dir.path());
            pokeLong(file, INDEX_OFFSET_OFFSET, SMALL.indexOffset() + 64);
            var e = assertThrows(StoreFormatException.class, () -> StoreFile.open(dir.path()));
            var corrupt = new StoreLayout(SMALL.fileLength(), SMALL.clientTableOffset(), SMALL.maxClients(),
                SMALL.pinsPerClient(), SMALL.indexOffset() + 64, SMALL.indexSlots(), SMALL.notificationOffset(), SMALL.heapOffset(),
                SMALL.heapLength());
            assertEquals("store file " + file + " has a corrupt header: region table " + corrupt
                + " is inconsistent (expected " + SMALL + "); run `depot doctor`", e.getMessage());
        }
    }

    @Test
    void shouldRejectARegionTableWithImpossibleSizesNamingTheFile() throws IOException {
        try (ShmDir dir = new ShmDir()) {
            Path file = createClosed(dir.path());
            pokeInt(file, INDEX_SLOTS_OFFSET, 100);
            var e = assertThrows(StoreFormatException.class, () -> StoreFile.open(dir.path()));
            assertEquals("store file " + file + " has a corrupt header: index slots must be a power of two >= 16, got 100;"
                + " run `depot doctor`", e.getMessage());
        }
    }

    @Test
    void shouldSayHowMuchIsFreeWhenTheFileSystemCannotHoldTheStore() throws IOException, InterruptedException {
        Assumptions.assumeTrue("root".equals(System.getProperty("user.name")), "mounting a small tmpfs needs root");
        try (ShmDir dir = new ShmDir()) {
            Files.createDirectories(dir.path());
            Path mount = dir.path();
            Assumptions.assumeTrue(run("mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", mount.toString()) == 0,
                "mount -t tmpfs failed");
            try {
                Path storeDir = mount.resolve("store");
                var layout = StoreLayout.forCapacity(64L << 20, 4, 16, 0);
                var e = assertThrows(DepotException.class, () -> StoreFile.create(storeDir, layout));
                String m = e.getMessage();
                assertTrue(m.startsWith("cannot reserve " + layout.fileLength() + " bytes for the store at " + storeDir
                    + ": "), m);
                assertTrue(m.matches(".*\\(\\d+ bytes free on that file system\\); choose a smaller --capacity or free"
                    + " space there"), m);
                assertTrue(Files.notExists(storeDir), "the partly reserved file and the directory made for it are removed");
                assertThrows(StoreNotFoundException.class, () -> StoreFile.open(storeDir));
            } finally {
                if (run("umount", mount.toString()) != 0) {
                    run("umount", "-l", mount.toString());
                }
            }
        }
    }

    @Test
    void shouldLetExactlyOneOfManyRacingCreatorsWin() throws Exception {
        int racers = 8;
        var pool = java.util.concurrent.Executors.newFixedThreadPool(racers);
        try (ShmDir dir = new ShmDir()) {
            var start = new java.util.concurrent.CyclicBarrier(racers);
            var results = new java.util.ArrayList<java.util.concurrent.Future<StoreFile>>();
            for (int i = 0; i < racers; i++) {
                results.add(pool.submit(() -> {
                    start.await();
                    try {
                        return StoreFile.create(dir.path(), SMALL);
                    } catch (FileAlreadyExistsException lost) {
                        return null;
                    }
                }));
            }
            int winners = 0;
            for (var r : results) {
                StoreFile f = r.get();
                if (f != null) {
                    winners++;
                    f.close();
                }
            }
            assertEquals(1, winners, "one store, never replaced by a later creator");
            try (Stream<Path> files = Files.list(dir.path())) {
                assertEquals(java.util.List.of(StoreFile.fileIn(dir.path())), files.toList());
            }
            StoreFile.open(dir.path()).close();
        } finally {
            pool.shutdownNow();
        }
    }

    private static int run(String... command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        try {
            return p.waitFor();
        } finally {
            p.destroyForcibly();
        }
    }
}
