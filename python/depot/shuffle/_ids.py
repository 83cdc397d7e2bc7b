"""The ids of a shuffle's objects: ``ObjectId.of`` of names derived from the shuffle id, as Java's
``dev.depot.shuffle.ShuffleIds`` names them."""

from ..ids import ObjectId

#: the longest shuffle id, in characters (UTF-16 code units in Java, where the limit is checked too)
MAX_ID_LENGTH = 200


class ShuffleIds:
    """The object ids of shuffle ``shuffle_id``; raises ValueError when the id is empty or too long."""

    def __init__(self, shuffle_id):
        if not 1 <= _java_length(shuffle_id) <= MAX_ID_LENGTH:
            raise ValueError("a shuffle id has 1..%d characters, got %d" % (MAX_ID_LENGTH, _java_length(shuffle_id)))
        self.base = "depot-shuffle/%s/" % shuffle_id

    def manifest(self):
        return ObjectId.of(self.base + "manifest")

    def owner(self, m):
        return ObjectId.of(self.base + "map/%d/owner" % m)

    def status(self, m):
        return ObjectId.of(self.base + "map/%d/status" % m)

    def map_data(self, m):
        return ObjectId.of(self.base + "map/%d/data" % m)

    def slice(self, m, p):
        return ObjectId.of(self.base + "map/%d/part/%d" % (m, p))

    def all(self, maps, partitions):
        """Every object a shuffle of this size may have made, in either layout; the manifest last."""
        out = []
        for m in range(maps):
            out += [self.status(m), self.map_data(m)] + [self.slice(m, p) for p in range(partitions)] \
                + [self.owner(m)]
        return out + [self.manifest()]


def _java_length(text):
    """The length Java gives ``text`` (UTF-16 code units), so both languages accept the same ids."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2
