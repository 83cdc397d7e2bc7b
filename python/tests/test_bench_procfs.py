"""procfs.py, how the dask benchmark measures processes (in depot-bench's resources): the process tree includes
children that any thread started."""

import importlib.util
import os
import subprocess
import sys
import threading

import pytest

from conftest import REPO

_PROCFS = os.path.join(REPO, "depot-bench", "src", "main", "resources", "dev", "depot", "bench", "procfs.py")
if not os.path.isfile(_PROCFS):
    pytest.skip("needs depot-bench's sources beside the tests", allow_module_level=True)
_spec = importlib.util.spec_from_file_location("procfs", _PROCFS)
procfs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(procfs)
cpu_seconds, minor_faults, process_tree = procfs.cpu_seconds, procfs.minor_faults, procfs.process_tree

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def test_process_tree_includes_children_started_by_other_threads():
    started = []
    thread = threading.Thread(target=lambda: started.append(subprocess.Popen([sys.executable, "-c", "input()"],
                                                                             stdin=subprocess.PIPE)))
    thread.start()
    thread.join()
    child = started[0]
    try:
        assert child.pid in process_tree([os.getpid()])
        assert cpu_seconds(child.pid) >= 0.0
    finally:
        child.stdin.close()
        child.wait()
    assert child.pid not in process_tree([os.getpid()])


def test_minor_faults_count_first_touches_of_fresh_pages():
    import mmap
    before = minor_faults(os.getpid())
    pages = 256
    with mmap.mmap(-1, pages * mmap.PAGESIZE) as m:
        for i in range(pages):
            m[i * mmap.PAGESIZE] = 1
    assert minor_faults(os.getpid()) - before >= pages
    assert minor_faults(2 ** 22 + 12345) == 0  # no such process
