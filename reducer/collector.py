"""The cyclic garbage collector around bulk work: one way to pause it and one
way to hand it what a bulk step made.

The fold, a replay's restore and a bulk decode each make up to ~a million
objects that all stay alive. Every collection those allocations trigger walks
them again, and a full one walks the whole heap (a visible pause).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["collector_paused", "promote_to_oldest"]


@contextmanager
def collector_paused() -> Iterator[bool]:
    """Keep the cyclic collector off for a bulk step; yields whether it paused
    it. Its previous state is restored, so a caller who disabled it keeps it
    disabled."""
    if not gc.isenabled():
        yield False
        return
    gc.disable()
    try:
        yield True
    finally:
        gc.enable()


def promote_to_oldest() -> None:
    """Move every object the collector tracks into its oldest generation,
    unexamined: after a bulk step the young generations hold its new objects,
    nearly all of them kept, and the young collections that would follow only
    walk them once or twice to promote them. ``gc.freeze()`` then
    ``gc.unfreeze()`` does that in O(1); full collections still examine (and
    reclaim) them as usual, nothing stays frozen. Skipped when someone else has
    frozen objects, so their freeze is not undone."""
    if gc.get_freeze_count() == 0:
        gc.freeze()
        gc.unfreeze()
