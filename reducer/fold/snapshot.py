"""Reading a :meth:`~reducer.fold.kernel.Kernel.checkpoint` back a little at a time."""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["Bursts"]


class Bursts:
    """A file over a snapshot whose reads are Python calls, one pickle frame
    (~64 KB) each: an unpickler reading it lets other threads run between
    frames instead of holding the interpreter lock for the whole restore.
    Once ``cancelled()`` says so it reads as empty (the unpickler stops)."""

    def __init__(self, data: bytes, cancelled: Callable[[], bool]) -> None:
        self._data = data
        self._view = memoryview(data)
        self._pos = 0
        self._cancelled = cancelled

    def read(self, size: int = -1) -> bytes:
        if self._cancelled():
            return b""
        start = self._pos
        end = len(self._data) if size < 0 else min(start + size, len(self._data))
        self._pos = end
        return bytes(self._view[start:end])

    def readinto(self, buffer: memoryview) -> int:
        chunk = self.read(len(buffer))
        buffer[:len(chunk)] = chunk
        return len(chunk)

    def readline(self) -> bytes:
        end = self._data.find(b"\n", self._pos)
        return self.read(-1 if end < 0 else end + 1 - self._pos)
