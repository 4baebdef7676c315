"""Where the bytes of a line come from when the raw view asks for them.

A Feed reading a regular file does not keep every line's bytes in memory
(``Feed(keep_raw=False)``: for a big session that is as much memory again as
the file); :class:`RawStore` reads a line back from its byte offset when it is
asked for. It first checks that the file is still the one that was read (same
device and inode, not shorter than it was) and that the bytes found there
decode to the very entry that was folded; if not, it says why instead of
showing the wrong bytes. Lines from a pipe or a command keep their bytes
(``Feed(keep_raw=True)``) and are returned as they are. No Textual here.

Of a giant line (over :data:`GIANT_RAW`) only the start is read, as a
:class:`LineHead` that reads the whole line when it is asked to (copy, pager):
holding it, and decoding it again to check it, took its size three times over.
It is checked by the file's identity and size only.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import msgspec

from cctv.reducer.decode import decode_line
from cctv.reducer.frames import Entry

__all__ = ["RawStore", "RawUnavailable", "rereadable", "LineHead", "GIANT_RAW", "whole_line"]

_CHUNK = 1 << 20

GIANT_RAW = 1 << 20
"""A line longer than this is read back as a :class:`LineHead`."""
HEAD_BYTES = 64 * 1024
"""How much of a giant line a :class:`LineHead` holds."""


class LineHead(bytes):
    """The first bytes of a giant line; ``size`` is the whole line's length and
    :meth:`whole` reads all of it again from the file."""

    size: int
    _path: Path
    _offset: int

    def whole(self) -> bytes:
        """All the line's bytes (read now; raises ``OSError``)."""
        with open(self._path, "rb") as fh:
            fh.seek(self._offset)
            data = fh.read(self.size)
        return data[:-1] if data.endswith(b"\r") else data


def whole_line(raw: bytes) -> bytes:
    """``raw`` itself, or all of a :class:`LineHead`'s line."""
    return raw.whole() if isinstance(raw, LineHead) else raw


class RawUnavailable(Exception):
    """The line's bytes cannot be shown; the message says why."""


def rereadable(path: str | os.PathLike[str]) -> bool:
    """Whether lines of ``path`` can be read again later by offset: a regular
    file (or one not there yet, which will be one); not a FIFO or a device."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return True


@dataclass(slots=True)
class _File:
    path: Path
    ident: tuple[int, int]
    size: int


class RawStore:
    """The files the entries of a Feed were read from, by agent (``None``: the main source)."""

    def __init__(self) -> None:
        self._files: dict[str | None, _File] = {}

    def track(self, path: str | os.PathLike[str], agent: str | None = None) -> None:
        """Remember that the lines of ``agent`` (or of the main source) come from ``path``,
        as it is now (a file replaced later is refused). Does nothing for a file
        already tracked, or one that cannot be read again (a FIFO)."""
        if agent in self._files:
            return
        try:
            st = os.stat(path)
        except OSError:
            return
        if stat.S_ISREG(st.st_mode):
            self._files[agent] = _File(Path(path), (st.st_dev, st.st_ino), st.st_size)

    def replaced(self, path: str | os.PathLike[str]) -> None:
        """The main source's file was replaced by one that continues it (rotated:
        renamed away, or copied and truncated): the lines read from now on are
        the new content's. An earlier line is still
        shown only if the bytes at its offset decode to what was folded."""
        old = self._files.pop(None, None)
        self.track(path)
        if None not in self._files and old is not None:  # the new file is gone already
            self._files[None] = old

    def forget(self) -> None:
        """Drop every file (the source was reset: a new Feed reads it again)."""
        self._files.clear()

    def raw(self, entry: Entry, agent: str | None = None) -> bytes:
        """The bytes of ``entry``'s line: kept in the entry, or read back from
        its file. Raises :class:`RawUnavailable` with the reason when neither."""
        if entry.raw:
            return entry.raw
        known = self._files.get(agent)
        if known is None:
            return entry.raw  # kept in memory: it was an empty line
        where = f"line {entry.line_no} of {known.path.name}"
        try:
            with open(known.path, "rb") as fh:
                st = os.fstat(fh.fileno())
                if (st.st_dev, st.st_ino) != known.ident:
                    raise RawUnavailable(f"{where}: the file was replaced since it was read")
                if st.st_size < known.size:
                    raise RawUnavailable(f"{where}: the file was truncated since it was read")
                known.size = st.st_size
                head, length = _line_head(fh, entry.offset)
                if length > GIANT_RAW:
                    line = LineHead(head)
                    line.size, line._path, line._offset = length, known.path, entry.offset
                    return line
                data = _read_line(fh, entry.offset)
        except OSError as exc:
            raise RawUnavailable(f"{where}: cannot read it again ({exc.strerror or exc})") from None
        again = decode_line(data, entry.line_no, entry.offset, keep_raw=False)
        if again != entry:
            raise RawUnavailable(f"{where}: the file was rewritten since it was read")
        return data

    def with_raw(self, entry: Entry, agent: str | None = None) -> Entry:
        """``entry`` with its ``raw`` bytes filled in (a copy when they were read back)."""
        data = self.raw(entry, agent)
        return entry if data is entry.raw else msgspec.structs.replace(entry, raw=data)


def _line_head(fh: BinaryIO, offset: int) -> tuple[bytes, int]:
    """The first :data:`HEAD_BYTES` of the line at ``offset`` and its length
    (found a chunk at a time into one buffer: the line is not held)."""
    fh.seek(offset)
    head = fh.read(HEAD_BYTES)
    end = head.find(b"\n")
    if end >= 0:
        return head[:end], end
    length = len(head)
    buf = bytearray(_CHUNK)
    with memoryview(buf) as view:
        while n := fh.readinto(view):
            end = buf.find(b"\n", 0, n)
            if end >= 0:
                return head, length + end
            length += n
    return head, length


def _read_line(fh: BinaryIO, offset: int) -> bytes:
    """The bytes from ``offset`` to the next newline (or the end), without it."""
    fh.seek(offset)
    parts: list[bytes] = []
    while chunk := fh.read(_CHUNK):
        end = chunk.find(b"\n")
        if end >= 0:
            parts.append(chunk[:end])
            break
        parts.append(chunk)
    data = b"".join(parts)
    return data[:-1] if data.endswith(b"\r") else data
