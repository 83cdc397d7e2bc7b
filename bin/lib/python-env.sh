# Sourced by bin/test and the Python benchmarks: a virtual environment with the Python suite's requirements
# (python/tests/requirements.txt), kept outside the checkout and reused while the requirements are unchanged.
#
#   depot_python_env ROOT   sets DEPOT_VENV_PYTHON to the environment's interpreter, building it first when
#                           there is none for this hash (once per machine; takes a minute or two)
#   depot_install_package ROOT PYTHON TARGET
#                           installs the checkout's package (python/) into TARGET, a directory to put on
#                           PYTHONPATH, so that each run tests its own checkout even with a shared environment
#
# The environment lives in ${DEPOT_CACHE:-$XDG_CACHE_HOME/depot or ~/.cache/depot}/venv-HASH. It is built in a
# temporary directory and renamed into place, so concurrent runs never see half an environment (the loser of
# a race throws its own copy away). Interpreter: $DEPOT_PYTHON, else python3 on PATH.

depot_python_env() {
  local root=$1 req="$1/python/tests/requirements.txt" base python hash venv tmp
  python=${DEPOT_PYTHON:-python3}
  base=${DEPOT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/depot}
  hash=$({ cat "$req"; "$python" -c 'import sys; print(sys.version)'; } | sha256sum | cut -c1-16)
  venv="$base/venv-$hash"
  if [ ! -f "$venv/.complete" ]; then
    mkdir -p "$base"
    tmp=$(mktemp -d "$base/.venv-$hash.XXXXXX")
    echo "depot: building the Python test environment $venv (once per machine)..." >&2
    if ! { "$python" -m venv "$tmp" && "$tmp/bin/python" -m pip install -q --retries 0 -r "$req"; } >"$tmp.log" 2>&1; then
      echo "depot: building the Python environment failed; see $tmp.log" >&2
      tail -n 20 "$tmp.log" >&2
      rm -rf "$tmp"
      return 1
    fi
    depot_rename_scripts "$tmp" "$venv"
    touch "$tmp/.complete"
    # rename(2) onto an existing non-empty directory fails: then another run finished first; use its copy
    mv -T "$tmp" "$venv" 2>/dev/null || rm -rf "$tmp"
    rm -f "$tmp.log"
  fi
  # bin/python of a venv finds its site-packages relative to itself, so the renamed environment works
  DEPOT_VENV_PYTHON="$venv/bin/python"
}

# The scripts venv and pip wrote into TMP/bin (pip, pytest, activate, ...) name TMP, where they were made, in
# their #! lines and variables: made to name FINAL, where the environment is renamed to, so that they run there.
depot_rename_scripts() {
  local tmp=$1 final=$2 f
  grep -lIF -- "$tmp" "$tmp"/bin/* 2>/dev/null | while IFS= read -r f; do
    [ -L "$f" ] || sed -i "s|$tmp|$final|g" "$f"
  done
}

depot_install_package() {
  local root=$1 python=$2 target=$3
  rm -rf "$target"
  if ! "$python" -m pip install -q --retries 0 --no-deps --no-build-isolation --no-compile --target "$target" \
      "$root/python" >"$target.log" 2>&1; then
    echo "depot: installing the package from $root/python failed:" >&2
    grep -v '^WARNING: Location' "$target.log" >&2
    return 1
  fi
  rm -f "$target.log"
}
