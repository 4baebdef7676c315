"""Splitting a byte stream into numbered JSON lines.

Every source (a file read from the start, a file followed live, a pipe, a
subprocess) feeds bytes to a :class:`LineSplitter`, which hands back complete
lines with their 1-based line number and byte offset, and holds a trailing
fragment until its newline arrives.
"""

from __future__ import annotations

from functools import partial
from itertools import accumulate, count
from typing import NamedTuple

__all__ = ["RawLine", "LineSplitter"]


class RawLine(NamedTuple):
    """One complete line of input, without its line terminator."""

    line_no: int
    """1-based line number in the source."""
    offset: int
    """Byte offset of the line's first byte in the source."""
    data: bytes
    """The line's bytes, without the trailing ``\\n`` (and ``\\r``)."""


_raw_line = partial(tuple.__new__, RawLine)
"""``RawLine(*fields)`` without the Python-level ``NamedTuple.__new__`` call (a
tenth of the cost: it matters for short lines, e.g. ``cctv run -- yes``)."""


class LineSplitter:
    """Cuts chunks of bytes into :class:`RawLine` values, holding partial lines.

    >>> s = LineSplitter()
    >>> s.feed(b'{"a":1}\\n{"b"')
    [RawLine(line_no=1, offset=0, data=b'{"a":1}')]
    >>> s.feed(b':2}\\n')
    [RawLine(line_no=2, offset=8, data=b'{"b":2}')]
    """

    __slots__ = ("_partial", "_partial_offset", "line_no", "offset", "lend")

    def __init__(self, *, line_no: int = 0, offset: int = 0, lend: int = 0) -> None:
        self.lend = lend
        """When set, a line of at least this many bytes that was gathered over
        several chunks is handed over in its ``bytearray``, not copied to ``bytes``
        (a reader of giant lines that converts them itself: no second copy)."""
        self._partial = bytearray()
        self._partial_offset = offset
        self.line_no = line_no
        """Number of complete lines emitted so far."""
        self.offset = offset
        """Bytes consumed so far (complete lines and the held fragment)."""

    @property
    def pending(self) -> bytes:
        """The trailing fragment still waiting for its newline."""
        return bytes(self._partial)

    @property
    def pending_size(self) -> int:
        """Length of the trailing fragment (without copying it)."""
        return len(self._partial)

    def feed(self, chunk: bytes) -> list[RawLine]:
        """Add ``chunk`` and return the lines it completed."""
        if not chunk:
            return []
        base = self.offset
        self.offset += len(chunk)
        # one C-level split of the whole chunk (no copy of it first): the
        # last part is what follows the last newline, the first one ends the
        # held fragment
        parts = chunk.split(b"\n")
        tail = parts.pop()
        if not parts:
            if not self._partial:
                self._partial_offset = base
            self._partial += chunk
            return []
        out: list[RawLine] = []
        line_no = self.line_no
        start = base
        if self._partial:
            head = parts[0]
            self._partial += head
            line_no += 1
            out.append(_raw_line((line_no, self._partial_offset, self._take_partial())))
            del parts[0]
            start += len(head) + 1
        if parts:
            # offsets and numbers by C-level loops
            offsets = accumulate([len(part) + 1 for part in parts], initial=start)
            if b"\r" in chunk:
                parts = [part[:-1] if part.endswith(b"\r") else part for part in parts]
            out += map(_raw_line, zip(count(line_no + 1), offsets, parts))
            line_no += len(parts)
        self.line_no = line_no
        if tail:
            self._partial_offset = base + len(chunk) - len(tail)
            self._partial += tail
        return out

    def flush(self) -> RawLine | None:
        """Emit the held fragment as a final line (end of a stream), if any."""
        if not self._partial:
            return None
        self.line_no += 1
        return _raw_line((self.line_no, self._partial_offset, self._take_partial()))

    def _take_partial(self) -> bytes:
        """The held fragment as a line's data (without a ``\\r``); the fragment is emptied."""
        partial = self._partial
        if self.lend and len(partial) >= self.lend:
            self._partial = bytearray()
            if partial.endswith(b"\r"):
                del partial[-1:]
            return partial  # type: ignore[return-value]  # lent, see ``lend``
        data = bytes(partial)
        partial.clear()
        return _strip_cr(data)


def _strip_cr(data: bytes) -> bytes:
    return data[:-1] if data.endswith(b"\r") else data
