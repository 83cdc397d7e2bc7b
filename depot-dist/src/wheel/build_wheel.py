"""Builds the self-contained wheel of the Python client: the package ``depot`` from ``python/``, with the
daemon's jars (depot-cli and its runtime dependencies) inside it at ``depot/_jars/``, as pyspark carries Spark's.

    python3 build_wheel.py --python PYTHON_DIR --jars JARS_DIR --out OUT_DIR

The metadata (name, version, extras, entry points, console scripts) is read from ``python/pyproject.toml``.
The C extension ``depot._native`` (``python/setup.py``) is compiled for the Python running this script when it
can be (setuptools and a C compiler): the wheel is then ``NAME-VERSION-cpXY-cpXY-PLATFORM.whl``, for that Python
version and platform; else, or with ``--pure``, ``NAME-VERSION-py3-none-any.whl``, whose client runs on ctypes
(PEP 427). Offline and reproducible: entries in sorted order, each dated ``$SOURCE_DATE_EPOCH`` (default
1980-01-01), files 0644, the extension compiled without debug information, so the same inputs give the same
bytes. Needs Python 3.11 or newer (``tomllib``).
"""

import argparse
import base64
import hashlib
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
import zipfile

try:
    import tomllib
except ImportError:  # pragma: no cover - Python < 3.11
    sys.exit("build_wheel.py needs Python 3.11 or newer (tomllib); run it with a newer python3")

#: where the jars go inside the package; python/depot/daemon.py looks there first
JARS_DIR = "_jars"
DEFAULT_EPOCH = 315532800  # 1980-01-01, the earliest date a zip entry can carry
# caches, hidden files, C sources and any extension built in place in the checkout
SKIP = re.compile(r"(^|/)(__pycache__|\.[^/]*)(/|$)|\.(py[co]|c|so)$")
#: the extension module, as python/setup.py names it
NATIVE = "depot._native"


def _normalized(name):
    """The distribution name as a wheel file name spells it (PEP 427, PEP 503)."""
    return re.sub(r"[-_.]+", "_", name).lower()


def _metadata(project, readme):
    lines = ["Metadata-Version: 2.1", "Name: " + project["name"], "Version: " + project["version"]]
    if project.get("description"):
        lines.append("Summary: " + project["description"])
    if project.get("requires-python"):
        lines.append("Requires-Python: " + project["requires-python"])
    lines += ["Requires-Dist: " + d for d in project.get("dependencies", [])]
    for extra, deps in sorted(project.get("optional-dependencies", {}).items()):
        lines.append("Provides-Extra: " + extra)
        lines += ['Requires-Dist: %s ; extra == "%s"' % (d, extra) for d in deps]
    if readme is not None:
        lines.append("Description-Content-Type: text/markdown")
        return "\n".join(lines) + "\n\n" + readme
    return "\n".join(lines) + "\n"


def _entry_points(project):
    groups = {}
    if project.get("scripts"):
        groups["console_scripts"] = project["scripts"]
    groups.update(project.get("entry-points", {}))
    out = []
    for group in sorted(groups):
        out.append("[%s]" % group)
        out += ["%s = %s" % (k, v) for k, v in sorted(groups[group].items())]
        out.append("")
    return "\n".join(out)


def _package_files(python_dir, module):
    root = os.path.join(python_dir, module)
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(folder, name)
            arc = os.path.relpath(path, python_dir).replace(os.sep, "/")
            if not SKIP.search(arc):
                yield arc, path


def _compile_native(python_dir, build_dir):
    """``(archive name, path)`` of the extension compiled by ``python/setup.py build_ext`` into ``build_dir``, or
    None when it could not be (no setuptools, no compiler: the setup marks it optional)."""
    lib = os.path.join(build_dir, "lib")
    result = subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--build-lib", lib,
                             "--build-temp", os.path.join(build_dir, "temp")],
                            cwd=python_dir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    arc = NATIVE.replace(".", "/") + suffix
    path = os.path.join(lib, arc)
    if result.returncode != 0 or not os.path.isfile(path):
        print("build_wheel.py: the C extension %s was not built, the wheel is pure (ctypes):\n%s"
              % (NATIVE, result.stdout.strip()), file=sys.stderr)
        return None
    return arc, path


def _tag(native):
    """The wheel's tag: this Python and platform with the extension, any Python 3 without."""
    if native is None:
        return "py3-none-any"
    python = "cp%d%d" % sys.version_info[:2]
    return "%s-%s-%s" % (python, python, re.sub(r"[-.]", "_", sysconfig.get_platform()))


def build(python_dir, jars_dir, out_dir, pure=False):
    """Writes the wheel into ``out_dir`` and returns its path; with ``pure``, without the C extension."""
    with tempfile.TemporaryDirectory(prefix="depot-wheel-") as build_dir:
        native = None if pure else _compile_native(python_dir, build_dir)
        return _build(python_dir, jars_dir, out_dir, native)


def _build(python_dir, jars_dir, out_dir, native):
    with open(os.path.join(python_dir, "pyproject.toml"), "rb") as f:
        pyproject = tomllib.load(f)
    project = pyproject["project"]
    module = pyproject["tool"]["setuptools"]["packages"]["find"]["include"][0]
    jars = sorted(j for j in os.listdir(jars_dir) if j.endswith(".jar"))
    if not any(j.startswith("depot-cli-") for j in jars):
        raise SystemExit("no depot-cli-*.jar in %s (found %d jars): build depot-cli first" % (jars_dir, len(jars)))
    if os.path.isdir(os.path.join(python_dir, module, JARS_DIR)):
        raise SystemExit("%s already has a %s/ folder; remove it: the jars come from %s"
                         % (os.path.join(python_dir, module), JARS_DIR, jars_dir))
    readme = None
    if isinstance(project.get("readme"), str):
        with open(os.path.join(python_dir, project["readme"]), encoding="utf-8") as f:
            readme = f.read()

    name = _normalized(project["name"])
    info = "%s-%s.dist-info" % (name, project["version"])
    entries = list(_package_files(python_dir, module))
    entries += [("%s/%s/%s" % (module, JARS_DIR, j), os.path.join(jars_dir, j)) for j in jars]
    if native is not None:
        entries.append(native)
    entries.sort()
    tag = _tag(native)
    generated = [
        (info + "/METADATA", _metadata(project, readme).encode("utf-8")),
        (info + "/WHEEL", ("Wheel-Version: 1.0\nGenerator: depot build_wheel.py\nRoot-Is-Purelib: %s\nTag: %s\n"
                           % ("true" if native is None else "false", tag)).encode("ascii")),
        (info + "/entry_points.txt", _entry_points(project).encode("utf-8")),
    ]
    epoch = int(os.environ.get("SOURCE_DATE_EPOCH", DEFAULT_EPOCH))
    stamp = time.gmtime(max(epoch, DEFAULT_EPOCH))[:6]
    os.makedirs(out_dir, exist_ok=True)
    wheel = os.path.join(out_dir, "%s-%s-%s.whl" % (name, project["version"], tag))
    record = []
    tmp = wheel + ".tmp"
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
        def add(arc, data):
            entry = zipfile.ZipInfo(arc, stamp)
            entry.external_attr = 0o644 << 16
            entry.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(entry, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            record.append("%s,sha256=%s,%d" % (arc, digest, len(data)))

        for arc, path in entries:
            with open(path, "rb") as f:
                add(arc, f.read())
        for arc, data in generated:
            add(arc, data)
        record.append(info + "/RECORD,,")
        entry = zipfile.ZipInfo(info + "/RECORD", stamp)
        entry.external_attr = 0o644 << 16
        z.writestr(entry, ("\n".join(record) + "\n").encode("utf-8"), zipfile.ZIP_DEFLATED)
    os.replace(tmp, wheel)
    # one wheel of this version in out_dir: an earlier build's with the other tag would be installed instead
    for other in os.listdir(out_dir):
        if other.startswith("%s-%s-" % (name, project["version"])) and other.endswith(".whl") \
                and other != os.path.basename(wheel):
            os.remove(os.path.join(out_dir, other))
    return wheel


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--python", required=True, help="the folder holding pyproject.toml and the package")
    p.add_argument("--jars", required=True, help="a folder of the daemon's jars (depot-cli and its dependencies)")
    p.add_argument("--out", required=True, help="where to write the wheel")
    p.add_argument("--pure", action="store_true", help="without the C extension: a py3-none-any wheel")
    args = p.parse_args(argv)
    print(build(args.python, args.jars, args.out, args.pure))


if __name__ == "__main__":
    main()
