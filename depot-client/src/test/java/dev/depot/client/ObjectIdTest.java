package dev.depot.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.LongFunction;
import org.junit.jupiter.api.Test;

class ObjectIdTest {
    private static final int IDS = 100_000;

    /** An id of two little-endian words and a third of 4 bytes, as the index splits them. */
    private static ObjectId of(long first, long second, int third) {
        byte[] raw = new byte[ObjectId.LENGTH];
        ByteBuffer.wrap(raw).order(ByteOrder.LITTLE_ENDIAN).putLong(first).putLong(second).putInt(third);
        return ObjectId.fromBytes(raw);
    }

    private static int distinctHashes(LongFunction<ObjectId> family) {
        Set<Integer> hashes = new HashSet<>();
        for (long n = 0; n < IDS; n++) {
            hashes.add(family.apply(n).hashCode());
        }
        return hashes.size();
    }

    @Test
    void shouldSpreadTheHashesOfIdsMadeOfRelatedWords() {
        Map<String, LongFunction<ObjectId>> families = Map.of(
            "counter and its complement", n -> of(n, ~n, 0),
            "counter twice", n -> of(n, n, (int) n),
            "prefix and counter", n -> of(0x1234, n, 0),
            "counter in the last word", n -> of(7, 7, (int) n),
            "counter in the first word", n -> of(n, 0, 0));
        families.forEach((name, family) -> {
            int distinct = distinctHashes(family);
            assertTrue(distinct >= IDS * 99L / 100, name + ": " + distinct + " distinct hashes of " + IDS + " ids");
        });
    }

    @Test
    void shouldFindEveryIdOfAFamilyInAHashMap() {
        Map<ObjectId, Long> byId = new HashMap<>();
        for (long n = 0; n < IDS; n++) {
            byId.put(of(n, ~n, 0), n);
        }
        assertEquals(IDS, byId.size());
        for (long n = 0; n < IDS; n += 997) {
            assertEquals(n, byId.get(of(n, ~n, 0)));
        }
    }

    @Test
    void shouldHashEqualIdsAlikeWhateverTheirOrigin() {
        ObjectId named = ObjectId.of("x");
        ObjectId parsed = ObjectId.fromHex(named.toHex());
        assertEquals(named, parsed);
        assertEquals(named.hashCode(), parsed.hashCode());
        assertNotEquals(named, ObjectId.of("y"));
    }

    @Test
    void shouldOrderIdsAsTheirHexForms() {
        List<ObjectId> ids = new ArrayList<>();
        for (String hex : new String[] {"ff", "00", "7f", "80", "01"}) {
            ids.add(ObjectId.fromHex(hex.repeat(ObjectId.LENGTH)));
            ids.add(ObjectId.fromHex("00".repeat(ObjectId.LENGTH - 1) + hex));
        }
        List<ObjectId> byHex = ids.stream().sorted(Comparator.comparing(ObjectId::toHex)).toList();
        assertEquals(byHex, ids.stream().sorted().toList());
        assertEquals(0, ObjectId.of("x").compareTo(ObjectId.fromHex(ObjectId.of("x").toHex())));
    }
}
