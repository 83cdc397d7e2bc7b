package dev.depot.client;

import static org.junit.jupiter.api.Assertions.*;

import dev.depot.client.testing.ClientStores;
import dev.depot.client.testing.TempStore;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.Test;

class HeldMappingTest {
    private static int pinsOf(DepotClient observer, ObjectId id) {
        return observer.list().stream().filter(i -> i.id().equals(id)).findFirst().orElseThrow().pinCount();
    }

    @Test
    void shouldKeepPinAndMappingOfHeldViewAfterClientClose() {
        try (TempStore temp = new TempStore(); DepotClient observer = ClientStores.over(temp.create(1 << 20))) {
            ObjectId id = ObjectId.of("held");
            observer.put(id, new byte[] {1, 2, 3, 4, 5, 6, 7, 8});
            DepotClient client = DepotClient.open(temp.dir());
            ObjectView view = client.get(id, 0).holdMapping();
            client.close();
            assertTrue(client.isClosed());
            assertThrows(IllegalStateException.class, () -> client.get(id, 0));
            assertEquals(1, pinsOf(observer, id), "the held view keeps its pin after its client closed");
            assertEquals(8, view.data().get(ValueLayout.JAVA_BYTE, 7), "and the store stays mapped");
            int clients = observer.stats().clientCount();
            view.close();
            assertEquals(0, pinsOf(observer, id));
            assertEquals(clients - 1, observer.stats().clientCount(), "the last held view finished closing the client");
            view.close();
        }
    }

    @Test
    void shouldReleaseUnheldViewsAtCloseButKeepHeldOnes() {
        try (TempStore temp = new TempStore(); DepotClient observer = ClientStores.over(temp.create(1 << 20))) {
            ObjectId a = ObjectId.of("a");
            ObjectId b = ObjectId.of("b");
            observer.put(a, new byte[8]);
            observer.put(b, new byte[8]);
            DepotClient client = DepotClient.open(temp.dir());
            ObjectView held = client.get(a, 0).holdMapping().holdMapping();
            ObjectView plain = client.get(b, 0);
            client.close();
            assertEquals(1, pinsOf(observer, a));
            assertEquals(1, pinsOf(observer, b), "the store is still registered while a view holds it");
            held.close();
            assertEquals(0, pinsOf(observer, b), "closing the last held view unregisters the client");
            plain.close();
            assertThrows(IllegalStateException.class, held::holdMapping);
        }
    }
}
