"""Where the transcript's cursor goes: the next item shown that is a turn, an
error, a tool call; the nearest item shown; the first item at a time.

No Textual, no Rich: functions of the items and of what the view shows
(``accepts``), so the view's keys and the tests ask the same questions.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from cctv.reducer.state import Item, ToolItem
from cctv.reducer.queries import is_error_item, is_turn_start

__all__ = ["Accepts", "Stop", "next_index", "nearest_shown", "starts_turn", "is_error",
           "is_call", "first_at_or_after"]

Accepts = Callable[[Item], bool]
"""What the view shows."""
Stop = Callable[[Sequence[Item], int, Accepts], bool]
"""Whether a jump stops at item ``i`` of the items (among those shown)."""


def next_index(items: Sequence[Item], start: int, direction: int, accepts: Accepts,
               stop: Stop | None = None) -> int | None:
    """The first item shown after ``start`` in ``direction`` (1 or -1) where
    ``stop`` says to stop (any, without one); None when there is none."""
    i = start + direction
    while 0 <= i < len(items):
        if accepts(items[i]) and (stop is None or stop(items, i, accepts)):
            return i
        i += direction
    return None


def nearest_shown(items: Sequence[Item], index: int, accepts: Accepts) -> int | None:
    """``index`` if the item there is shown, else the next one shown, else the
    previous one; None when nothing is shown."""
    for i in range(index, len(items)):
        if accepts(items[i]):
            return i
    for i in range(index - 1, -1, -1):
        if accepts(items[i]):
            return i
    return None


def starts_turn(items: Sequence[Item], i: int, accepts: Accepts) -> bool:
    """Whether a turn begins at item ``i`` as shown (after the previous item shown)."""
    previous = next((items[j] for j in range(i - 1, -1, -1) if accepts(items[j])), None)
    return is_turn_start(items[i], previous)


def is_error(items: Sequence[Item], i: int, accepts: Accepts) -> bool:
    """Whether item ``i`` is an error (:func:`reducer.queries.is_error_item`)."""
    return is_error_item(items[i])


def is_call(items: Sequence[Item], i: int, accepts: Accepts) -> bool:
    """Whether item ``i`` is a tool call."""
    return isinstance(items[i], ToolItem)


def first_at_or_after(items: Sequence[Item], when: float,
                      time_of: Callable[[Item], float | None]) -> int:
    """The index of the first item whose time is ``when`` or later (``len(items)``
    when none is), by bisection: times only grow along a transcript, and items
    with no time are passed over."""
    lo, hi = 0, len(items)
    while lo < hi:
        mid = (lo + hi) // 2
        probe = mid
        t = time_of(items[probe])
        while t is None and probe + 1 < hi:  # rows with no time: look further on
            probe += 1
            t = time_of(items[probe])
        if t is None or t >= when:
            hi = mid
        else:
            lo = probe + 1
    return lo
