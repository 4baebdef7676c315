"""Reading a packed :meth:`~reducer.fold.kernel.Kernel.checkpoint` back a piece at a time."""

from __future__ import annotations

import sys
import zlib
from collections.abc import Callable
from typing import Any

__all__ = ["Inflating"]

_IN = 1 << 16
"""Compressed bytes handed to zlib at a time (the most it keeps unconsumed)."""
_OUT = 1 << 17
"""Bytes inflated at a time."""


class Inflating:
    """A file over a zlib-compressed snapshot that inflates it as an
    unpickler reads it, ~128 KB at a time: the snapshot is never whole in
    memory (15 MB at the end of a 100 MB session), it costs no more time
    than inflating it first, and each read is a Python call, so other
    threads run between reads. Once ``cancelled()`` says so a read raises
    :class:`EOFError` (and so does the unpickler reading it)."""

    def __init__(self, packed: Any, cancelled: Callable[[], bool] | None = None) -> None:
        self._inflate = zlib.decompressobj()
        self._source = memoryview(packed)
        self._taken = 0
        self._buffer = b""
        self._pos = 0
        self._cancelled = cancelled

    def _piece(self) -> bytes:
        """The next inflated bytes (``b""`` at the end)."""
        inflate = self._inflate
        while True:
            if inflate.unconsumed_tail:
                out = inflate.decompress(inflate.unconsumed_tail, _OUT)
            elif self._taken < len(self._source):
                start = self._taken
                self._taken += _IN
                out = inflate.decompress(self._source[start:self._taken], _OUT)
            else:
                return inflate.flush()
            if out:
                return out

    def read(self, size: int = -1) -> bytes:
        if self._cancelled is not None and self._cancelled():
            raise EOFError("the restore was cancelled")
        want = sys.maxsize if size < 0 else size
        buffer, pos = self._buffer, self._pos
        if len(buffer) - pos >= want:
            self._pos = pos + want
            return buffer[pos:pos + want]
        parts = [buffer[pos:]]
        have = len(parts[0])
        while have < want:
            piece = self._piece()
            if not piece:
                break
            parts.append(piece)
            have += len(piece)
        data = b"".join(parts)
        self._buffer, self._pos = data, min(want, len(data))
        return data[:want]

    def readinto(self, target: Any) -> int:
        data = self.read(len(target))
        target[:len(data)] = data
        return len(data)

    def readline(self) -> bytes:
        while True:
            end = self._buffer.find(b"\n", self._pos)
            if end >= 0:
                return self.read(end + 1 - self._pos)
            piece = self._piece()
            if not piece:
                return self.read()
            self._buffer, self._pos = self._buffer[self._pos:] + piece, 0
