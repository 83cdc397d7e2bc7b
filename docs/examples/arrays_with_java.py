import numpy as np

import depot

with depot.connect() as client:  # $DEPOT_DIR, else /dev/shm/depot-$USER
    matrix = client.get_array(depot.ObjectId.of("from-java"), timeout=30)  # waits for Java's seal
    print(matrix.dtype, matrix.shape, matrix[2, 3])  # float64 (3, 4) 11.0: a view, no copy
    client.put_array(depot.ObjectId.of("from-python"), np.arange(6, dtype=np.int32).reshape(2, 3))
