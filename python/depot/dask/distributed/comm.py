"""The ``depot://`` comm backend: Dask's TCP transport with the Depot store's identity in the handshake.

Two processes that serve the same Depot store can pass objects by id instead of bytes. Which store a peer
serves is learnt from the connection handshake, never guessed from host names: every comm of this backend adds
``depot-store`` (the identity of the store this process serves, or None) and ``depot-version`` to the
handshake dictionary Dask already exchanges (``Comm.handshake_info``), so after ``connect`` both ends find the
peer's store in ``comm.remote_info``. Everything else (framing, serialisation, TLS-less TCP) is Dask's own.

The backend is registered under the ``distributed.comm.backends`` entry point (for installed packages) and
also when this module is imported, so ``depot://`` addresses work under ``PYTHONPATH`` too.
"""

from __future__ import annotations

import os
import threading

from distributed.comm import registry
from distributed.comm.tcp import TCP, TCPBackend, TCPConnector, TCPListener

__all__ = ["SCHEME", "DepotTCP", "DepotTCPBackend", "VersionMismatch", "handshake_entries",
           "local_store_identity", "peer_store_identity", "same_store", "serve_store", "store_identity"]

SCHEME = "depot"
STORE_KEY = "depot-store"
VERSION_KEY = "depot-version"
STORE_FILE_NAME = "store.depot"
BOOT_ID_PATH = "/proc/sys/kernel/random/boot_id"

_served = {"identity": None}
_served_lock = threading.Lock()


class VersionMismatch(ConnectionError):
    """Two ends of a ``depot://`` connection run different versions of the Depot package."""


def _package_version():
    import depot
    return getattr(depot, "__version__", "unknown")


def store_identity(directory):
    """The identity of the store in ``directory``: this boot's id and the store file's device and inode.

    Two processes see the same identity exactly when they map the same file on the same running kernel (a
    store directory of the same name on another machine, or recreated after a reboot, differs)."""
    st = os.stat(os.path.join(os.fspath(directory), STORE_FILE_NAME))
    try:
        with open(BOOT_ID_PATH) as f:
            boot = f.read().strip()
    except OSError:
        boot = "unknown-boot"
    return "%s:%d:%d" % (boot, st.st_dev, st.st_ino)


def serve_store(identity):
    """Declares the store this process serves (None: none); later handshakes carry it."""
    with _served_lock:
        _served["identity"] = identity


def local_store_identity():
    """The identity this process's handshakes carry, or None."""
    return _served["identity"]


def handshake_entries():
    """What this backend adds to Dask's handshake: the store this process serves and the Depot version."""
    return {STORE_KEY: local_store_identity(), VERSION_KEY: _package_version()}


def peer_store_identity(comm):
    """The store identity the peer of ``comm`` declared in its handshake, or None (another backend, no store)."""
    info = getattr(comm, "remote_info", None) or {}
    return info.get(STORE_KEY)


def same_store(comm):
    """True when the peer of ``comm`` serves the very store this process serves."""
    mine = local_store_identity()
    return mine is not None and peer_store_identity(comm) == mine


class DepotTCP(TCP):
    """A TCP comm whose handshake also names the Depot store this process serves."""

    def handshake_info(self):
        # static in distributed 2022.12, an instance method in 2026.7 (_compat, difference 1): super() reaches either
        info = super().handshake_info()
        info.update(handshake_entries())
        return info

    @staticmethod
    def handshake_configuration(local, remote):
        ours, theirs = local.get(VERSION_KEY), remote.get(VERSION_KEY)
        if theirs is not None and ours != theirs:
            raise VersionMismatch(
                "Depot package version mismatch on a depot:// connection: this process has %s, the peer at %s "
                "has %s; install the same depot package on every worker, scheduler and client"
                % (ours, remote.get("address", "?"), theirs))
        return TCP.handshake_configuration(local, remote)


class DepotTCPConnector(TCPConnector):
    prefix = SCHEME + "://"
    comm_class = DepotTCP


class DepotTCPListener(TCPListener):
    prefix = SCHEME + "://"
    comm_class = DepotTCP


class DepotTCPBackend(TCPBackend):
    """``depot://host:port``: TCP, with the store identity in the handshake."""

    _connector_class = DepotTCPConnector
    _listener_class = DepotTCPListener


def register():
    """Registers the backend under ``depot://`` (idempotent)."""
    if SCHEME not in registry.backends:
        registry.backends[SCHEME] = DepotTCPBackend()


register()
