# Sourced by bin/test: Debian's packages for the suite's run under /usr/bin/python3 (and the dask-distributed
# benchmark's smoke run, which uses that interpreter and measures with psutil), installed with apt-get when they
# are missing.
#
#   depot_system_packages   installs the missing ones of DEPOT_APT_PACKAGES when this runs as root on a system
#                           with apt-get; otherwise, or when apt-get fails (no network), says which are missing and
#                           how to install them. Returns 0 either way: the tests that need a missing package skip
#                           and name it. Sets DEPOT_APT_MISSING to those still missing, space-separated.
#
# DEPOT_NO_INSTALL=1 installs nothing (it only reports what is missing).

DEPOT_APT_PACKAGES=(python3-distributed python3-dask python3-pytest python3-numpy python3-pandas python3-psutil)

depot_missing_apt_packages() { # prints those of the packages $@ that are not installed, one a line
  local p status
  for p in "$@"; do
    status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
    [ "$status" = "install ok installed" ] || echo "$p"
  done
}

depot_system_packages() {
  local missing=() reason log
  DEPOT_APT_MISSING=""
  if ! command -v dpkg-query >/dev/null 2>&1; then
    echo "depot: not a Debian system (no dpkg-query): not installing ${DEPOT_APT_PACKAGES[*]};" \
      "the tests under /usr/bin/python3 that need them skip" >&2
    DEPOT_APT_MISSING="${DEPOT_APT_PACKAGES[*]}"
    return 0
  fi
  mapfile -t missing < <(depot_missing_apt_packages "${DEPOT_APT_PACKAGES[@]}")
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "${DEPOT_NO_INSTALL:-}" = 1 ]; then
    reason="DEPOT_NO_INSTALL=1"
  elif [ "$(id -u)" -ne 0 ]; then
    reason="not running as root"
  elif ! command -v apt-get >/dev/null 2>&1; then
    reason="no apt-get"
  else
    echo "depot: installing Debian's ${missing[*]} (apt-get, as root)" >&2
    log=$(mktemp "${TMPDIR:-/tmp}/depot-apt.XXXXXX.log")
    if { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"; } \
        </dev/null >"$log" 2>&1; then
      rm -f "$log"
      return 0
    fi
    tail -n 20 "$log" >&2
    reason="apt-get failed; its log is $log"
    mapfile -t missing < <(depot_missing_apt_packages "${missing[@]}")
    [ ${#missing[@]} -eq 0 ] && return 0
  fi
  DEPOT_APT_MISSING="${missing[*]}"
  echo "depot: Debian's ${missing[*]} not installed ($reason): the tests under /usr/bin/python3 that need" \
    "them skip. To run them: apt-get install ${missing[*]} (as root)" >&2
}
