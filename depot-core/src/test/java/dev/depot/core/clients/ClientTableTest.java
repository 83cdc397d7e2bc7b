package dev.depot.core.clients;

import static dev.depot.core.clients.ClientTableDescriptor.PIN_HIGH_WATER_OFFSET;
import static dev.depot.core.clients.ClientTableDescriptor.pinRecord;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.depot.core.memory.Atomics;
import dev.depot.core.sys.ProcessIdentity;
import dev.depot.errors.ErrorCode;
import dev.depot.errors.ResourceLimitException;
import java.lang.foreign.Arena;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class ClientTableTest {
    private static final int CLIENTS = 3;
    private static final int PINS = 4;

    private Arena arena;
    private ClientTable table;

    @BeforeEach
    void allocate() {
        arena = Arena.ofConfined();
        table = new ClientTable(arena.allocate(ClientTableDescriptor.tableLength(CLIENTS, PINS), 128), CLIENTS, PINS);
    }

    @AfterEach
    void release() {
        arena.close();
    }

    @Test
    void shouldRegisterIntoFreeSlotsUntilTheTableIsFull() {
        for (int c = 0; c < CLIENTS; c++) {
            assertEquals(c, table.register(ClientTableDescriptor.KIND_JAVA));
            assertEquals(ProcessIdentity.self(), table.identity(c));
            assertEquals(ClientTableDescriptor.KIND_JAVA, table.kind(c));
            assertTrue(table.isAlive(c));
        }
        assertEquals(-1, table.register(ClientTableDescriptor.KIND_JAVA));
        assertEquals(CLIENTS, table.countRegistered());
    }

    @Test
    void shouldCountPinsOfEveryClientUpToItsHighWaterMark() {
        int a = table.register(ClientTableDescriptor.KIND_JAVA);
        int b = table.register(ClientTableDescriptor.KIND_PYTHON);
        PinTable pa = new PinTable(table.slot(a), PINS);
        PinTable pb = new PinTable(table.slot(b), PINS);
        long record = pinRecord(7, 3);
        int p1 = pa.pin(record);
        pb.pin(record);
        pb.pin(pinRecord(8, 1));
        assertEquals(2, table.countPins(record));
        assertTrue(table.isPinned(pinRecord(8, 1)));
        assertFalse(table.isPinned(pinRecord(7, 4)), "another generation of the slot is another object");
        List<Long> seen = new ArrayList<>();
        table.forEachPin((client, r) -> seen.add(r));
        assertEquals(3, seen.size());
        pa.unpin(p1);
        assertEquals(1, table.countPins(record));
    }

    @Test
    void shouldClearPinsBeforeFreeingASlot() {
        int a = table.register(ClientTableDescriptor.KIND_JAVA);
        PinTable pins = new PinTable(table.slot(a), PINS);
        long record = pinRecord(1, 1);
        pins.pin(record);
        assertFalse(table.release(a, ProcessIdentity.self() ^ 1), "a slot taken by another identity stays");
        assertTrue(table.release(a, ProcessIdentity.self()));
        assertEquals(0, table.identity(a));
        assertEquals(0, table.countPins(record));
        assertEquals(0, Atomics.getIntVolatile(table.slot(a), PIN_HIGH_WATER_OFFSET));
    }

    @Test
    void shouldReusePinPositionsLastInFirstOutToKeepTheHighWaterMarkLow() {
        int a = table.register(ClientTableDescriptor.KIND_JAVA);
        PinTable pins = new PinTable(table.slot(a), PINS);
        int first = pins.pin(pinRecord(1, 1));
        int second = pins.pin(pinRecord(2, 1));
        assertEquals(0, first);
        assertEquals(1, second);
        pins.unpin(second);
        assertEquals(1, pins.pin(pinRecord(3, 1)));
        assertEquals(2, Atomics.getIntVolatile(table.slot(a), PIN_HIGH_WATER_OFFSET));
        assertEquals(2, pins.held());
    }

    @Test
    void shouldRefuseAPinBeyondTheClientsCapacity() {
        int a = table.register(ClientTableDescriptor.KIND_JAVA);
        PinTable pins = new PinTable(table.slot(a), PINS);
        for (int i = 0; i < PINS; i++) {
            pins.pin(pinRecord(i, 1));
        }
        var e = assertThrows(ResourceLimitException.class, () -> pins.pin(pinRecord(9, 1)));
        assertEquals(ErrorCode.TOO_MANY_PINS, e.code());
        assertEquals("this process holds 4 pinned objects, the most a client may; close views you no longer need",
            e.getMessage());
    }
}
