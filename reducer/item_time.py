"""When each transcript item happened, for the time column, jump-to-time and export.

An item's time is the ``timestamp`` of the row it came from. A row without one
(most stream-json frames) takes the wall-clock time its line arrived while the
source was followed live (:class:`Arrivals`), else the timestamp of the nearest
row before it (or, for the first rows of a stream, just after it) within
:data:`LOOK_BACK` rows. Pure: no Textual, no I/O.
"""

from __future__ import annotations

import bisect
from datetime import datetime, tzinfo

from .entry_log import EntryLog
from .feed import Feed
from .state import Item
from .timestamps import parse_timestamp

__all__ = ["Arrivals", "ItemTimes", "format_clock", "parse_clock"]

LOOK_BACK = 64
"""Rows searched backwards for a timestamp when an item's own row has none."""


def format_clock(epoch: float, tz: tzinfo | None = None) -> str:
    """``HH:MM:SS`` in ``tz`` (local time by default)."""
    return datetime.fromtimestamp(epoch, tz).strftime("%H:%M:%S")


class Arrivals:
    """The wall-clock time batches of lines arrived at, as ``(first line, time)``
    pairs: O(batches) memory, O(log batches) per look-up."""

    __slots__ = ("_lines", "_times")

    def __init__(self) -> None:
        self._lines: list[int] = []
        self._times: list[float] = []

    def record(self, first_line: int, when: float) -> None:
        """Lines from ``first_line`` on arrived at ``when`` (lines only grow)."""
        if self._lines and first_line <= self._lines[-1]:
            return
        self._lines.append(first_line)
        self._times.append(when)

    def at(self, line_no: int) -> float | None:
        """When line ``line_no`` arrived (``None`` if before anything recorded)."""
        i = bisect.bisect_right(self._lines, line_no) - 1
        return self._times[i] if i >= 0 else None


class ItemTimes:
    """Times of the items of one feed (see the module docstring)."""

    def __init__(self, feed: Feed, arrivals: Arrivals | None = None) -> None:
        self.feed = feed
        self.arrivals = arrivals or Arrivals()

    def _entries(self, item: Item) -> EntryLog:
        if item.agent:
            kept = self.feed.agent_entries.get(item.agent)
            if kept is not None:
                return kept
        return self.feed.entries

    def of(self, item: Item) -> float | None:
        """Epoch seconds of ``item``, or ``None`` when nothing tells."""
        return self._at(self._entries(item), item.line_no)

    def at_line(self, line_no: int) -> float | None:
        """Epoch seconds of line ``line_no`` of the main source, or ``None``."""
        return self._at(self.feed.entries, line_no)

    def _at(self, entries: EntryLog, line_no: int) -> float | None:
        """The time of line ``line_no`` of ``entries`` (see the module docstring)."""
        if entries is self.feed.entries:
            arrived = self.arrivals.at(line_no)
            if arrived is not None and not _stamped(entries, line_no - 1):
                return arrived
        if 1 <= line_no <= len(entries):
            i = line_no - 1
            for j in range(i, max(i - LOOK_BACK, -1), -1):
                stamp = parse_timestamp(entries.timestamp(j))
                if stamp is not None:
                    return stamp
            # the first rows of a stream (init, early hooks) come just before the first stamp
            for j in range(i + 1, min(i + 1 + LOOK_BACK, len(entries))):
                stamp = parse_timestamp(entries.timestamp(j))
                if stamp is not None:
                    return stamp
        return None


def _stamped(entries: EntryLog, i: int) -> bool:
    return 0 <= i < len(entries) and entries.timestamp(i) is not None


def parse_clock(text: str, reference: float | None, tz: tzinfo | None = None) -> float | None:
    """What a user typed for "jump to time" as epoch seconds.

    ``HH:MM`` or ``HH:MM:SS`` is that time on the day of ``reference`` (the
    first item's time), in ``tz``; a full ISO date-time is taken as it is.
    ``None`` when it is neither."""
    text = text.strip()
    if not text:
        return None
    full = parse_timestamp(text) if "-" in text or "T" in text else None
    if full is not None:
        return full
    parts = text.split(":")
    if not 2 <= len(parts) <= 3 or not all(p.strip().isdigit() for p in parts):
        return None
    hour, minute = int(parts[0]), int(parts[1])
    second = int(parts[2]) if len(parts) == 3 else 0
    if hour > 23 or minute > 59 or second > 59:
        return None
    day = datetime.fromtimestamp(reference if reference is not None else 0, tz)
    return day.replace(hour=hour, minute=minute, second=second, microsecond=0).timestamp()
