"""Connect time of a new Python client, and its first get: ``python connect_time.py DIR HEX_ID RUNS``.

Each run connects (``depot.connect(DIR)``), gets the object HEX_ID once (1 KiB, put by the caller) and closes;
one JSON line reports the median of the runs: ``{"connect_ns", "first_get_ns", "runs"}``."""

import json
import sys
import time

import depot


def main(directory, hex_id, runs):
    oid = depot.ObjectId(bytes.fromhex(hex_id))
    connects, gets = [], []
    for _ in range(runs):
        t0 = time.perf_counter_ns()
        client = depot.connect(directory)
        t1 = time.perf_counter_ns()
        with client.get(oid, timeout=0) as view:
            view.data[0]
        t2 = time.perf_counter_ns()
        client.close()
        connects.append(t1 - t0)
        gets.append(t2 - t1)
    print(json.dumps({"connect_ns": sorted(connects)[runs // 2], "first_get_ns": sorted(gets)[runs // 2],
                      "runs": runs}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
