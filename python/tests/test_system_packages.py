"""bin/lib/system-packages.sh: Debian's packages for the suite under /usr/bin/python3 are apt-installed as root
when missing, and otherwise named with the command that installs them. Run against stand-ins for dpkg-query,
apt-get and id earlier on PATH, so that nothing on the machine changes."""

import os
import subprocess

import pytest

from conftest import system_packages

LIB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bin", "lib", "system-packages.sh")
PACKAGES = system_packages()


@pytest.fixture
def fake(tmp_path):
    """A bin/ folder of stand-ins: dpkg-query reports the packages listed in installed.txt, apt-get logs its
    arguments to apt.log (and installs what it is asked, or fails when apt-fails exists), id -u prints uid.txt."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    scripts = {
        "dpkg-query": """#!/bin/bash
p=${@: -1}
grep -qx "$p" "$FAKE/installed.txt" || { echo "dpkg-query: no packages found matching $p" >&2; exit 1; }
echo 'install ok installed'
""",
        "apt-get": """#!/bin/bash
echo "$*" >> "$FAKE/apt.log"
[ -e "$FAKE/apt-fails" ] && { echo "E: could not reach the archive" >&2; exit 100; }
[ "$1" = install ] || exit 0
shift
for a in "$@"; do case $a in -*) ;; *) echo "$a" >> "$FAKE/installed.txt" ;; esac; done
""",
        "id": """#!/bin/bash
cat "$FAKE/uid.txt"
""",
    }
    for name, text in scripts.items():
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    (tmp_path / "installed.txt").write_text("")
    (tmp_path / "uid.txt").write_text("0\n")
    return tmp_path


def run(fake, **env):
    environment = dict(os.environ, FAKE=str(fake), PATH="%s:%s" % (fake / "bin", os.environ["PATH"]),
                       TMPDIR=str(fake))
    environment.pop("DEPOT_NO_INSTALL", None)
    environment.update(env)
    return subprocess.run(["bash", "-c", 'source "$0"; depot_system_packages', LIB], env=environment,
                          capture_output=True, text=True, check=True)


def apt_calls(fake):
    log = fake / "apt.log"
    return log.read_text().splitlines() if log.exists() else []


def test_root_installs_only_the_missing_packages_after_an_update(fake):
    (fake / "installed.txt").write_text("python3-numpy\npython3-pytest\n")
    run(fake)
    missing = [p for p in PACKAGES if p not in ("python3-numpy", "python3-pytest")]
    assert apt_calls(fake) == ["update -q", "install -y -q " + " ".join(missing)]


def test_nothing_is_installed_when_every_package_is_there(fake):
    (fake / "installed.txt").write_text("\n".join(PACKAGES) + "\n")
    result = run(fake)
    assert apt_calls(fake) == []
    assert result.stderr == ""


def test_a_user_who_is_not_root_is_told_what_is_missing_and_how_to_install_it(fake):
    (fake / "uid.txt").write_text("1000\n")
    there = ("python3-numpy", "python3-pandas", "python3-pytest")
    (fake / "installed.txt").write_text("\n".join(there) + "\n")
    result = run(fake)
    missing = " ".join(p for p in PACKAGES if p not in there)
    assert apt_calls(fake) == []
    assert missing + " not installed (not running as root)" in result.stderr
    assert "apt-get install " + missing in result.stderr


def test_a_failed_apt_get_is_reported_with_its_log_and_does_not_fail(fake):
    (fake / "apt-fails").write_text("")
    result = run(fake)
    assert apt_calls(fake) == ["update -q"]
    assert "could not reach the archive" in result.stderr
    assert "not installed (apt-get failed; its log is %s" % fake in result.stderr
    assert "apt-get install " + " ".join(PACKAGES) in result.stderr


def test_no_install_only_reports(fake):
    result = run(fake, DEPOT_NO_INSTALL="1")
    assert apt_calls(fake) == []
    assert "not installed (DEPOT_NO_INSTALL=1)" in result.stderr
