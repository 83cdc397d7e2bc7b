"""N client processes connect at once to the store in DIR: ``python clients_at_once.py DIR N``.

This process imports depot, forks N children and then lets them all go at once (it closes the pipe they wait
on). Each child connects (``depot.connect(DIR)``), reports ``ok SLOT MICROS`` or ``err MESSAGE`` on a shared
pipe (one write under PIPE_BUF: never interleaved) and waits on a second pipe. Once all have reported, one JSON
line goes to stdout: ``{"clients", "connected", "failed", "slots", "errors", "connect_p50_us",
"connect_max_us", "wall_ms"}``. The children then keep their clients (connected, sleeping) until a line or EOF
arrives on stdin; then they close them and exit, every one is reaped, and ``{"reaped": N, "bad_exits": K}``
follows. The children never run the parent's exit handlers (they leave with ``os._exit``).
"""

import gc
import json
import os
import sys
import time

import depot


def _child(directory, go, report, hold):
    os.read(go, 1)  # EOF: the parent let everyone go
    started = time.monotonic()
    client = None
    try:
        client = depot.connect(directory)
        line = "ok %d %d\n" % (client._slot.index, (time.monotonic() - started) * 1e6)
    except Exception as e:  # reported, not raised: the parent counts failures
        line = "err %s: %s\n" % (type(e).__name__, str(e).replace("\n", " ")[:300])
    os.write(report, line.encode())
    os.read(hold, 1)  # EOF: the parent is done measuring
    if client is not None:
        client.close()


def main(directory, n):
    go_r, go_w = os.pipe()
    report_r, report_w = os.pipe()
    hold_r, hold_w = os.pipe()
    gc.collect()
    gc.freeze()  # the children share the parent's objects: no collection copies their pages
    pids = []
    try:
        for _ in range(n):
            pid = os.fork()
            if pid == 0:
                status = 0
                try:
                    for fd in (go_w, report_r, hold_w):
                        os.close(fd)
                    _child(directory, go_r, report_w, hold_r)
                except BaseException:
                    status = 1
                finally:
                    os._exit(status)
            pids.append(pid)
        os.close(go_r)
        os.close(report_w)
        os.close(hold_r)
        started = time.monotonic()
        os.close(go_w)
        go_w = None
        lines = []
        with os.fdopen(report_r, "r") as reports:
            for line in reports:
                lines.append(line.rstrip("\n"))
                if len(lines) == n:
                    break
            wall = time.monotonic() - started
            ok = [l.split() for l in lines if l.startswith("ok ")]
            micros = sorted(int(o[2]) for o in ok)
            errors = [l[4:] for l in lines if not l.startswith("ok ")]
            print(json.dumps({"clients": n, "connected": len(ok), "failed": n - len(ok),
                              "slots": len({int(o[1]) for o in ok}), "errors": errors[:3],
                              "connect_p50_us": micros[len(micros) // 2] if micros else None,
                              "connect_max_us": micros[-1] if micros else None,
                              "wall_ms": round(wall * 1000, 1)}), flush=True)
            sys.stdin.readline()
    finally:
        if go_w is not None:
            os.close(go_w)  # children forked before a failure: let them go, then stop them
        os.close(hold_w)
        bad = 0
        for pid in pids:
            _, status = os.waitpid(pid, 0)
            bad += status != 0
        print(json.dumps({"reaped": len(pids), "bad_exits": bad}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
