package dev.depot.cli;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.util.MinimalPrettyPrinter;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;

/**
 * The CLI's JSON output, written by Jackson: compact, in the order the members were put. {@link #lines} puts
 * each element of a top-level array on a line of its own (one JSON text that line tools can read too).
 */
final class Json {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    private Json() {
    }

    static ObjectNode object() {
        return MAPPER.createObjectNode();
    }

    static ArrayNode array() {
        return MAPPER.createArrayNode();
    }

    /** Puts {@code d}, or null when it is NaN or infinite (JSON has no such numbers). */
    static ObjectNode putFinite(ObjectNode node, String name, double d) {
        return Double.isFinite(d) ? node.put(name, d) : node.putNull(name);
    }

    /** One line, no spaces. */
    static String compact(JsonNode node) {
        try {
            return MAPPER.writeValueAsString(node);
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** {@code [}, one element per line, {@code ]}; an empty array is {@code []}. */
    static String lines(ArrayNode array) {
        try {
            return MAPPER.writer(new LinePerElementPrinter()).writeValueAsString(array);
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * A generator that writes to {@code out} as {@link #lines} prints, element by element, for arrays too large to
     * hold as a tree and a string; closing it flushes and leaves {@code out} open.
     */
    static JsonGenerator linesTo(OutputStream out) throws IOException {
        JsonGenerator g = MAPPER.getFactory().createGenerator(out);
        g.disable(JsonGenerator.Feature.AUTO_CLOSE_TARGET);
        g.setPrettyPrinter(new LinePerElementPrinter());
        return g;
    }

    /** Compact, except for a newline before each element of the outermost array and before its end. */
    private static final class LinePerElementPrinter extends MinimalPrettyPrinter {
        @Override
        public void beforeArrayValues(JsonGenerator g) throws IOException {
            if (outermost(g)) {
                g.writeRaw('\n');
            }
        }

        @Override
        public void writeArrayValueSeparator(JsonGenerator g) throws IOException {
            g.writeRaw(outermost(g) ? ",\n" : ",");
        }

        @Override
        public void writeEndArray(JsonGenerator g, int nrOfValues) throws IOException {
            if (nrOfValues > 0 && outermost(g)) {
                g.writeRaw('\n');
            }
            g.writeRaw(']');
        }

        private static boolean outermost(JsonGenerator g) {
            return g.getOutputContext().getParent().inRoot();
        }
    }
}
