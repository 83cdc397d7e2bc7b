"""The ids of objects a worker writes for others carry the writer's identity where Java reads it
(``dev.depot.client.WriterIdDescriptorTest`` checks the same bytes; ``depot doctor`` deletes a dead writer's)."""

import pytest

pytest.importorskip("dask")

from depot.dask._ids import RESULT_ID_LAYOUT, RESULT_ID_MAGIC  # noqa: E402

IDENTITY = 0x0000_1234_8000_5678
HEX = "44645731" + "00001234" + "80005678" + "0102030405060708"


def test_a_writer_id_is_packed_as_java_reads_it():
    raw = RESULT_ID_LAYOUT.pack(RESULT_ID_MAGIC, IDENTITY >> 32, IDENTITY & 0xFFFFFFFF,
                                bytes.fromhex("0102030405060708"))
    assert raw.hex() == HEX
