"""The records of each map's progress: the owner record (which process writes the map, sealed when its writer
opens) and the status record (committed or failed, sealed last), and the liveness of the processes they name."""

from .. import _process
from ..errors import ObjectExistsError, ObjectMissingError
from ._records import OWNER, encode_status

#: how every shuffle object is created, the one place that decides it: kept (never evicted; a daemon with a
#: spill directory spills it under pressure and a get restores it)
KEEP = {"evict": False, "keep": True}


def process_identity(pid=None):
    """The identity Depot gives a process: ``pid << 32 | start time in clock ticks & 0xffffffff`` (as
    ``dev.depot.core.sys.ProcessIdentity``), or 0 when it does not exist or is a zombie."""
    return _process.identity() if pid is None else _process.identity_of(pid)


def alive(identity):
    """Whether the process of ``identity`` (``process_identity``) still runs; False for 0."""
    return identity != 0 and _process.identity_of(identity >> 32) == identity


def owner_identity(client, ids, m):
    """The identity of the process writing map ``m`` (its owner record), or 0 when no writer opened it or the
    record is too short to hold one."""
    try:
        with client.get(ids.owner(m), 0) as view:
            record = bytes(view.data)
    except ObjectMissingError:
        return 0
    return OWNER.unpack_from(record)[0] if len(record) >= OWNER.size else 0


def put_owner(shuffle, m):
    """Seals map ``m``'s owner record naming this process; raises ValueError when the map has a writer already."""
    try:
        shuffle.client.put(shuffle._ids.owner(m), OWNER.pack(process_identity()), **KEEP)
    except ObjectExistsError:
        raise ValueError("map %d of shuffle %s already has a writer; a map is written once" % (m, shuffle.id)) from None


def put_status(shuffle, m, committed, lengths, message):
    """Seals map ``m``'s status record (``encode_status``): what its readers wait for."""
    shuffle.client.put(shuffle._ids.status(m), encode_status(m, committed, lengths, message), **KEEP)
