"""Reading a packed :meth:`~reducer.fold.kernel.Kernel.checkpoint` back a piece at a time."""

from __future__ import annotations

import queue
import sys
import threading
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["Inflating", "quick_handover"]

_IN = 1 << 18
"""Compressed bytes handed to zlib at a time (the most it keeps unconsumed)."""
_OUT = 1 << 20
"""Bytes inflated at a time: big, because the inflating thread needs the
interpreter lock between pieces, and gets it only when the unpickler calls
:meth:`Inflating.read` (every 64 KB it reads)."""
_AHEAD = 4
"""Inflated pieces the inflating thread may hold ready (4 MB)."""


_HANDOVER = 0.0005
"""The interpreter's switch interval while a snapshot is inflated (see
:func:`quick_handover`)."""
_handover_lock = threading.Lock()
_handover_users = 0
_handover_saved = 0.005


@contextmanager
def quick_handover() -> Iterator[None]:
    """Have the interpreter lock change hands every 0.5 ms instead of 5 ms
    meanwhile. The inflating thread of :class:`Inflating` needs the lock
    for a moment after each piece; at the default interval it waits up to
    5 ms for it each time, and the reader ends up waiting for pieces (60 ms
    of a 250 ms restore). Nested and concurrent uses are fine: the last one
    out puts the interval back."""
    global _handover_users, _handover_saved
    with _handover_lock:
        if _handover_users == 0:
            _handover_saved = sys.getswitchinterval()
            sys.setswitchinterval(min(_handover_saved, _HANDOVER))
        _handover_users += 1
    try:
        yield
    finally:
        with _handover_lock:
            _handover_users -= 1
            if _handover_users == 0:
                sys.setswitchinterval(_handover_saved)


def _pieces(packed: memoryview) -> Iterator[bytes]:
    """``packed`` inflated, :data:`_OUT` bytes at a time."""
    inflate = zlib.decompressobj()
    taken = 0
    while True:
        if inflate.unconsumed_tail:
            out = inflate.decompress(inflate.unconsumed_tail, _OUT)
        elif taken < len(packed):
            out = inflate.decompress(packed[taken:taken + _IN], _OUT)
            taken += _IN
        else:
            out = inflate.flush()
            if out:
                yield out
            return
        if out:
            yield out


def _inflate_into(packed: memoryview, ready: queue.Queue[bytes | BaseException],
                  stop: threading.Event) -> None:
    """(The inflating thread.) Put ``packed``'s pieces in ``ready``, then
    ``b""`` (or the error met), until ``stop`` is set."""

    def hand_over(piece: bytes | BaseException) -> bool:
        while not stop.is_set():
            try:
                ready.put(piece, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    try:
        for piece in _pieces(packed):
            if not hand_over(piece):
                return
        hand_over(b"")
    except BaseException as exc:  # corrupt data: the reader raises it
        hand_over(exc)


class Inflating:
    """A file over a zlib-compressed snapshot that inflates it as an
    unpickler reads it: the snapshot is never whole in memory (15 MB at the
    end of a 100 MB session), and each read is a Python call, so other
    threads run between reads. A thread of its own inflates up to
    :data:`_AHEAD` pieces of 1 MB ahead of the reader (zlib lets go of the
    interpreter lock while it inflates), so on a second core inflating
    overlaps the unpickling: a 100 MB session's end state took 237 ms
    instead of 287 ms (medians of 7 interleaved runs). Once ``cancelled()``
    says so a read raises :class:`EOFError` (and so does the unpickler
    reading it). :meth:`close` (or reading to the end) stops the thread."""

    def __init__(self, packed: Any, cancelled: Callable[[], bool] | None = None) -> None:
        self._ready: queue.Queue[bytes | BaseException] = queue.Queue(_AHEAD)
        self._stop = threading.Event()
        self._done = False
        self._buffer = b""
        self._pos = 0
        self._cancelled = cancelled
        # the thread holds the queue and the flag, not the reader: a reader
        # dropped unclosed is collected, and stops it (see __del__)
        self._thread = threading.Thread(target=_inflate_into,
                                        args=(memoryview(packed), self._ready, self._stop),
                                        name="cctv-inflate", daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Stop inflating (what is left unread is dropped)."""
        self._stop.set()
        self._done = True

    def __del__(self) -> None:
        self._stop.set()

    def _piece(self) -> bytes:
        """The next inflated bytes (``b""`` at the end)."""
        if self._done:
            return b""
        piece = self._ready.get()
        if isinstance(piece, BaseException):
            self._done = True
            raise piece
        if not piece:
            self._done = True
        return piece

    def read(self, size: int = -1) -> bytes:
        if self._cancelled is not None and self._cancelled():
            self.close()
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
