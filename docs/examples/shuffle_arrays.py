import numpy as np

import depot
from depot.shuffle import Shuffle, partition_array

splitters = np.array([5.0])  # partition 0: the values below 5; partition 1: the others
with depot.connect() as client:  # $DEPOT_DIR, else /dev/shm/depot-$USER
    with Shuffle.create(client, "sort-42", maps=2, partitions=2, dtype="<f8") as s:  # the coordinator owns it
        # map tasks; another process gets the shuffle with Shuffle.open(client, "sort-42", timeout=60)
        s.write_map(0, partition_array(np.array([1.5, 7.0, 4.25]), splitters))  # copies ready-made slices
        with s.writer(1, [8, 8]) as w:  # or fills them in place: the bytes of each partition's slice
            w.array(0)[:] = [2.0]
            w.array(1)[:] = [9.5]
            w.commit()
        for p in range(2):  # reduce tasks
            with s.reader(p, timeout=60) as r:  # waits up to 60 s for maps still running
                parts = r.arrays()  # read-only NumPy arrays over shared memory, one per map
                print("partition", p, "sum", sum(a.sum() for a in parts))
    # leaving the block deletes every object of the shuffle
