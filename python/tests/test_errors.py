"""Bad input gets Depot's own exceptions naming the value and the limit, and stores that are
not ours alone are refused."""

import os
import shutil
import struct
import uuid

import pytest

import depot
from depot import _mapping
from depot._layout import StoreHeaderDescriptor as H


@pytest.mark.parametrize("size, error, text", [
    (True, depot.ArgumentTypeError, "must be an int, got bool"),
    (1.5, depot.ArgumentTypeError, "must be an int, got float"),
    ("10", depot.ArgumentTypeError, "must be an int, got str"),
    (-1, depot.BadRequestError, "must be >= 0, got -1"),
    (2 ** 63, depot.BadRequestError, "9223372036854775808 exceeds the limit of 9223372036854775807"),
    (2 ** 100, depot.BadRequestError, "exceeds the limit"),
])
def test_bad_sizes_name_the_value_and_the_limit(client, size, error, text):
    with pytest.raises(error, match=text):
        client.create(depot.ObjectId.random(), size)


def test_a_size_larger_than_the_store_is_store_full(client):
    with pytest.raises(depot.StoreFullError):
        client.create(depot.ObjectId.random(), 2 ** 62)


@pytest.mark.parametrize("timeout, error", [
    (-1, depot.BadRequestError), (float("nan"), depot.BadRequestError), ("1", depot.ArgumentTypeError),
    (True, depot.ArgumentTypeError)])
def test_bad_timeouts_are_refused(client, timeout, error):
    with pytest.raises(error, match="timeout"):
        client.get(depot.ObjectId.random(), timeout=timeout)


def test_bad_ids_metadata_and_counts(client):
    with pytest.raises(depot.ArgumentTypeError, match="ObjectId.of"):
        client.get("name")
    with pytest.raises(depot.BadRequestError, match="20 bytes, got 3"):
        client.get(b"abc")
    with pytest.raises(depot.BadRequestError, match="65537 bytes exceeds the limit of 65536"):
        client.create(depot.ObjectId.random(), 1, b"m" * 65537)
    with pytest.raises(depot.ArgumentTypeError, match="metadata must be bytes"):
        client.create(depot.ObjectId.random(), 1, "text")
    with pytest.raises(depot.BadRequestError, match="nbytes to evict must be >= 0"):
        client.evict(-5)
    with pytest.raises(depot.ArgumentTypeError, match="put needs a buffer"):
        client.put(depot.ObjectId.random(), 12)


def test_released_views_finished_writers_and_closed_clients_refuse_use(client):
    oid = depot.ObjectId.of("used-up")
    client.put(oid, b"x")
    view = client.get(oid)
    view.release()
    with pytest.raises(depot.ViewReleasedError, match="released"):
        view.data
    writer = client.create(depot.ObjectId.random(), 4)
    writer.seal()
    with pytest.raises(depot.ViewReleasedError, match="sealed"):
        writer.data
    other = depot.connect(client.directory)
    other.close()
    for call in (lambda: other.get(oid), lambda: other.contains(oid), lambda: other.put(oid, b"y"),
                 lambda: other.stat()):
        with pytest.raises(depot.ClientClosedError):
            call()


def test_a_store_directory_open_to_others_is_refused(daemon):
    os.chmod(daemon.dir, 0o777)
    try:
        with pytest.raises(depot.PermissionDeniedError, match="mode 0777"):
            depot.connect(daemon.dir)
    finally:
        os.chmod(daemon.dir, 0o700)


def test_a_store_file_open_to_others_is_refused(daemon):
    path = os.path.join(daemon.dir, "store.depot")
    os.chmod(path, 0o666)
    try:
        with pytest.raises(depot.PermissionDeniedError, match="store file .* has mode 0666"):
            depot.connect(daemon.dir)
    finally:
        os.chmod(path, 0o600)


def test_a_store_directory_that_is_a_link_is_refused(daemon):
    link = daemon.dir + "-link"
    os.symlink(daemon.dir, link)
    try:
        with pytest.raises(depot.PermissionDeniedError, match="symbolic link"):
            depot.connect(link)
    finally:
        os.unlink(link)


@pytest.fixture
def private_dir():
    path = os.path.join("/dev/shm", "depot-test-" + uuid.uuid4().hex)
    os.mkdir(path, 0o700)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def _fake_store(directory, major):
    header = bytearray(H.HEADER_LENGTH * 2)
    struct.pack_into("<QII", header, H.MAGIC_OFFSET, H.MAGIC, major, 0)
    struct.pack_into("<Q", header, H.FILE_LENGTH_OFFSET, len(header))
    path = os.path.join(directory, "store.depot")
    fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o600)
    os.write(fd, header)
    os.close(fd)
    return path


def test_a_store_of_another_format_version_is_refused(private_dir):
    _fake_store(private_dir, 7)
    with pytest.raises(depot.VersionMismatchError, match="format version 7.0; this client reads version 1"):
        _mapping.open_mapping(private_dir)


def test_a_store_file_that_is_a_link_is_refused(private_dir):
    target = _fake_store(private_dir, 1)
    os.rename(target, target + ".real")
    os.symlink(target + ".real", target)
    with pytest.raises(depot.PermissionDeniedError, match="symbolic link"):
        _mapping.open_mapping(private_dir)


def test_a_missing_directory_says_how_to_start_a_daemon(store_dir):
    with pytest.raises(depot.DaemonNotRunningError, match="depot serve --dir"):
        depot.connect(store_dir)


def test_an_unreadable_store_directory_is_a_permission_error_naming_it(monkeypatch, store_dir):
    def denied(path, *args, **kwargs):
        raise PermissionError(13, "Permission denied", path)
    monkeypatch.setattr(os, "lstat", denied)
    with pytest.raises(depot.PermissionDeniedError, match="cannot look at the store directory %s" % store_dir):
        depot.connect(store_dir)
