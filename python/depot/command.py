"""The ``depot`` console command that installing the package adds: runs the Depot CLI (``depot serve``,
``put``, ``get``, ``ls``, ``stat``... see docs/CLI.md) from the daemon's jars bundled in the wheel, else from
``$DEPOT_HOME`` or the checkout the package was installed from, with a JDK 25 found as ``depot.start()`` finds
one (``$JAVA_HOME``, ``java`` on ``PATH``, ``/usr/lib/jvm``, ``/opt``)."""

import os
import sys

from .daemon import DaemonStartError, find_launcher

__all__ = ["main"]


def main(argv=None):
    """Replaces this process with the CLI given ``argv`` (default ``sys.argv[1:]``); returns 1, having said what
    to install, when there is no JDK 25 or no jars."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        # never the `depot` on PATH: that may be this very command
        command = find_launcher(use_path=False)
    except DaemonStartError as e:
        print("depot: %s" % e, file=sys.stderr)
        return 1
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(command[0], command + args)


if __name__ == "__main__":
    sys.exit(main())
