"""bin/lib/python-env.sh: the environment built in a temporary directory and renamed into place has scripts that
run from their final place."""

import os
import subprocess

ENV_SH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bin", "lib", "python-env.sh")


def test_scripts_are_rewritten_to_name_the_final_directory(tmp_path):
    tmp, final = tmp_path / ".venv-abc.XYZ", tmp_path / "venv-abc"
    (tmp / "bin").mkdir(parents=True)
    (tmp / "bin" / "pytest").write_text("#!%s/bin/python\nimport pytest\n" % tmp)
    (tmp / "bin" / "activate").write_text("VIRTUAL_ENV=\"%s\"\nPATH=\"%s/bin:$PATH\"\n" % (tmp, tmp))
    interpreter = b"\x7fELF\0" + str(tmp).encode()
    (tmp / "bin" / "python3").write_bytes(interpreter)
    (tmp / "bin" / "python").symlink_to("python3")
    subprocess.run(["bash", "-c", 'source "$0"; depot_rename_scripts "$1" "$2"', ENV_SH, str(tmp), str(final)],
                   check=True)
    assert (tmp / "bin" / "pytest").read_text() == "#!%s/bin/python\nimport pytest\n" % final
    assert (tmp / "bin" / "activate").read_text() == "VIRTUAL_ENV=\"%s\"\nPATH=\"%s/bin:$PATH\"\n" % (final, final)
    assert (tmp / "bin" / "python3").read_bytes() == interpreter
    assert (tmp / "bin" / "python").is_symlink()


FAKE_PYTHON = """#!/bin/bash
# stands in for an interpreter: its version, `-m venv DIR` (a copy of itself) and `-m pip ...` (logged)
case "$1 $2" in
  "-c "*) echo "3.11.0 (stand-in)" ;;
  "-m venv") mkdir -p "$3/bin" && cp "$0" "$3/bin/python" ;;
  "-m pip") echo "${*:3}" >> "$FAKE_LOG"; exit "${FAKE_PIP_STATUS:-0}" ;;
esac
"""


def python_env(tmp_path, *args, **env):
    fake = tmp_path / "python"
    fake.write_text(FAKE_PYTHON)
    fake.chmod(0o755)
    environment = dict(os.environ, DEPOT_PYTHON=str(fake), DEPOT_CACHE=str(tmp_path / "cache"),
                       FAKE_LOG=str(tmp_path / "pip.log"), **env)
    return subprocess.run(["bash", "-c", 'source "$0"; depot_python_env "$@" && echo "$DEPOT_VENV_PYTHON"', ENV_SH]
                          + [str(a) for a in args], env=environment, capture_output=True, text=True)


def pip_calls(tmp_path):
    log = tmp_path / "pip.log"
    return log.read_text().splitlines() if log.exists() else []


def test_an_environment_is_built_once_per_requirements_file_with_the_pip_arguments_given(tmp_path):
    first, second = tmp_path / "requirements.txt", tmp_path / "requirements-other.txt"
    first.write_text("numpy\n")
    second.write_text("dask\n")
    built = python_env(tmp_path, tmp_path, first)
    assert built.returncode == 0, built.stderr
    again = python_env(tmp_path, tmp_path, first)
    other = python_env(tmp_path, tmp_path, second, "--find-links", "/wheels")
    assert again.stdout == built.stdout != other.stdout
    for result in (built, other):
        venv = os.path.dirname(os.path.dirname(result.stdout.strip()))
        assert os.path.isfile(os.path.join(venv, ".complete"))
    assert pip_calls(tmp_path) == ["install -q --retries 0 -r %s" % first,
                                   "install -q --retries 0 --find-links /wheels -r %s" % second]


def test_an_environment_that_cannot_be_built_is_named_and_left_nowhere(tmp_path):
    req = tmp_path / "requirements.txt"
    req.write_text("distributed==2026.7.1\n")
    result = python_env(tmp_path, tmp_path, req, FAKE_PIP_STATUS="1")
    assert result.returncode == 1
    assert "could not build the Python environment for requirements.txt" in result.stderr
    assert [p for p in os.listdir(tmp_path / "cache") if not p.endswith(".log")] == []


def wheels_dir(root, **env):
    environment = dict(os.environ, **env)
    if "DEPOT_WHEELS" not in env:
        environment.pop("DEPOT_WHEELS", None)
    return subprocess.run(["bash", "-c", 'source "$0"; depot_wheels_dir "$1"', ENV_SH, str(root)], env=environment,
                          capture_output=True, text=True, check=True)


def test_wheels_are_taken_from_depot_wheels_else_from_shared_wheels_beside_the_checkout(tmp_path):
    root, shared, own = tmp_path / "checkout", tmp_path / "shared" / "wheels", tmp_path / "own"
    root.mkdir()
    assert wheels_dir(root).stdout == ""
    shared.mkdir(parents=True)
    own.mkdir()
    assert wheels_dir(root).stdout == "%s\n" % shared
    assert wheels_dir(root, DEPOT_WHEELS=str(own)).stdout == "%s\n" % own
    missing = wheels_dir(root, DEPOT_WHEELS=str(tmp_path / "none"))
    assert missing.stdout == ""
    assert "DEPOT_WHEELS=%s is not a folder; installing from the package index" % (tmp_path / "none") in missing.stderr
