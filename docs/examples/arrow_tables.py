import pyarrow as pa

import depot
import depot.arrow

with depot.connect() as client:  # $DEPOT_DIR, else /dev/shm/depot-$USER
    oid = depot.ObjectId.of("dataset/prices")
    depot.arrow.put_table(client, oid, pa.table({"price": [1.5, 2.0, 4.25]}))  # measured, then written once
    table = depot.arrow.get_table(client, oid)  # zero-copy: its buffers are the shared memory
    frame = table.to_pandas()  # pandas copies where its layout differs from Arrow's
    print(table.num_rows, frame["price"].sum())  # 3 7.75
    del table  # the object stays pinned while the table, or anything sliced from it, lives
    client.delete(oid)
