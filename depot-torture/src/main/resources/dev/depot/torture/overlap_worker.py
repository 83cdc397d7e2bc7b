"""A Python worker of the overlapping-id workload (dev.depot.torture.Overlap): DIR NAMES SECONDS SEED.

Puts, gets, holds, releases and deletes ids of the namespace every worker shares (ov-0 .. ov-NAMES-1), Java and
Python alike, and checks every view against the stamp it was got with: when got, at random while held, and before
release. The bytes are those of dev.depot.torture.StampedPayload: metadata = 8-byte little-endian stamp, data =
SHA-256 in counter mode over id || stamp || block number (32-bit little-endian), truncated to the size.
Prints "started", one "CORRUPT ..." line per failed check (the first few) and "RESULT gets=G held=H checks=C
failures=F".
"""
import hashlib
import random
import struct
import sys
import time

import depot

SIZES = [0, 1, 100, 4096, 20000, 65536]
MAX_HELD = 8
REPORTED = 5


def payload(oid, stamp, size):
    raw = bytes(oid) + struct.pack("<q", stamp)
    out = bytearray()
    n = 0
    while len(out) < size:
        out += hashlib.sha256(raw + struct.pack("<I", n)).digest()
        n += 1
    return bytes(out[:size])


def stamp_of(metadata):
    if len(metadata) != 8:
        raise ValueError("metadata of %d bytes is not a stamp" % len(metadata))
    return struct.unpack("<q", bytes(metadata))[0]


class Worker:
    def __init__(self):
        self.gets = self.held_views = self.checks = self.failures = 0

    def check(self, view, stamp):
        self.checks += 1
        expected = payload(view.id, stamp, view.size)
        data = view.data
        if len(data) != view.size or data != expected:
            at = next((i for i in range(min(len(data), len(expected))) if data[i] != expected[i]), len(expected))
            self.failures += 1
            if self.failures <= REPORTED:
                print("CORRUPT python: object %s (%d bytes, stamp %x) differs at byte %d"
                      % (view.id, view.size, stamp & 0xFFFFFFFFFFFFFFFF, at), flush=True)

    def run(self, client, names, seconds, rnd):
        held = []
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            oid = depot.ObjectId.of("ov-%d" % rnd.randrange(names))
            op = rnd.randrange(100)
            if op < 30:
                stamp = rnd.getrandbits(64) - (1 << 63)
                size = rnd.choice(SIZES)
                try:
                    client.put(oid, payload(oid, stamp, size), metadata=struct.pack("<q", stamp))
                except depot.ObjectExistsError:
                    pass
            elif op < 60:
                try:
                    view = client.get(oid, timeout=0)
                except depot.ObjectMissingError:
                    continue
                self.gets += 1
                stamp = stamp_of(view.metadata)
                self.check(view, stamp)
                if len(held) < MAX_HELD and rnd.random() < 0.5:
                    held.append((view, stamp))
                    self.held_views += 1
                else:
                    view.release()
            elif op < 70:
                if held:
                    view, stamp = rnd.choice(held)
                    self.check(view, stamp)
            elif op < 82:
                if held:
                    view, stamp = held.pop(rnd.randrange(len(held)))
                    self.check(view, stamp)
                    view.release()
            else:
                client.delete(oid)
        for view, stamp in held:
            self.check(view, stamp)
            view.release()


def main():
    directory, names, seconds, seed = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
    w = Worker()
    try:
        with depot.connect(directory) as client:
            print("started", flush=True)
            w.run(client, names, seconds, random.Random(seed))
    except Exception as e:  # noqa: BLE001 - reported to the driver, which fails the run
        print("FAIL python: %r" % (e,), flush=True)
        raise
    print("RESULT gets=%d held=%d checks=%d failures=%d" % (w.gets, w.held_views, w.checks, w.failures), flush=True)


if __name__ == "__main__":
    main()
