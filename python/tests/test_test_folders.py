"""conftest.py: a test folder named like a package that is not installed (``dask/`` without Dask) is not imported
in its place, so ``pytest.importorskip`` skips as it should."""

import importlib
import sys

import pytest

from conftest import FoldersAreNotPackages, folders_shadowing_missing_packages

MISSING = "depot_test_no_such_package"


def test_a_folder_named_like_a_missing_package_is_found_and_not_one_named_like_an_installed_one(tmp_path,
                                                                                                 monkeypatch):
    for name in (MISSING, "json", "_private", "not-a-name"):
        (tmp_path / name).mkdir()
    (tmp_path / "plain_file").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(sys.modules, MISSING, None)  # so that the import below is undone afterwards
    monkeypatch.delitem(sys.modules, MISSING)
    assert folders_shadowing_missing_packages(tmp_path) == [MISSING]
    assert importlib.import_module(MISSING).__spec__.submodule_search_locations is not None  # what the finder stops


def test_importing_such_a_name_fails_as_a_missing_package_does_and_importorskip_skips(tmp_path, monkeypatch):
    (tmp_path / MISSING).mkdir()
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(sys, "meta_path", [FoldersAreNotPackages([MISSING])] + sys.meta_path)
    with pytest.raises(ModuleNotFoundError, match="No module named '%s'" % MISSING):
        importlib.import_module(MISSING)
    with pytest.raises(pytest.skip.Exception, match="is a folder of tests"):
        pytest.importorskip(MISSING)
