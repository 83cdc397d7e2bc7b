"""A Dask array persisted on depot.dask.Scheduler, read by a DataLoader without a copy."""

import pytest

torch = pytest.importorskip("torch")
da = pytest.importorskip("dask.array")
pytest.importorskip("cloudpickle")

import depot  # noqa: E402
import depot.dask  # noqa: E402
from depot.torch import BatchLoader, DaskArrayDataset  # noqa: E402


def test_rows_of_a_persisted_array_reach_a_dataloader_as_views_of_the_store(shared_daemon):
    n = 4096  # chunks of 1024 rows x 32 float32: 128 KiB, above the scheduler's inline_bytes, so stored in Depot
    raw = da.arange(n * 32, chunks=1024 * 32, dtype="float64").reshape(n, 32)
    labels = da.arange(n, chunks=1024) % 10
    with depot.dask.Scheduler(workers=2, dir=shared_daemon.dir) as s:
        x = (raw / 2).astype("float32").persist(scheduler=s)
        y = labels.persist(scheduler=s)
        dataset = DaskArrayDataset(x, labels=y)
        row, label = dataset[17]
        assert torch.equal(row, torch.arange(17 * 32, 18 * 32, dtype=torch.float32) / 2) and label == 7
        with depot.connect(shared_daemon.dir) as c:
            base = c._mapping.base
            assert base <= row.data_ptr() < base + c.file_length  # the persisted chunk's memory, not a copy
        seen = []
        for rows, labels_ in torch.utils.data.DataLoader(dataset, batch_size=512, num_workers=2):
            assert torch.equal(rows[:, 0], torch.arange(len(seen), len(seen) + 512, dtype=torch.float32) * 16)
            seen += labels_.tolist()
        assert seen == [i % 10 for i in range(n)]
        batches = list(BatchLoader(dataset, dir=shared_daemon.dir, batch_size=1024, num_workers=2))
        assert [tuple(b[0].shape) for b in batches] == [(1024, 32)] * 4
        del row, dataset, batches, x, y


def test_an_array_chunked_across_columns_is_refused_with_the_rechunk_to_use():
    with pytest.raises(ValueError, match="rechunk"):
        DaskArrayDataset(da.zeros((8, 8), chunks=4))
