"""The interpreters `depot bench dask` measures its baselines in (standard library only: it runs before any of
them is known to work).

- The *bench environment*: a virtual environment with ``dask_bench_requirements.txt`` (Dask, NumPy, pandas and
  Ray for dask-on-ray), built once per machine under ``$DEPOT_CACHE`` (else ``$XDG_CACHE_HOME/depot`` or
  ``~/.cache/depot``) as ``bench-venv-HASH``, HASH being that of the requirements and of the interpreter's
  version. It is built on the interpreter ``base_python`` chooses: the system's ``/usr/bin/python3`` when it is
  the same Python version as this one (``$DEPOT_BENCH_ENV_PYTHON`` chooses another). Only the full benchmark
  uses it; ``bin/test`` and ``--quick`` never build it. It is built in a temporary directory and renamed into
  place, so concurrent runs never see half an environment.
- An interpreter with ``distributed`` for the LocalCluster baseline: ``$DEPOT_BENCH_DISTRIBUTED_PYTHON``, else
  this one, else ``/usr/bin/python3`` (Debian's ``python3-distributed``).
"""

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile

REQUIREMENTS = "dask_bench_requirements.txt"
ENV_OFF_NAME = "DEPOT_BENCH_DASK_ENV"  # "0": never build or use the bench environment
IN_ENV_NAME = "DEPOT_BENCH_DASK_IN_ENV"  # set on the re-executed driver
DISTRIBUTED_PYTHON_NAME = "DEPOT_BENCH_DISTRIBUTED_PYTHON"
DISTRIBUTED_FALLBACK = "/usr/bin/python3"
BASE_PYTHON_NAME = "DEPOT_BENCH_ENV_PYTHON"  # the interpreter to build the bench environment on
SYSTEM_PYTHON = "/usr/bin/python3"
PROBE_TIMEOUT = 120


def cache_dir():
    base = os.environ.get("DEPOT_CACHE")
    if not base:
        base = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "depot")
    return base


def requirements_path():
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), REQUIREMENTS)


def env_dir(python=sys.executable):
    with open(requirements_path(), "rb") as f:
        req = f.read()
    version = subprocess.run([python, "-c", "import sys; print(sys.version)"], capture_output=True,
                             timeout=PROBE_TIMEOUT, check=True).stdout
    return os.path.join(cache_dir(), "bench-venv-" + hashlib.sha256(req + version).hexdigest()[:16])


def _venv_version(python):
    """``"major.minor"`` of ``python`` if it can make a virtual environment with pip in it, else None."""
    code = "import ensurepip, sys, venv; print('%d.%d' % sys.version_info[:2])"
    try:
        done = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=PROBE_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def base_python(driver=sys.executable):
    """The interpreter the bench environment is built on: ``$DEPOT_BENCH_ENV_PYTHON``; else the system's
    ``/usr/bin/python3`` when it is the same Python version as ``driver`` (major.minor: the same wheels install)
    and can make a virtual environment; else ``driver``.

    Why the system's: the benchmark measures schedulers on Python code, and interpreter builds differ. Debian's
    CPython, like python.org's and conda's, is compiled with profile-guided optimisation and LTO; pyenv's (the
    ``python3`` on this machine's PATH) is not unless asked. The GIL tasks are calibrated in CPU time and take as
    long under either, but what runs around them (Dask's scheduling, pickling, depot.dask's and Ray's messages)
    does not: pickle round trips took 1.4-1.8x as long under pyenv's build here.
    LocalCluster's part runs on the system's interpreter too, so case (a) then runs on one interpreter build."""
    chosen = os.environ.get(BASE_PYTHON_NAME)
    if chosen:
        return chosen
    if os.access(SYSTEM_PYTHON, os.X_OK):
        system = _venv_version(SYSTEM_PYTHON)
        if system is not None and system == "%d.%d" % _version_info(driver):
            return SYSTEM_PYTHON
    return driver


def _version_info(python):
    if python == sys.executable:
        return sys.version_info[:2]
    done = subprocess.run([python, "-c", "import sys; print(*sys.version_info[:2])"], capture_output=True,
                          text=True, timeout=PROBE_TIMEOUT, check=True)
    return tuple(int(x) for x in done.stdout.split())


def requirements():
    with open(requirements_path()) as f:
        return [line.strip() for line in f if line.strip() and not line.startswith("#")]


def install_command(python=None):
    """What builds the bench environment by hand (what ``ensure_env`` runs) on ``python`` (``base_python()``)."""
    python = python or base_python()
    venv = env_dir(python)
    return "%s -m venv %s && %s/bin/python -m pip install --retries 0 %s && touch %s/.complete" % (
        python, venv, venv, " ".join("'%s'" % r for r in requirements()), venv)


def has_modules(python, modules):
    """Whether ``python`` imports every one of ``modules`` (and the versions it has, as text)."""
    code = ("import importlib, sys\nout = []\nfor m in sys.argv[1:]:\n    mod = importlib.import_module(m)\n"
            "    out.append('%s %s' % (m, getattr(mod, '__version__', '?')))\nprint(', '.join(out))")
    try:
        done = subprocess.run([python, "-c", code, *modules], capture_output=True, text=True, timeout=PROBE_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def rename_scripts(tmp, final):
    """The scripts venv and pip wrote into ``tmp/bin`` (pip, activate, ...) name ``tmp``, where they were made, in
    their ``#!`` lines and variables: made to name ``final``, where the environment is renamed to."""
    old, new = os.fsencode(tmp), os.fsencode(final)
    bin_dir = os.path.join(tmp, "bin")
    for name in os.listdir(bin_dir):
        path = os.path.join(bin_dir, name)
        if os.path.islink(path) or not os.path.isfile(path):
            continue
        with open(path, "rb") as f:
            data = f.read()
        if old in data and b"\0" not in data:  # text scripts only, not interpreters
            with open(path, "wb") as f:
                f.write(data.replace(old, new))


def ensure_env(log=sys.stderr):
    """The bench environment's interpreter, built first when missing; None (with a message saying how to build
    it) when it cannot be built."""
    if os.environ.get(ENV_OFF_NAME) == "0":
        return None
    base = base_python()
    venv = env_dir(base)
    python = os.path.join(venv, "bin", "python")
    if os.path.isfile(os.path.join(venv, ".complete")):
        return python
    os.makedirs(cache_dir(), exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=".bench-venv-", dir=cache_dir())
    print("dask bench: building the benchmark environment %s on %s (once per machine; a minute or two)..."
          % (venv, base), file=log, flush=True)
    logfile = tmp + ".log"
    try:
        with open(logfile, "w") as out:
            ok = subprocess.run([base, "-m", "venv", tmp], stdout=out, stderr=out).returncode == 0 and \
                subprocess.run([os.path.join(tmp, "bin", "python"), "-m", "pip", "install", "-q", "--retries", "0",
                                "-r", requirements_path()], stdout=out, stderr=out).returncode == 0
        if not ok:
            with open(logfile) as f:
                tail = f.read()[-2000:]
            print("dask bench: building the benchmark environment failed (baselines it would have are reported "
                  "as not installed):\n%s\nbuild it by hand with: %s" % (tail, install_command(base)), file=log)
            return None
        rename_scripts(tmp, venv)
        open(os.path.join(tmp, ".complete"), "w").close()
        try:
            os.rename(tmp, venv)  # fails onto a non-empty directory: another run finished first, use its copy
        except OSError:
            pass
        return python if os.path.isfile(os.path.join(venv, ".complete")) else None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        try:
            os.unlink(logfile)
        except OSError:
            pass


def distributed_python():
    """``(interpreter, versions)`` of an interpreter with dask, distributed, numpy and cloudpickle, or
    ``(None, install hint)``."""
    modules = ["dask", "distributed", "numpy", "cloudpickle"]
    candidates = [os.environ.get(DISTRIBUTED_PYTHON_NAME), sys.executable, DISTRIBUTED_FALLBACK]
    for python in candidates:
        if python and os.access(python, os.X_OK):
            versions = has_modules(python, modules)
            if versions:
                return python, versions
    return None, ("not installed: no interpreter with dask, distributed, numpy and cloudpickle (looked at $%s, %s, "
                  "%s); install it with `apt-get install python3-distributed python3-numpy python3-cloudpickle` or "
                  "`pip install distributed`" % (DISTRIBUTED_PYTHON_NAME, sys.executable, DISTRIBUTED_FALLBACK))
