package dev.depot.arrow;

import java.lang.foreign.MemorySegment;
import java.util.List;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;

/**
 * An Arrow IPC stream planned but not yet written: its exact {@link #size} is known, and {@link #writeTo} copies it
 * once into memory the caller chose (a slice of a shuffle object, say), in the format of {@link DepotArrow#put}.
 * It shares the roots' buffers (nothing is copied until {@code writeTo}): keep the roots unchanged until it is
 * closed.
 */
public final class ArrowStreamPlan implements AutoCloseable {
    private enum State { OPEN, CLOSED }

    private final List<ArrowRecordBatch> batches;
    private final StreamWriter.Plan plan;
    private State state = State.OPEN;

    private ArrowStreamPlan(List<ArrowRecordBatch> batches, StreamWriter.Plan plan) {
        this.batches = batches;
        this.plan = plan;
    }

    /**
     * Plans the stream of {@code roots} (all of one schema, at least one).
     *
     * @throws DepotArrow.UnsupportedStreamException for dictionary-encoded fields
     */
    public static ArrowStreamPlan of(VectorSchemaRoot... roots) {
        List<ArrowRecordBatch> batches = StreamWriter.unload("an Arrow stream", roots);
        try {
            return new ArrowStreamPlan(batches, StreamWriter.plan(roots[0].getSchema(), batches));
        } catch (RuntimeException e) {
            StreamWriter.close(batches);
            throw e;
        }
    }

    /** The stream's size in bytes. */
    public long size() {
        return plan.size();
    }

    /**
     * Writes the stream at offset 0 of {@code out} (at least {@link #size} bytes; start it at a multiple of 64 bytes
     * for the bodies' alignment). Padding is zeroed.
     */
    public void writeTo(MemorySegment out) {
        if (state != State.OPEN) {
            throw new IllegalStateException("this Arrow stream plan is closed");
        }
        plan.writeTo(out);
    }

    @Override
    public void close() {
        if (state == State.CLOSED) {
            return;
        }
        state = State.CLOSED;
        StreamWriter.close(batches);
    }
}
