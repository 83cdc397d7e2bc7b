"""The distribution's name (``depot-shm``) is the one that pyproject.toml, the daemon discovery and every
install hint in the package use."""

import os
import re

import pytest

import depot.daemon

PYTHON = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = os.path.join(PYTHON, "depot")


def test_pyproject_names_the_distribution_the_daemon_discovery_looks_up():
    tomllib = pytest.importorskip("tomllib")
    with open(os.path.join(PYTHON, "pyproject.toml"), "rb") as f:
        project = tomllib.load(f)
    assert project["project"]["name"] == depot.daemon.DISTRIBUTION_NAME == "depot-shm"
    assert project["tool"]["setuptools"]["packages"]["find"]["include"][0] == "depot"


def test_every_install_hint_in_the_package_names_the_distribution():
    hints = []
    for folder, _, files in os.walk(PACKAGE):
        for name in files:
            if name.endswith(".py"):
                with open(os.path.join(folder, name), encoding="utf-8") as f:
                    hints += [(name, m.group(1)) for m in re.finditer(r"pip install '([^'\[]+)\[", f.read())]
    assert len(hints) >= 5, hints
    assert [h for h in hints if h[1] != depot.daemon.DISTRIBUTION_NAME] == []
