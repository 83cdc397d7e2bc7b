"""scripts/metrics-slow-client --quick: `depot serve --metrics` keeps answering a good scraper while dozens of slow
and stuck clients (partial request lines, dribbled headers, silent connections, pipeliners and clients that never
read) hold connections, keeps at most its limit of them open, and closes every one after its timeouts."""
import os
import subprocess
import sys

import pytest

from conftest import REPO, java_executable

JAR = os.path.join(REPO, "depot-cli", "target", "depot.jar")


def test_slow_clients_do_not_stop_a_good_scraper_and_are_closed_after_the_timeouts():
    if java_executable() is None or not os.path.isfile(JAR):
        pytest.skip("needs JDK 25 and the built CLI (%s)" % JAR)
    env = dict(os.environ, DEPOT_HOME=REPO, JAVA_HOME=os.path.dirname(os.path.dirname(java_executable())))
    r = subprocess.run([sys.executable, os.path.join(REPO, "scripts", "metrics-slow-client"), "--quick"], env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "metrics-slow-client: passed" in r.stdout, r.stdout
