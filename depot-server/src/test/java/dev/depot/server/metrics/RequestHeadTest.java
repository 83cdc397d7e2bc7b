package dev.depot.server.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.ByteArrayInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** Reading the head of an HTTP/1.x request: its method and path, within {@link RequestHead#MAX_BYTES}. */
class RequestHeadTest {
    private static InputStream bytes(String s) {
        return new ByteArrayInputStream(s.getBytes(StandardCharsets.ISO_8859_1));
    }

    @Test
    void shouldReadTheMethodAndThePathWithoutTheQuery() throws Exception {
        RequestHead h = RequestHead.read(bytes("GET /metrics?name[]=x HTTP/1.1\r\nHost: a\r\nAccept: */*\r\n\r\n"));
        assertEquals(new RequestHead("GET", "/metrics"), h);
    }

    @Test
    void shouldAcceptBareLineFeedsLeadingEmptyLinesAndTheAbsoluteForm() throws Exception {
        assertEquals(new RequestHead("HEAD", "/metrics"),
            RequestHead.read(bytes("\r\nHEAD http://127.0.0.1:9464/metrics HTTP/1.0\nHost: a\n\n")));
    }

    @Test
    void shouldStopAtTheEndOfTheHeadAndLeaveWhatFollowsUnread() throws Exception {
        InputStream in = bytes("GET /metrics HTTP/1.1\r\n\r\nGET /next HTTP/1.1\r\n\r\n");
        RequestHead.read(in);
        assertEquals(new RequestHead("GET", "/next"), RequestHead.read(in));
    }

    @Test
    void shouldRefuseAHeadLongerThanTheLimitWith431() {
        String head = "GET /metrics HTTP/1.1\r\nX: " + "a".repeat(RequestHead.MAX_BYTES) + "\r\n\r\n";
        RequestHead.Malformed e = assertThrows(RequestHead.Malformed.class, () -> RequestHead.read(bytes(head)));
        assertEquals(431, e.status());
    }

    @Test
    void shouldRefuseARequestLineThatIsNotHttp1With400() {
        for (String line : new String[] {"GET /metrics", "GET  /metrics HTTP/1.1", "GET /metrics HTTP/2.0",
            "GET /metrics HTTP/1.1 extra"}) {
            RequestHead.Malformed e = assertThrows(RequestHead.Malformed.class,
                () -> RequestHead.read(bytes(line + "\r\n\r\n")), line);
            assertEquals(400, e.status(), line);
        }
    }

    @Test
    void shouldReportAClientThatClosesBeforeTheHeadEnds() {
        assertThrows(EOFException.class, () -> RequestHead.read(bytes("GET /met")));
    }

    @Test
    void shouldReadNoFurtherThanTheLimitFromAnEndlessStream() {
        InputStream endless = new InputStream() {
            @Override
            public int read() throws IOException {
                return 'a';
            }
        };
        RequestHead.Malformed e = assertThrows(RequestHead.Malformed.class, () -> RequestHead.read(endless));
        assertEquals(431, e.status());
    }
}
