package dev.depot.client;

import static org.junit.jupiter.api.Assertions.*;

import dev.depot.client.testing.ClientStores;
import dev.depot.client.testing.TempStore;
import dev.depot.core.clients.ClientTableDescriptor;
import dev.depot.core.index.IndexEntryDescriptor;
import dev.depot.core.index.ObjectIndex;
import dev.depot.core.store.Doctor;
import dev.depot.core.store.StoreFile;
import dev.depot.errors.StoreFormatException;
import java.io.RandomAccessFile;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.Test;

/** {@code depot doctor}: finds corruption, repairs what is safe, and refuses a bad header precisely. */
class DoctorTest {
    @Test
    void shouldDropCorruptEntryRebuildHeapAndKeepTheRest() throws Exception {
        try (TempStore temp = new TempStore()) {
            try (DepotClient depot = ClientStores.over(temp.create(1 << 20))) {
                depot.put(ObjectId.of("good"), new byte[] {1, 2, 3});
                depot.put(ObjectId.of("bad"), new byte[100]);
            }
            int victimSlot;
            try (StoreFile file = StoreFile.open(temp.dir())) {
                var index = new ObjectIndex(file.index(), file.layout().indexSlots());
                ObjectId bad = ObjectId.of("bad");
                victimSlot = ClientTableDescriptor.pinnedSlot(index.findSealed(bad.w0(), bad.w1(), bad.w2()));
                // Corrupt: the entry's block points far past the heap.
                file.index().set(ValueLayout.JAVA_LONG, IndexEntryDescriptor.entryOffset(victimSlot)
                    + IndexEntryDescriptor.BLOCK_OFFSET_OFFSET, 1L << 40);
            }
            Doctor.Report report = Doctor.examine(temp.dir(), true);
            assertFalse(report.fatal());
            assertTrue(report.findings().stream().anyMatch(f -> f.contains("index slot " + victimSlot)), report.toString());
            try (DepotClient depot = DepotClient.open(temp.dir())) {
                try (ObjectView v = depot.get(ObjectId.of("good"), 0)) {
                    assertEquals(3, v.data().get(ValueLayout.JAVA_BYTE, 2));
                }
                assertFalse(depot.contains(ObjectId.of("bad")));
                depot.put(ObjectId.of("after"), new byte[200_000]);
            }
            assertTrue(Doctor.examine(temp.dir(), false).healthy());
        }
    }

    @Test
    void shouldReportBadMagicAsFatal() throws Exception {
        try (TempStore temp = new TempStore()) {
            temp.create(1 << 20).close();
            try (RandomAccessFile f = new RandomAccessFile(StoreFile.fileIn(temp.dir()).toFile(), "rw")) {
                f.writeLong(0x1234);
            }
            Doctor.Report report = Doctor.examine(temp.dir(), true);
            assertTrue(report.fatal());
            assertTrue(report.findings().getFirst().contains("is not a Depot store"), report.toString());
            assertThrows(StoreFormatException.class, () -> DepotClient.open(temp.dir()));
        }
    }

    /** Puts three objects and corrupts each in one of the ways recovery drops; returns their index slots. */
    private static int[] corruptThree(TempStore temp) throws Exception {
        try (DepotClient depot = ClientStores.over(temp.create(1 << 20))) {
            depot.put(ObjectId.of("good"), new byte[] {1, 2, 3});
            for (String name : new String[] {"huge", "far", "odd"}) {
                depot.put(ObjectId.of(name), new byte[100]);
            }
        }
        int[] slots = new int[3];
        try (StoreFile file = StoreFile.open(temp.dir())) {
            var index = new ObjectIndex(file.index(), file.layout().indexSlots());
            String[] names = {"huge", "far", "odd"};
            for (int i = 0; i < 3; i++) {
                ObjectId id = ObjectId.of(names[i]);
                slots[i] = ClientTableDescriptor.pinnedSlot(index.findSealed(id.w0(), id.w1(), id.w2()));
            }
            long huge = IndexEntryDescriptor.entryOffset(slots[0]) + IndexEntryDescriptor.DATA_LENGTH_OFFSET;
            file.index().set(ValueLayout.JAVA_LONG, huge, 1L << 62);
            long far = IndexEntryDescriptor.entryOffset(slots[1]) + IndexEntryDescriptor.BLOCK_OFFSET_OFFSET;
            file.index().set(ValueLayout.JAVA_LONG, far, file.layout().heapLength() + 4096);
            long odd = IndexEntryDescriptor.entryOffset(slots[2]) + IndexEntryDescriptor.STATE_WORD_OFFSET;
            file.index().set(ValueLayout.JAVA_LONG, odd, (file.index().get(ValueLayout.JAVA_LONG, odd) & ~0xffL) | 0x77);
        }
        return slots;
    }

    @Test
    void shouldReportInCheckModeEveryEntryThatRecoveryWouldDrop() throws Exception {
        try (TempStore temp = new TempStore()) {
            int[] slots = corruptThree(temp);
            Doctor.Report check = Doctor.examine(temp.dir(), false);
            assertFalse(check.healthy(), check.toString());
            for (int slot : slots) {
                assertTrue(check.findings().stream().anyMatch(f -> f.startsWith("index slot " + slot + ":")
                    && f.endsWith("recovery drops the entry")), slot + " in " + check);
            }
            assertEquals(java.util.List.of(), check.repaired());
            try (DepotClient depot = DepotClient.open(temp.dir())) {
                // Corrupt entries are a StoreFormatException naming the slot, never an IndexOutOfBoundsException.
                for (String name : new String[] {"huge", "far"}) {
                    var e = assertThrows(StoreFormatException.class, () -> depot.get(ObjectId.of(name), 0));
                    assertTrue(e.getMessage().contains("is corrupt: index slot "), e.getMessage());
                    assertTrue(e.getMessage().contains("run `depot doctor`"), e.getMessage());
                }
                var e = assertThrows(StoreFormatException.class, () -> depot.get(ObjectId.of("odd"), 0));
                assertTrue(e.getMessage().contains("is corrupt: unknown state code 119"), e.getMessage());
                assertEquals(0, depot.stats().pinnedBytes(), "a failed get leaves no pin behind");
            }
            assertFalse(Doctor.examine(temp.dir(), false).healthy(), "--check changed nothing");
        }
    }

    @Test
    void shouldRepairWhatRecoveryRepairsAndThenBeHealthy() throws Exception {
        try (TempStore temp = new TempStore()) {
            int[] slots = corruptThree(temp);
            Doctor.Report repair = Doctor.examine(temp.dir(), true);
            assertFalse(repair.fatal());
            for (int slot : slots) {
                assertTrue(repair.findings().stream().anyMatch(f -> f.startsWith("index slot " + slot + ":")),
                    slot + " in " + repair);
            }
            assertEquals(java.util.List.of("rebuilt the heap metadata from the index and dropped 3 corrupt entries"),
                repair.repaired());
            Doctor.Report after = Doctor.examine(temp.dir(), false);
            assertTrue(after.healthy(), after.toString());
            try (DepotClient depot = DepotClient.open(temp.dir()); ObjectView v = depot.get(ObjectId.of("good"), 0)) {
                assertEquals(3, v.size());
            }
        }
    }

    @Test
    void shouldRepairNothingOnAHealthyStore() throws Exception {
        try (TempStore temp = new TempStore()) {
            try (DepotClient depot = ClientStores.over(temp.create(1 << 20))) {
                depot.put(ObjectId.of("good"), new byte[] {1, 2, 3});
            }
            Doctor.Report repair = Doctor.examine(temp.dir(), true);
            assertTrue(repair.healthy(), repair.toString());
            assertEquals(java.util.List.of(), repair.repaired(), "nothing was wrong, so nothing was repaired");
        }
    }
}
