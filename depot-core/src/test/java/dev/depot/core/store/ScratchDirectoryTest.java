package dev.depot.core.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class ScratchDirectoryTest {
    @Test
    void shouldNameAFreshDirectoryUnderDevShmAfterThePrefix() {
        try (ScratchDirectory a = new ScratchDirectory("depot-test");
             ScratchDirectory b = new ScratchDirectory("depot-test-")) {
            assertEquals(ScratchDirectory.ROOT, a.path().getParent());
            assertTrue(a.path().getFileName().toString().startsWith("depot-test-"), a.path().toString());
            assertFalse(b.path().getFileName().toString().startsWith("depot-test--"), b.path().toString());
            assertNotEquals(a.path(), b.path());
            assertFalse(Files.exists(a.path()), "created by whoever makes the store in it");
        }
    }

    @Test
    void shouldRemoveTheDirectoryAndEverythingInItOnClose() throws Exception {
        Path dir;
        try (ScratchDirectory scratch = new ScratchDirectory("depot-test")) {
            dir = scratch.path();
            Files.createDirectories(dir.resolve("spill/nested"));
            Files.writeString(dir.resolve("spill/nested/object"), "x");
            Files.writeString(dir.resolve("store.depot"), "y");
        }
        assertFalse(Files.exists(dir));
    }

    @Test
    void shouldRemoveNothingWhenThereIsNothingAndAllowASecondClose() {
        ScratchDirectory scratch = new ScratchDirectory("depot-test");
        scratch.close();
        scratch.close();
        assertFalse(Files.exists(scratch.path()));
    }
}
