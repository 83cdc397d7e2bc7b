"""The ``depot`` console command and the discovery of the jars bundled in the wheel."""

import os

import pytest

import depot.command
import depot.daemon
from depot.daemon import DaemonStartError


@pytest.fixture
def bundled(tmp_path, monkeypatch):
    """A package with a bundled ``_jars/`` folder holding a (fake) depot-cli jar."""
    jars = tmp_path / "_jars"
    jars.mkdir()
    (jars / "depot-cli-9.9.jar").write_bytes(b"")
    monkeypatch.setattr(depot.daemon, "BUNDLED_JARS", str(jars))
    monkeypatch.setattr(depot.daemon, "find_java", lambda: "/jdk-25/bin/java")
    return jars


def test_launcher_should_prefer_the_jars_bundled_in_the_package_over_depot_home(bundled, tmp_path, monkeypatch):
    monkeypatch.setenv("DEPOT_HOME", str(tmp_path / "elsewhere"))
    monkeypatch.setenv("DEPOT_JAVA_OPTS", "-Xmx64m")
    assert depot.daemon.find_launcher() == ["/jdk-25/bin/java", "--enable-native-access=ALL-UNNAMED", "-Xmx64m",
                                            "-cp", os.path.join(str(bundled), "*"), "dev.depot.cli.Main"]


def test_command_should_run_the_bundled_cli_with_its_arguments(bundled, monkeypatch):
    ran = []
    monkeypatch.setattr(os, "execv", lambda path, argv: ran.append((path, argv)))
    depot.command.main(["stat", "--dir", "/dev/shm/x"])
    assert ran == [("/jdk-25/bin/java", ["/jdk-25/bin/java", "--enable-native-access=ALL-UNNAMED", "-cp",
                                         os.path.join(str(bundled), "*"), "dev.depot.cli.Main",
                                         "stat", "--dir", "/dev/shm/x"])]


def test_command_without_a_jdk_should_say_what_to_install(bundled, monkeypatch, capsys):
    def no_java():
        raise DaemonStartError("no JDK 25 or newer found (looked at $JAVA_HOME, java on PATH, /usr/lib/jvm, /opt): "
                               "install one (e.g. Temurin 25 from https://adoptium.net) and set JAVA_HOME to it")
    monkeypatch.setattr(depot.daemon, "find_java", no_java)
    monkeypatch.setattr(os, "execv", lambda *a: pytest.fail("ran without a JDK"))
    assert depot.command.main(["--version"]) == 1
    err = capsys.readouterr().err
    assert "no JDK 25" in err and "Temurin 25" in err and "JAVA_HOME" in err


def test_command_without_jars_should_never_run_the_depot_on_path(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(depot.daemon, "BUNDLED_JARS", str(tmp_path / "_jars"))
    monkeypatch.setattr(depot.daemon, "_checkouts", lambda: [])
    fake = tmp_path / "bin" / "depot"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(fake.parent))
    monkeypatch.setattr(os, "execv", lambda *a: pytest.fail("ran %r" % (a,)))
    assert depot.daemon.find_launcher() == [str(fake)]
    assert depot.command.main(["ls"]) == 1
    err = capsys.readouterr().err
    assert "no Depot jars found" in err and "DEPOT_HOME" in err and ".whl" in err
