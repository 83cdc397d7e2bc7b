"""Where a store lives when no directory is given: ``$DEPOT_DIR``, else ``/dev/shm/depot-$USER``, as for the
Java client (``DepotDirectory``)."""

import getpass
import os

__all__ = ["DIR_ENV_NAME", "default_directory"]

#: the environment variable that names the default store directory
DIR_ENV_NAME = "DEPOT_DIR"


def default_directory():
    """``$DEPOT_DIR``, else ``/dev/shm/depot-$USER`` (as the Java client).

    Returns
    -------
    str
        The directory of the store that ``depot.connect()`` and ``depot.start()`` use when given none.
    """
    env = os.environ.get(DIR_ENV_NAME, "").strip()
    if env:
        return env
    return os.path.join("/dev/shm", "depot-" + getpass.getuser())
