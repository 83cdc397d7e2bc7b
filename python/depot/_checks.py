"""Checks of the values callers pass, each failure naming the value and the limit (never a raw struct.error,
OverflowError or a segfault further down)."""

import math
import numbers
import time

from .errors import ArgumentTypeError, BadRequestError

#: Largest size or byte count: the protocol carries signed 64-bit numbers.
MAX_SIZE = (1 << 63) - 1
#: Timeouts of this many seconds or more (and ``inf``, and ``None``) mean "wait forever".
FOREVER_SECONDS = float(1 << 31)


def check_size(value, what="size", limit=MAX_SIZE):
    """``value`` as an int in ``[0, limit]``; bool is not a size."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ArgumentTypeError("%s must be an int, got %s %r" % (what, type(value).__name__, value))
    value = int(value)
    if value < 0:
        raise BadRequestError("%s must be >= 0, got %d" % (what, value))
    if value > limit:
        raise BadRequestError("%s %d exceeds the limit of %d" % (what, value, limit))
    return value


def deadline_of(timeout):
    """A ``time.monotonic_ns()`` deadline for ``timeout`` seconds: None waits forever (``None``, ``inf`` or
    at least ``FOREVER_SECONDS``), 0 does not wait."""
    if timeout is None:
        return None
    kind = type(timeout)
    if (kind is int or kind is float) and timeout == 0:
        return 0  # the common "do not wait", without the checks below
    if isinstance(timeout, bool) or not isinstance(timeout, numbers.Real):
        raise ArgumentTypeError("timeout must be None (wait forever) or seconds as a number, got %s %r"
                                % (type(timeout).__name__, timeout))
    timeout = float(timeout)
    if math.isnan(timeout) or timeout < 0:
        raise BadRequestError("timeout must be None (wait forever), 0 (no wait) or positive seconds, got %r"
                              % (timeout,))
    if timeout >= FOREVER_SECONDS:
        return None
    if timeout == 0:
        return 0
    return time.monotonic_ns() + max(1, int(timeout * 1e9))


def describe_timeout(timeout):
    if timeout == 0:
        return "at once"
    return "within %g ms" % (timeout * 1000) if timeout < 1 else "within %g s" % timeout


def timeout_millis(timeout):
    """``timeout`` seconds as the control protocol's milliseconds: -1 waits forever (``None``, ``inf`` or at
    least ``FOREVER_SECONDS``), 0 does not wait, else at least 1."""
    deadline = deadline_of(timeout)
    if deadline is None:
        return -1
    return 0 if deadline == 0 else max(1, math.ceil(float(timeout) * 1000))
