import ctypes
import gc

import pytest

import depot

np = pytest.importorskip("numpy")


def _address_of_mapping(client):
    return client._mapping.base


def test_array_comes_back_with_its_dtype_and_shape(client):
    oid = depot.ObjectId.of("matrix")
    original = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    client.put_array(oid, original)
    array = client.get_array(oid, timeout=0)
    assert array.dtype == np.float32 and array.shape == (2, 3, 4)
    assert np.array_equal(array, original)
    assert not array.flags.writeable


def test_get_array_is_a_view_of_shared_memory_not_a_copy(client):
    oid = depot.ObjectId.of("zero-copy")
    client.put_array(oid, np.arange(1000, dtype=np.int64))
    array = client.get_array(oid)
    with client.get(oid, 0) as view:
        offset = view.offset
    # the array's base exports the client's one mapping of the store file ...
    assert isinstance(array.base, ctypes.Array) and ctypes.addressof(array.base) == client._mapping.base
    # ... and the elements lie at the object's offset in it
    address = _address_of_mapping(client)
    assert array.__array_interface__["data"][0] == address + offset
    mapped = np.frombuffer(client._mapping.mm, dtype=np.uint8)
    try:
        assert np.shares_memory(array, mapped)
    finally:
        del mapped


def test_the_pin_of_an_array_lasts_as_long_as_the_array(client):
    oid = depot.ObjectId.of("pinned-array")
    client.put_array(oid, np.ones((10, 10)))
    array = client.get_array(oid)
    row = array[3]
    del array
    gc.collect()
    assert client.stat().connection_pins == 1, "a slice keeps the array, and so the pin, alive"
    assert row.sum() == 10
    del row
    gc.collect()
    assert client.stat().connection_pins == 0
    assert client.stat().pinned_bytes == 0


def test_array_metadata_has_the_documented_bytes():
    # "DPA1", 3, "<i4", ndim 1, shape 5 as u64: the same bytes Java's ArrayMetadata writes.
    assert depot.encode_array_metadata("<i4", (5,)).hex() == "44504131" "03" "3c6934" "01" "0500000000000000"
    dtype, shape, header = depot.decode_array_metadata(depot.encode_array_metadata("|u1", (), b"app"))
    assert (dtype, shape, header) == ("|u1", (), 9)


def test_truncated_array_metadata_is_rejected():
    full = depot.encode_array_metadata("<f8", (2, 2))
    for n in range(len(full)):
        with pytest.raises(ValueError):
            depot.decode_array_metadata(full[:n])


def test_application_metadata_follows_the_array_header(client):
    oid = depot.ObjectId.random()
    client.put_array(oid, np.zeros(3, dtype=np.uint8), metadata=b"label=x")
    with client.get(oid, 0) as view:
        _, _, header = depot.decode_array_metadata(view.metadata)
        assert view.metadata[header:] == b"label=x"


def test_non_contiguous_and_zero_sized_arrays_are_stored(client):
    strided = np.arange(20, dtype=np.int16).reshape(4, 5)[:, ::2]
    client.put_array(depot.ObjectId.of("strided"), strided)
    assert np.array_equal(client.get_array(depot.ObjectId.of("strided"), 0), strided)
    client.put_array(depot.ObjectId.of("empty"), np.zeros((0, 3)))
    assert client.get_array(depot.ObjectId.of("empty"), 0).shape == (0, 3)


def test_object_arrays_are_refused(client):
    with pytest.raises(TypeError):
        client.put_array(depot.ObjectId.random(), np.array([object()]))


def test_get_array_of_a_size_its_header_disagrees_with_raises_and_keeps_no_pin(client):
    oid = depot.ObjectId.of("header-says-80-bytes")
    client.put(oid, bytes(40), metadata=depot.encode_array_metadata("<f8", (10,)))
    for _ in range(2):  # the second time the header is already parsed
        with pytest.raises(ValueError, match="holds 40 bytes but its header says <f8 \\(10,\\) \\(80 bytes\\)"):
            client.get_array(oid, timeout=0)
        assert client.stat().connection_pins == 0


def test_get_array_of_an_object_without_an_array_header_raises_and_keeps_no_pin(client):
    oid = depot.ObjectId.of("not-an-array")
    client.put(oid, bytes(8), metadata=b"text/plain")
    with pytest.raises(ValueError, match="does not start with the array magic DPA1"):
        client.get_array(oid, timeout=0)
    assert client.stat().connection_pins == 0
    with pytest.raises(depot.ObjectMissingError):
        client.get_array(depot.ObjectId.of("no-such-array"), timeout=0)


def test_arrays_with_the_same_header_each_show_their_own_elements(client):
    ids = [depot.ObjectId.of("same-header-%d" % i) for i in range(3)]
    for i, oid in enumerate(ids):
        client.put_array(oid, np.full((4, 5), i, dtype=np.int32))
    arrays = [client.get_array(oid) for oid in ids]
    for i, array in enumerate(arrays):
        assert array.shape == (4, 5) and array.dtype == np.int32 and (array == i).all()
    assert client.stat().connection_pins == 3
    del arrays, array
    gc.collect()
    assert client.stat().connection_pins == 0
