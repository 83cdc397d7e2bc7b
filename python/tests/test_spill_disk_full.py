"""scripts/spill-disk-full --quick: a daemon whose spill directory is on a full 3 MiB disk backs off instead of
spinning, logs each condition once per interval, counts the failures, fails gets and puts with the reason, and
restores once there is room. The script mounts a tmpfs (as root, or in a user namespace); it is skipped where
neither is possible."""
import os
import subprocess
import sys

import pytest

from conftest import REPO, class_path, java_executable

SKIPPED = 77


def test_a_full_spill_disk_makes_the_daemon_back_off_and_fail_with_the_reason():
    if java_executable() is None or class_path() is None:
        pytest.skip("needs JDK 25 and the built Java modules")
    env = dict(os.environ, DEPOT_CLASSPATH=class_path(), JAVA_HOME=os.path.dirname(os.path.dirname(java_executable())))
    r = subprocess.run([sys.executable, os.path.join(REPO, "scripts", "spill-disk-full"), "--quick"], env=env,
                       capture_output=True, text=True, timeout=300)
    if r.returncode == SKIPPED:
        pytest.skip(r.stderr.strip())
    assert r.returncode == 0, r.stdout + r.stderr
    assert "spill-disk-full: passed" in r.stdout, r.stdout
