"""The space sequence: the futex word in the store header that creates waiting for room sleep on (Java's
``Store.create`` with a timeout, which the daemon runs for a Python create that found no room).

Every step that may make room bumps it: a free (under the allocator lock: a waiting create reads the word under
the lock, so a free after that read ends its wait) and, while a create that may evict waits
(``EVICTING_SPACE_WAITERS`` > 0), an unpin or a seal, which free nothing but make an object evictable. Sleepers
count themselves in ``SPACE_WAITERS`` before their last attempt; a bump is followed by a wake-up only when that
count is positive. The same steps as Java's ``Wakeups.spaceMayHaveFreed`` and ``spaceMayHaveFreedIfWaited``.
"""

from . import _atomics as atomics
from ._layout import StoreHeaderDescriptor as H


def bump_under_lock(base):
    """A free under the allocator lock: bumps the word now; ``wake_waiters`` after the release (woken under the
    lock, sleepers would only sleep again on it)."""
    atomics.get_and_add_int(base + H.SPACE_SEQUENCE_OFFSET, 1)


def wake_waiters(base):
    """Wakes the creates asleep on the space sequence, if any."""
    if atomics.get_int_volatile(base + H.SPACE_WAITERS_OFFSET) > 0:
        atomics.futex_wake_all(base + H.SPACE_SEQUENCE_OFFSET)


def object_became_evictable(base):
    """After an unpin or a seal: bumps the word and wakes the sleepers, only while a create that may evict waits
    (a create that may not would only take the lock, fail and sleep again)."""
    if atomics.get_int_volatile(base + H.EVICTING_SPACE_WAITERS_OFFSET) > 0:
        atomics.get_and_add_int(base + H.SPACE_SEQUENCE_OFFSET, 1)
        wake_waiters(base)
