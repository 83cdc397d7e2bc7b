"""A Python client outlives a daemon: after the daemon is killed and another one started, it reconnects."""
import pytest

np = pytest.importorskip("numpy")

import depot  # noqa: E402
from conftest import CAPACITY, Child, Daemon, java_command  # noqa: E402


def _start_daemon(directory):
    d = Daemon(directory, Child(java_command("dev.depot.server.DaemonMain", "--dir", directory,
                                             "--capacity", CAPACITY)))
    try:
        d.child.await_line("depot: serving", timeout=60)
    except BaseException:
        d.stop()
        raise
    return d


def test_the_client_reconnects_to_the_next_daemon(daemon, client):
    kept = depot.ObjectId.of("kept")
    client.put(kept, b"sealed objects survive a daemon")
    client.put_array(depot.ObjectId.of("array"), np.arange(16, dtype=np.float64))
    old_view = client.get(kept, timeout=1)
    old_array = client.get_array(depot.ObjectId.of("array"), timeout=1)
    writer = client.create(depot.ObjectId.of("unsealed"), 100)

    daemon.child.kill()                       # SIGKILL: no goodbye
    with pytest.raises(depot.ProtocolError):
        client.stat()                         # the connection is gone, and the next daemon is not up yet
    with client.get(kept, timeout=1) as v:    # gets need no daemon
        assert bytes(v.data) == b"sealed objects survive a daemon"
    second = _start_daemon(daemon.dir)
    try:
        # Reconnected. The unsealed object was created in shared memory by our own slot, not by the old
        # daemon, so it is still ours to fill and seal.
        assert client.stat().object_count == 3
        assert bytes(old_view.data) == b"sealed objects survive a daemon", "pins live in our own slot"
        assert old_array.sum() == 120
        old_view.release()
        writer.data[:] = b"u" * 100
        writer.seal()
        with client.get(depot.ObjectId.of("unsealed"), timeout=0) as v:
            assert bytes(v.data) == b"u" * 100
        del old_array
        client.put(depot.ObjectId.of("after"), b"new work")
        stats = client.stat()
        assert stats.pinned_bytes == 0
        assert stats.unsealed_bytes == 0
    finally:
        second.stop()
