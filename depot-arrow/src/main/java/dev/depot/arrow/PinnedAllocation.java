package dev.depot.arrow;

import dev.depot.client.ObjectView;
import org.apache.arrow.memory.ForeignAllocation;

/**
 * A Depot object's shared memory handed to an Arrow allocator: Arrow frees it (from whichever thread releases the
 * last buffer) by closing the view, which unpins the object. The view {@linkplain ObjectView#holdMapping holds
 * the mapping}, so closing the Depot client first does not unmap memory that Arrow buffers still point to.
 */
final class PinnedAllocation extends ForeignAllocation {
    private final ObjectView view;

    PinnedAllocation(ObjectView view) {
        super(view.size(), view.data().address());
        this.view = view;
    }

    @Override
    protected void release0() {
        view.close();
    }
}
