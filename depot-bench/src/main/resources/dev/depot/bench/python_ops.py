"""python-ops benchmark, Python side (run by dev.depot.bench.PythonOpsBench).

Times single Python client operations against a daemon serving DIR, each beside a baseline measured in the
same run: the same data pickled through a multiprocessing pipe to another Python process and back (what a
Python program without Depot does), and for small operations also the round trip of a 1-byte message on a
UNIX socket between two Python processes (the floor of any request to a daemon). Prints one JSON line per
case: {"case", "p50_ns", "p99_ns", "n", "baseline": {...}, "target_ns"[, "target_text"]} or {"case", "skipped":
reason}; "target_text" without "target_ns" marks a breakdown figure, "none (what it is for)", and beside it says
what the target is made of. Every baseline names the client's implementation ("client": "native", the C extension
depot._native, or "ctypes", the fallback; see depot._accel).
usage: python_ops.py DIR QUICK(0|1)
"""
import gc
import json
import multiprocessing as mp
import os
import socket
import sys
import time

import depot
from depot import _accel

KIB = 1024
MIB = 1024 * KIB


def percentiles(samples):
    xs = sorted(samples)
    return xs[len(xs) // 2], xs[min(len(xs) - 1, (len(xs) * 99) // 100)]


def timed(op, n, warmup):
    for _ in range(warmup):
        op()
    out = []
    for _ in range(n):
        t0 = time.perf_counter_ns()
        op()
        out.append(time.perf_counter_ns() - t0)
    return out


def pipe_peer(conn):
    """Receives whatever comes and sends it back, until None."""
    while True:
        value = conn.recv()
        if value is None:
            return
        conn.send(value)


def pipe_feeder(conn, value):
    """Sends ``value`` for every request (a stand-in for a producer that hands data over a pipe)."""
    while conn.recv() is not None:
        conn.send(value)


def socket_echo(sock):
    while True:
        b = sock.recv(1)
        if not b:
            return
        sock.sendall(b)


class Pipe:
    """A multiprocessing pipe to a process that feeds ``value`` on request (get) or echoes (put)."""

    def __init__(self, value=None):
        ctx = mp.get_context("fork")
        self.conn, child = ctx.Pipe()
        target, args = (pipe_feeder, (child, value)) if value is not None else (pipe_peer, (child,))
        self.proc = ctx.Process(target=target, args=args, daemon=True)
        self.proc.start()
        child.close()

    def fetch(self):
        self.conn.send(0)
        return self.conn.recv()

    def round_trip(self, value):
        self.conn.send(value)
        return self.conn.recv()

    def close(self):
        self.conn.send(None)
        self.proc.join(30)
        self.conn.close()


def socket_round_trip_ns(n):
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    pid = os.fork()
    if pid == 0:
        a.close()
        try:
            socket_echo(b)
        finally:
            os._exit(0)
    b.close()

    def op():
        a.sendall(b"x")
        a.recv(1)

    samples = timed(op, n, n // 10)
    a.close()
    os.waitpid(pid, 0)
    return samples


def bare_put_round_trips(directory, payload, n):
    """Round trips of PUT frames (1 KiB, new ids) on a connection of their own, without the client library:
    HELLO, then each frame prepared in advance, sent with one send and its 32-byte reply read with one recv.
    The objects are deleted afterwards through a client."""
    from depot import _wire as w
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(os.path.join(directory, "depot.sock"))
    s.sendall(w.frame(w.HELLO_TYPE, 1, w.HELLO.pack(w.VERSION_MAJOR, w.VERSION_MINOR, os.getpid())))
    reply = bytearray(4096)
    got = 0
    while got < w.HEADER_LENGTH + w.WELCOME.size:
        got += s.recv_into(memoryview(reply)[got:])
    warmup = n // 10
    ids = [depot.ObjectId.random() for _ in range(n + warmup)]
    frames = [w.frame(w.PUT_TYPE, 2 + i, w.CREATE.pack(oid._bytes, 0, len(payload), 0) + payload)
              for i, oid in enumerate(ids)]
    expected = w.HEADER_LENGTH + w.CREATED.size
    it = iter(frames)
    view = memoryview(reply)

    def op():
        s.sendall(next(it))
        k = s.recv_into(view)
        while k < expected:
            k += s.recv_into(view[k:])
        if w.HEADER.unpack_from(reply)[1] != w.PUT_TYPE | w.REPLY_BIT:
            raise RuntimeError("a bare PUT was not answered with its reply")

    samples = timed(op, n, warmup)
    s.close()
    with depot.connect(directory) as c:
        for oid in ids:
            c.delete(oid)
    return samples


def emit(case, samples, baseline, target_ns, target_text=None):
    p50, p99 = percentiles(samples)
    line = {"case": case, "p50_ns": p50, "p99_ns": p99, "n": len(samples), "baseline": baseline,
            "target_ns": target_ns}
    if target_text is not None:
        line["target_text"] = target_text
    print(json.dumps(line), flush=True)


CLIENT = "ctypes" if _accel.native is None else "native"


def baseline_of(kind, samples, **extra):
    p50, p99 = percentiles(samples)
    b = {"kind": kind, "p50_ns": p50, "p99_ns": p99, "client": CLIENT}
    b.update(extra)
    return b


def main():
    directory, quick = sys.argv[1], sys.argv[2] == "1"
    # --quick (the smoke test): smaller objects and fewer samples, same cases
    small_n = 200 if quick else 3000
    large_n = 3 if quick else 40
    # a pipe moves 64 MiB in 64 KiB writes, each a context switch: slow on a busy machine, so fewer samples
    pipe_n = 3 if quick else 7
    frame_n = 2 if quick else 10
    large = 4 * MIB if quick else 64 * MIB
    frame_bytes = 10_000_000 if quick else 100_000_000
    big = "%d MiB" % (large // MIB)
    frame_label = "%d MB DataFrame" % (frame_bytes // 1_000_000)
    client = depot.connect(directory)
    socket_p50, _ = percentiles(socket_round_trip_ns(small_n))

    # get + release
    for size, n in ((KIB, small_n), (large, small_n)):
        oid = depot.ObjectId.of("python-ops/get/%d" % size)
        payload = os.urandom(size) if size <= MIB else bytes(size)
        client.put(oid, payload)

        def get_release():
            client.get(oid, timeout=0).release()

        samples = timed(get_release, n, n // 10)
        pipe = Pipe(payload)
        base = timed(pipe.fetch, pipe_n if size > MIB else n, 1 if size > MIB else n // 10)
        pipe.close()
        # at most 3 µs, and at most a quarter of the socket round trip: a request to a daemon could not do it
        emit("get+release %s" % ("1 KiB" if size == KIB else big), samples,
             baseline_of("the bytes pickled through a multiprocessing pipe", base, socket_round_trip_p50_ns=socket_p50),
             min(3_000, socket_p50 // 4),
             "p50 <= 3 us and <= 1/4 of the socket round trip (%.1f us)" % (socket_p50 / 1000))
        client.delete(oid)

    try:
        import numpy as np
    except ImportError:
        np = None
    if np is None:
        print(json.dumps({"case": "get_array " + big, "skipped": "numpy is not installed"}), flush=True)
    else:
        oid = depot.ObjectId.of("python-ops/array")
        array = np.arange(large // 8, dtype=np.float64)
        client.put_array(oid, array)

        def get_array():
            a = client.get_array(oid, timeout=0)
            del a

        samples = timed(get_array, small_n, small_n // 10)
        pipe = Pipe(array)
        base = timed(pipe.fetch, pipe_n, 1)
        pipe.close()
        emit("get_array " + big, samples, baseline_of("the array pickled through a multiprocessing pipe", base),
             10_000)
        client.delete(oid)

    # put 1 KiB, fresh ids; deleted outside the timing. A put that finds room is created, filled and sealed in
    # shared memory by the client itself (no daemon): the first puts of this process are reported on their own
    # ("first puts"), then more are made as in a process that has been writing for a while, then timed.
    payload = os.urandom(KIB)
    cold_n = 100 if quick else 1000
    warm_n = 200 if quick else 20_000

    def timed_puts(n, warmup):
        ids = [depot.ObjectId.random() for _ in range(n + warmup)]
        it = iter(ids)
        samples = timed(lambda: client.put(next(it), payload), n, warmup)
        for oid in ids:
            client.delete(oid)
        return samples

    cold = timed_puts(cold_n, 0)
    for _ in range(warm_n // 1000 or 1):
        timed_puts(0, min(warm_n, 1000))
    samples = timed_puts(small_n, small_n // 10)
    # The same objects as PUT requests from a bare protocol client (its own connection: frames prepared in
    # advance, one send and one recv each): what a put costs when it must go through the daemon (no room without
    # evicting, a busy allocator lock), without the client library's share.
    try:
        bare = bare_put_round_trips(directory, payload, small_n)
    except OSError as e:  # the socket file went (a cleanup of /dev/shm by another job, say): the rest still runs
        bare = None
        print(json.dumps({"case": "put 1 KiB, bare PUT frames", "skipped": "cannot connect again: %s" % e}), flush=True)
    pipe = Pipe()
    base = timed(lambda: pipe.round_trip(payload), small_n, small_n // 10)
    pipe.close()
    put_baseline = baseline_of("the bytes pickled through a multiprocessing pipe and acknowledged", base,
                               socket_round_trip_p50_ns=socket_p50)
    emit("put 1 KiB", samples, put_baseline, 10_000)
    if bare is not None:
        emit("put 1 KiB, bare PUT frames", bare, put_baseline, None,
             "none (a put through the daemon, as when it must make room: the socket's and the daemon's share)")
    emit("put 1 KiB, first puts", cold, put_baseline, None,
         "none (the first %d puts of this process)" % cold_n)

    values = []
    if np is not None:
        values.append((big + " array", np.random.default_rng(1).random(large // 8), large_n))
    try:
        import pandas as pd
    except ImportError:
        pd = None
    if pd is None or np is None:
        print(json.dumps({"case": "put_object/get_object " + frame_label, "skipped": "pandas is not installed"}),
              flush=True)
    else:
        rows = frame_bytes // 40
        rng = np.random.default_rng(2)
        frame = pd.DataFrame({"a": rng.random(rows), "b": rng.integers(0, 1 << 40, rows), "c": rng.random(rows),
                              "d": rng.random(rows), "e": rng.integers(0, 100, rows)})
        values.append((frame_label, frame, frame_n))
    for label, value, n in values:
        counter = iter(range(1 << 30))
        written = []

        def put_object():
            oid = depot.ObjectId.of("python-ops/object/%s/%d" % (label, next(counter)))
            client.put_object(oid, value)
            written.append(oid)
            if len(written) > 2:
                client.delete(written.pop(0))

        put_samples = timed(put_object, n, 1)
        oid = written[-1]

        def get_object():
            got = client.get_object(oid, timeout=0)
            del got

        get_samples = timed(get_object, small_n if label.endswith("array") else 10 * n, 3)
        for o in written:
            client.delete(o)
        pipe = Pipe()
        base = timed(lambda: pipe.round_trip(value), min(n, pipe_n), 1)
        pipe.close()
        feeder = Pipe(value)
        fetch = timed(feeder.fetch, min(n, pipe_n), 1)
        feeder.close()
        emit("put_object %s" % label, put_samples,
             baseline_of("pickled through a multiprocessing pipe to a process that sends it back", base), None)
        emit("get_object %s" % label, get_samples,
             baseline_of("received pickled through a multiprocessing pipe", fetch),
             10_000 if label.endswith("array") else None)
        gc.collect()
    client.close()


if __name__ == "__main__":
    main()
