package dev.depot.server.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** Request counting by type label: known names in lower case, anything else as {@code unknown}. */
class ProtocolCountersTest {
    @Test
    void countsRequestsByLowerCaseTypeName() {
        ProtocolCounters c = new ProtocolCounters();
        for (int i = 0; i < 3; i++) {
            c.request("PUT");
        }
        c.request("GET_MANY");
        assertEquals(Map.of("put", 3L, "get_many", 1L), c.requests());
    }

    @Test
    void countsNamesThatAreNotProtocolTypesAsUnknown() {
        ProtocolCounters c = new ProtocolCounters();
        for (int type = 100; type < 400; type++) {
            c.request("type " + type);
        }
        c.request("");
        c.request("Put");
        assertEquals(Map.of("unknown", 302L), c.requests());
    }

    @Test
    void countsErrorsByTypeAndCode() {
        ProtocolCounters c = new ProtocolCounters();
        c.error("PUT", dev.depot.errors.ErrorCode.STORE_FULL);
        c.error("type 77", dev.depot.errors.ErrorCode.BAD_REQUEST);
        assertEquals(Map.of(new ProtocolCounters.ErrorKey("put", "store_full"), 1L,
            new ProtocolCounters.ErrorKey("unknown", "bad_request"), 1L), c.errors());
    }
}
