"""Every decoded line of one file, in order, held in memory or not.

A :class:`~reducer.feed.Feed` keeps the entries it decoded for the raw view,
the time of items and the pairing of frames. An :class:`EntryLog` holds them
as two runs: first the lines it does not hold (folded before a checkpoint
was taken, or never held: ``keep=False``), each as its line number, byte
offset and ``timestamp``, read and decoded again when asked for through
:attr:`EntryLog.reader`; then the entries it holds. Pure: the reader, which
reads the file, is given by the viewer.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Iterable, Iterator
from itertools import repeat
from typing import Protocol

import msgspec

from .frames import Blank, Entry, Malformed, Unknown

__all__ = ["EntryLog", "LineReader", "Table", "Tally"]


class LineReader(Protocol):
    """Reads lines of one file again by their place (the viewer's raw store)."""

    def entry(self, line_no: int, offset: int) -> Entry | None:
        """The line at ``offset`` decoded as line ``line_no`` (``None``: unreadable)."""

    def entries(self, places: Iterable[tuple[int, int]]) -> Iterator[Entry | None]:
        """The lines at ``places`` (in file order), decoded; read sequentially."""


class Tally(msgspec.Struct):
    """What the verdict on a file needs of lines no longer held."""

    blank: int = 0
    malformed: list[tuple[int, str]] = msgspec.field(default_factory=list)
    unknown: int = 0

    def count(self, entries: Iterable[Entry]) -> None:
        for entry in entries:
            kind = type(entry)
            if kind is Blank:
                self.blank += 1
            elif kind is Malformed:
                self.malformed.append((entry.line_no, entry.reason))  # type: ignore[attr-defined]
            elif kind is Unknown:
                self.unknown += 1

    def plus(self, other: Tally) -> Tally:
        return Tally(self.blank + other.blank, self.malformed + other.malformed,
                     self.unknown + other.unknown)


class Table(msgspec.Struct, frozen=True):
    """The lines an :class:`EntryLog` does not hold, as a checkpoint keeps them."""

    line_nos: bytes
    offsets: bytes
    stamps: list[str | None]
    tally: Tally


def _ints(data: bytes = b"") -> array:
    out = array("q")
    out.frombytes(data)
    return out


class EntryLog:
    """The decoded lines of one file (see the module docstring). Only grows."""

    __slots__ = ("keep", "held", "reader", "_line_nos", "_offsets", "_stamps", "_tally", "_cache")

    _CACHED = 256
    """Lines read back kept decoded (the raw view steps to neighbours)."""

    def __init__(self, keep: bool = True, table: Table | None = None) -> None:
        self.keep = keep
        """Whether new entries are held (else only their place is kept)."""
        self.held: list[Entry] = []
        """The entries held, after the lines not held."""
        self.reader: LineReader | None = None
        """Reads the lines not held again; ``None``: they cannot be shown."""
        self._line_nos = _ints(table.line_nos if table else b"")
        self._offsets = _ints(table.offsets if table else b"")
        self._stamps: list[str | None] = list(table.stamps) if table else []
        self._tally = table.tally if table else Tally()
        self._cache: dict[int, Entry] = {}

    @classmethod
    def of(cls, entries: list[Entry]) -> EntryLog:
        """A log holding ``entries``."""
        log = cls()
        log.held = entries
        return log

    # --- growing ------------------------------------------------------------------------

    def append(self, entry: Entry) -> None:
        if self.keep:
            self.held.append(entry)
        else:
            self.extend((entry,))

    def extend(self, entries: list[Entry] | tuple[Entry, ...]) -> None:
        if self.keep:
            self.held += entries
            return
        self._line_nos.extend([e.line_no for e in entries])
        self._offsets.extend([e.offset for e in entries])
        self._stamps += [getattr(e, "timestamp", None) for e in entries]
        self._tally.count(entries)

    # --- reading ------------------------------------------------------------------------

    @property
    def unheld(self) -> int:
        """How many lines come first, not held."""
        return len(self._line_nos)

    def __len__(self) -> int:
        return len(self._line_nos) + len(self.held)

    def __bool__(self) -> bool:
        return len(self) > 0

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, EntryLog):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other))

    __hash__ = None  # type: ignore[assignment]

    def __getitem__(self, index: int) -> Entry:
        n = len(self._line_nos)
        if index < 0:
            index += len(self)
        if index >= n:
            return self.held[index - n]
        if not 0 <= index:
            raise IndexError(index)
        cached = self._cache.get(index)
        if cached is None:
            entry = self.reader.entry(self._line_nos[index], self._offsets[index]) \
                if self.reader is not None else None
            cached = entry if entry is not None else _gone(self._line_nos[index], self._offsets[index])
            if len(self._cache) >= self._CACHED:
                self._cache.pop(next(iter(self._cache)))
            self._cache[index] = cached
        return cached

    def __iter__(self) -> Iterator[Entry]:
        return self.scan(0)

    def scan(self, start: int) -> Iterator[Entry]:
        """The entries from index ``start`` on, the ones not held read in one pass."""
        n = len(self._line_nos)
        if start < n:
            lines, offsets = self._line_nos[start:], self._offsets[start:]
            read = self.reader.entries(zip(lines, offsets)) if self.reader is not None \
                else repeat(None)
            for line, offset, entry in zip(lines, offsets, read):
                yield entry if entry is not None else _gone(line, offset)
        yield from self.held[max(0, start - n):]

    def line_no(self, index: int) -> int:
        n = len(self._line_nos)
        return self._line_nos[index] if index < n else self.held[index - n].line_no

    def timestamp(self, index: int) -> str | None:
        """The ``timestamp`` of the line at ``index`` (``None`` when it has none)."""
        n = len(self._stamps)
        return self._stamps[index] if index < n else getattr(self.held[index - n], "timestamp", None)

    def find(self, line_no: int) -> Entry | None:
        """The entry of line ``line_no`` (``None``: no such line, or it cannot be read again)."""
        n, size = len(self._line_nos), len(self)
        at = line_no - 1
        if not (0 <= at < size and self.line_no(at) == line_no):
            if n and line_no <= self._line_nos[-1]:
                at = bisect_left(self._line_nos, line_no)
            else:
                at = n + bisect_left(self.held, line_no, key=_line_no)
            if not (at < size and self.line_no(at) == line_no):
                return None
        entry = self[at]
        return None if type(entry) is Malformed and entry.reason is _GONE else entry

    def tally(self) -> Tally:
        """Blank, malformed and unknown lines, of all of them."""
        held = Tally()
        held.count(self.held)
        return self._tally.plus(held)

    def table(self) -> Table:
        """Every line as a checkpoint keeps it (none held)."""
        held = self.held
        lines = array("q", self._line_nos)
        lines.extend([e.line_no for e in held])
        offsets = array("q", self._offsets)
        offsets.extend([e.offset for e in held])
        return Table(lines.tobytes(), offsets.tobytes(),
                     self._stamps + [getattr(e, "timestamp", None) for e in held], self.tally())


def _line_no(entry: Entry) -> int:
    return entry.line_no


_GONE = "this line was read in an earlier run and cannot be read again"


def _gone(line_no: int, offset: int) -> Malformed:
    """Stands for a line that was folded but cannot be read again."""
    return Malformed(line_no=line_no, offset=offset, reason=_GONE)
