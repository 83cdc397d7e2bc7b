"""A Python crash-torture client (dev.depot.torture.Torture): DIR SLOT SEED PERMANENT.

Loops forever over random create / write / seal / abort / get+verify / hold / release / delete on its own
namespace (p<SLOT>-n, which its replacement after a kill inherits) and reads the driver's permanent objects, like
dev.depot.torture.TortureWorker. The bytes are those of dev.depot.torture.Payload (xorshift64 seeded by the id),
so any process verifies any object. Prints "CORRUPT ..." and exits 3 when an object it reads does not verify. It
is meant to be killed with SIGKILL at a random moment.
"""
import random
import struct
import sys

import depot

NAMES = 40
SIZES = [0, 1, 100, 4096, 65536]
MASK = (1 << 64) - 1


def _next(x):
    x ^= (x << 13) & MASK
    x ^= x >> 7
    x ^= (x << 17) & MASK
    return x


def payload(oid, size):
    x = int.from_bytes(bytes(oid)[:8], "little") | 1
    words = size // 8
    out = bytearray(size)
    for i in range(words):
        x = _next(x)
        struct.pack_into("<Q", out, 8 * i, x)
    for i in range(8 * words, size):
        out[i] = (x >> (8 * (i & 7))) & 0xFF
    return out


def check(view):
    if view.data != payload(view.id, view.size):
        print("CORRUPT python: object %s (%d bytes) does not verify" % (view.id, view.size), flush=True)
        sys.exit(3)


def main():
    directory, slot, seed, permanent = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    rnd = random.Random(seed)
    held = []
    pending = None
    client = depot.connect(directory)
    # Register before saying so (its own slot, and the daemon's session for its connection): a request and a get.
    client.stat()
    client.get(depot.ObjectId.of("perm-0"), timeout=0).release()
    print("started", flush=True)
    while True:
        op = rnd.randrange(100)
        try:
            if op < 30:
                oid = depot.ObjectId.of("p%d-%d" % (slot, rnd.randrange(NAMES)))
                try:
                    w = client.create(oid, rnd.choice(SIZES))
                except depot.ObjectExistsError:
                    continue
                w.data[:] = payload(oid, w.size)
                fate = rnd.randrange(10)
                if fate < 8 or pending is not None:
                    w.seal()
                elif fate == 8:
                    w.abort()
                else:
                    pending = w
            elif op < 60:
                name = ("perm-%d" % rnd.randrange(permanent)) if rnd.randrange(3) == 0 \
                    else ("p%d-%d" % (slot, rnd.randrange(NAMES)))
                try:
                    v = client.get(depot.ObjectId.of(name), timeout=0)
                except depot.ObjectMissingError:
                    continue
                check(v)
                if len(held) < 8 and rnd.random() < 0.5:
                    held.append(v)
                else:
                    v.release()
            elif op < 75:
                if held:
                    v = held.pop(0)
                    check(v)
                    v.release()
            elif op < 90:
                client.delete(depot.ObjectId.of("p%d-%d" % (slot, rnd.randrange(NAMES))))
            elif pending is not None:
                if rnd.random() < 0.5:
                    pending.seal()
                else:
                    pending.abort()
                pending = None
        except (depot.DaemonNotRunningError, depot.ProtocolError):
            # The daemon was killed (--kill-daemon): the request in flight fails, and the next one connects to
            # its successor.
            pass
        except depot.ViewReleasedError as e:
            if "earlier connection" not in str(e):
                raise
            # A writer the killed daemon made for us (a create that needed room): it aborted with the daemon.
            pending = None


if __name__ == "__main__":
    try:
        main()
    except SystemExit:
        raise
    except BaseException as e:  # noqa: BLE001 - reported to the driver, which fails the run
        print("FAIL python: %r" % (e,), flush=True)
        raise
