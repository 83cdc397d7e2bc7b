import depot
import depot.arrow

with depot.connect() as client:  # the store of the Spark applications (spark.depot.dir)
    table = depot.arrow.read_dataset(client, "events")  # zero-copy: one chunk per part
    print(table.num_rows, table.column_names)
