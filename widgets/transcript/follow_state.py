"""When the transcript follows the end.

No Textual, no Rich. The view's ``following`` flag is a Textual ``var``; this
decides what a scroll does to it: a scroll the view makes itself (heights
corrected, the end pinned, the size grown) changes nothing; the user's scroll
to the last row starts following, and the user's scroll up stops it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["FollowState"]


class FollowState:
    """Tells the user's scrolls from the view's own, and what they do to following."""

    __slots__ = ("_own",)

    def __init__(self) -> None:
        self._own = 0

    @contextmanager
    def own_scroll(self) -> Iterator[None]:
        """The scrolls made inside are the view's own."""
        self._own += 1
        try:
            yield
        finally:
            self._own -= 1

    def after_scroll(self, following: bool, old: float, new: float, end: int) -> bool:
        """Whether to follow after a scroll from row ``old`` to ``new`` (``end``:
        the last row the view can scroll to)."""
        if self._own:
            return following
        if round(new) >= end:
            return True
        if new < old:
            return False
        return following
