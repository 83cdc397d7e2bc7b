# Sourced by bin/test: virtual environments with the Python suite's requirements (python/tests/requirements*.txt),
# kept outside the checkout and reused while the requirements are unchanged.
#
#   depot_python_env ROOT [REQUIREMENTS [PIP_ARGS...]]
#                           sets DEPOT_VENV_PYTHON to the interpreter of the environment for REQUIREMENTS (default
#                           python/tests/requirements.txt), building it first when there is none for this hash
#                           (once per machine; takes a minute or two); PIP_ARGS go to its `pip install`. On
#                           failure it says what could not be installed and returns 1
#   depot_wheels_dir ROOT   prints the folder of extra wheels to install from: $DEPOT_WHEELS, else shared/wheels
#                           beside the checkout (ROOT/../shared/wheels) when it exists; prints nothing if neither
#   depot_install_package ROOT PYTHON TARGET
#                           installs the checkout's package (python/) into TARGET, a directory to put on
#                           PYTHONPATH, so that each run tests its own checkout even with a shared environment
#
# The environment lives in ${DEPOT_CACHE:-$XDG_CACHE_HOME/depot or ~/.cache/depot}/venv-HASH. It is built in a
# temporary directory and renamed into place, so concurrent runs never see half an environment (the loser of
# a race throws its own copy away). The hash covers the requirements file and the interpreter's version, not
# PIP_ARGS. Interpreter: $DEPOT_PYTHON, else python3 on PATH.

depot_python_env() {
  local root=$1 req=${2:-$1/python/tests/requirements.txt} base python hash venv tmp
  shift $(( $# < 2 ? $# : 2 ))
  python=${DEPOT_PYTHON:-python3}
  base=${DEPOT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/depot}
  hash=$({ cat "$req"; "$python" -c 'import sys; print(sys.version)'; } | sha256sum | cut -c1-16)
  venv="$base/venv-$hash"
  if [ ! -f "$venv/.complete" ]; then
    mkdir -p "$base"
    tmp=$(mktemp -d "$base/.venv-$hash.XXXXXX")
    echo "depot: building the Python test environment $venv from ${req#"$root"/} (once per machine)..." >&2
    if ! { "$python" -m venv "$tmp" && "$tmp/bin/python" -m pip install -q --retries 0 "$@" -r "$req"; } \
        >"$tmp.log" 2>&1; then
      echo "depot: could not build the Python environment for ${req#"$root"/} (pip install ${*:+$* }-r $req);" \
        "its log is $tmp.log:" >&2
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

depot_wheels_dir() {
  local root=$1
  if [ -n "${DEPOT_WHEELS:-}" ]; then
    if [ -d "$DEPOT_WHEELS" ]; then
      echo "$DEPOT_WHEELS"
    else
      echo "depot: DEPOT_WHEELS=$DEPOT_WHEELS is not a folder; installing from the package index" >&2
    fi
    return
  fi
  local common dir
  # a linked worktree (git worktree add) lies elsewhere: then also beside its main checkout
  common=$(git -C "$root" rev-parse --path-format=absolute --git-common-dir 2>/dev/null || true)
  for dir in "$root/../shared/wheels" ${common:+"$(dirname "$common")/../shared/wheels"}; do
    if [ -d "$dir" ]; then
      (cd "$dir" && pwd)
      return
    fi
  done
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
