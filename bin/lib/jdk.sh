# Sourced by Depot's scripts: finds a JDK >= 25 and exports JAVA_HOME, or explains what to install.
# Order: $JAVA_HOME, `java` on PATH, then every JDK under /usr/lib/jvm and /opt (newest first).

depot_java_major() { # prints the major version of the java binary $1, or nothing
  "$1" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java\.specification\.version = \([0-9][0-9]*\).*/\1/p' | head -n 1
}

depot_find_jdk() {
  local candidates=() c major
  [ -n "${JAVA_HOME:-}" ] && candidates+=("$JAVA_HOME")
  if command -v java >/dev/null 2>&1; then
    c=$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")
    candidates+=("$c")
  fi
  for c in $(ls -d /usr/lib/jvm/* /opt/*jdk* /opt/java/* 2>/dev/null | sort -rV); do candidates+=("$c"); done
  for c in "${candidates[@]}"; do
    [ -x "$c/bin/java" ] && [ -x "$c/bin/javac" ] || continue
    major=$(depot_java_major "$c/bin/java")
    if [ -n "$major" ] && [ "$major" -ge 25 ]; then
      export JAVA_HOME="$c"
      return 0
    fi
  done
  cat >&2 <<MSG
depot: no JDK 25 or newer found (looked at \$JAVA_HOME, java on PATH, /usr/lib/jvm, /opt).
  Install one, e.g. Temurin 25:  apt-get install temurin-25-jdk   (Adoptium's apt repository)
  or download it from https://adoptium.net and set JAVA_HOME to its folder.
MSG
  return 1
}
