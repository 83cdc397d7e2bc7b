"""Shuffles whose creator died without closing them: found by their manifests, and deleted as their creator's
``close()`` would (Java's ``dev.depot.shuffle.AbandonedShuffles``)."""

import collections

from ..errors import DepotError
from ._ids import MAX_ID_LENGTH, ShuffleIds
from ._maps import alive, owner_identity
from ._records import MANIFEST, decode_manifest

#: how long a sweep waits for a spilled manifest to come back from disk (seconds)
_RESTORE_TIMEOUT = 10.0


class AbandonedShuffle(collections.namedtuple("AbandonedShuffle", "id creator_pid objects bytes")):
    """A shuffle whose creator died without closing it: its id, the pid the creator had, and how many objects
    (and data bytes) of it the store held when it was found (Java's ``dev.depot.shuffle.AbandonedShuffle``)."""

    __slots__ = ()


def find_abandoned(client):
    """The shuffles ``sweep_abandoned`` would delete now, as ``AbandonedShuffle``; deletes nothing."""
    return [found for found, _ in _find_abandoned(client)]


def sweep_abandoned(client):
    """Deletes the shuffles whose creator died without closing them, as their creator's ``close()`` would, and
    returns them as ``AbandonedShuffle`` (as Java's ``Shuffle.sweepAbandoned``; ``Shuffle.create`` does it first
    in both languages).

    Shuffle objects are kept (never evicted), so nothing else would free them. A manifest is found by its size,
    magic and metadata (the shuffle id, trusted only when it hashes to the manifest's own id); its shuffle is
    abandoned when the creator it names (pid and start time) is gone and no map is still being written by a live
    process (an owner record alive without a status record). Older manifests without a name are left alone, and
    so is a spilled manifest while no daemon can restore it. Harmless twice or in two processes at once: a delete
    another sweep is doing is left to it."""
    swept = []
    for found, objects in _find_abandoned(client):
        for each in objects:
            try:
                client.delete(each)
            except DepotError:
                pass  # being deleted by another sweep, or still being written by a process not reaped yet
        swept.append(found)
    return swept


def _find_abandoned(client):
    """``(AbandonedShuffle, ids of all its possible objects)`` of every abandoned shuffle in the store."""
    listing = client.list()
    by_id = {info.id: info for info in listing}
    out = []
    for info in listing:
        if info.data_size != MANIFEST.size or not 0 < info.metadata_size <= 3 * MAX_ID_LENGTH \
                or info.state not in ("sealed", "spilled"):
            continue
        found = _abandoned(client, info.id, by_id)
        if found is not None:
            out.append(found)
    return out


def _abandoned(client, oid, listing):
    """``(AbandonedShuffle, object ids)`` of the shuffle whose manifest is ``oid`` when it is abandoned, else
    None; ``listing`` (id to ``ObjectInfo``) gives the sizes of its objects."""
    try:
        with client.get(oid, _RESTORE_TIMEOUT) as view:
            data, metadata = bytes(view.data), bytes(view.metadata)
    except DepotError:
        return None  # gone meanwhile, or spilled with no daemon to restore it: not examined this time
    try:
        shuffle_id = metadata.decode("utf-8")
        ids = ShuffleIds(shuffle_id)
    except ValueError:  # not UTF-8, or not a valid shuffle id
        return None
    if ids.manifest() != oid:
        return None  # an object that only looks like a manifest
    try:
        _, _, maps, partitions, creator = decode_manifest(data, shuffle_id, oid)
    except DepotError:
        return None  # a manifest of another version: its objects cannot be named here
    if creator == 0 or alive(creator):
        return None
    for m in range(maps):
        owner = owner_identity(client, ids, m)
        if alive(owner) and not client.contains(ids.status(m)):
            return None  # map m is still being written
    objects = ids.all(maps, partitions)
    present = [listing[each] for each in objects if each in listing]
    return AbandonedShuffle(shuffle_id, creator >> 32, len(present), sum(i.data_size for i in present)), objects
