"""The Python sort demo (depot-bench's sort_demo.py): the order is np.sort's (duplicates, NaN last, ±0.0), and
the demo verifies itself."""

import json
import os
import sys

import pytest

np = pytest.importorskip("numpy")

BENCH_DIR = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "depot-bench", "src", "main",
                                         "resources", "dev", "depot", "bench"))


@pytest.fixture(scope="module")
def demo():
    sys.path.insert(0, BENCH_DIR)
    try:
        import sort_demo
        yield sort_demo
    finally:
        sys.path.remove(BENCH_DIR)


@pytest.mark.parametrize("partitions", [1, 2, 5])
def test_sample_sort_gives_np_sorts_order_with_duplicates_nan_and_signed_zeros(demo, partitions):
    rng = np.random.default_rng(partitions)
    values = rng.integers(-20, 20, 4000).astype(np.float64)
    specials = np.array([np.nan, -0.0, 0.0, np.inf, -np.inf, 5e-324, 1.0, 1.0])
    values[rng.integers(0, 4000, 800)] = specials[rng.integers(0, len(specials), 800)]
    got = demo.sample_sort(values, partitions)
    expected = np.sort(values)
    np.testing.assert_array_equal(got, expected)  # NaN == NaN here; -0.0 == 0.0 as np.sort leaves them
    assert demo.disorder(got) == -1
    assert demo.checksum(got) == demo.checksum(values)


def test_sample_sort_of_int64_extremes(demo):
    values = np.array([np.iinfo(np.int64).max, 0, -1, np.iinfo(np.int64).min, 42, 42, 0], dtype=np.int64)
    np.testing.assert_array_equal(demo.sample_sort(values, 3), np.sort(values))


def test_disorder_finds_a_nan_that_is_not_at_the_end(demo):
    assert demo.disorder(np.array([1.0, np.nan, 2.0])) >= 0
    assert demo.disorder(np.array([1.0, 2.0, np.nan, np.nan])) == -1
    assert demo.disorder(np.array([2, 1])) == 0


def test_the_same_data_whatever_the_split(demo):
    whole = demo.generate("<f8", 3, 0, demo.BLOCK + 100, specials=True)
    parts = np.concatenate([demo.generate("<f8", 3, 0, 1000, True), demo.generate("<f8", 3, 1000, demo.BLOCK + 100, True)])
    np.testing.assert_array_equal(whole, parts)


def test_the_demo_sorts_through_the_shuffle_with_worker_processes(demo, daemon, capsys):
    pytest.importorskip("psutil")  # its memory figures
    status = demo.main(["--count", "30000", "--workers", "2", "--dir", daemon.dir, "--specials", "--no-pandas",
                        "--json"])
    report = json.loads(capsys.readouterr().out)
    assert status == 0 and report["verified"], report
    assert report["count"] == 30000 and report["bytes_shuffled"] == 30000 * 8
    assert [r["run"] for r in report["runs"]] == ["np.sort", "1", "2"]
