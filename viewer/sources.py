"""Input sources: a followed file, a pipe (stdin), a subprocess.

Each source is Textual-free. ``events()`` is an async generator of small
typed events (a tagged union, :data:`Event`) that say what happens; a
consumer (the app's worker, a test, a benchmark) matches on their types::

    async with contextlib.aclosing(FileTail(path).events()) as events:
        async for event in events:
            match event:
                case Lines(lines): ...
                case Truncated(continues=False) | Replaced(continues=False): ...  # drop all state
                ...

I/O problems never escape ``events()`` as exceptions: they become events
(:class:`CannotRead`, :class:`WatchFailed`, :class:`CannotStart`). Lines come
from :class:`reducer.lines.LineSplitter`, so every source numbers lines the
same way and holds a trailing fragment until its newline arrives.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import shlex
import signal
import stat
import subprocess
import sys
import threading
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Literal, Protocol, cast, runtime_checkable

import msgspec
from watchfiles import awatch

from cctv.reducer import giant
from cctv.reducer.decode import MAX_LINE_BYTES, decode_line
from cctv.reducer.format import clip, tilde
from cctv.reducer.frames import Malformed
from cctv.reducer.lines import LineSplitter, RawLine
from cctv.widgets.home import home

__all__ = [
    "Lines", "Progress", "HistoryRead", "Live", "WaitingForFile", "Truncated", "Replaced",
    "Deleted", "Recreated", "CannotRead", "WatchFailed", "ProcessStarted", "ProcessExited",
    "OutputClosed", "CannotStart", "EndOfInput", "Stderr", "Event", "is_reset",
    "Source", "FileTail", "StreamSource", "CommandSource", "open_stdin", "take_stdin_pipe",
]

MiB = 1024 * 1024

GIANT_LINE = 8 * MiB
"""A file's line this long is decoded without holding its bytes and its text at
once: its long strings are read again from the file (:mod:`reducer.giant`)."""
GIANT_STRING = 1 * MiB
"""The strings of a giant line that are read apart from it."""


# --------------------------------------------------------------------- events
#
# A source says what happens with one typed event per happening; a consumer
# matches on the type, never on text. Events that drop what was read so far
# (the file now holds something else from its first byte) are listed in
# RESETS: after one, numbering restarts at line 1, offset 0.


@dataclass(frozen=True, slots=True)
class Lines:
    """A batch of complete lines, in order."""

    lines: list[RawLine]


@dataclass(frozen=True, slots=True)
class Progress:
    """Bytes read so far of a file's history (the read from offset 0 to EOF)."""

    done: int
    total: int


@dataclass(frozen=True, slots=True)
class HistoryRead:
    """The file's content up to its end is in: ``lines`` lines (0: an empty file)."""

    lines: int
    modified: float | None = field(default=None, compare=False)
    """When the file was last written (epoch seconds), if known: a session
    last written long ago has settled, whatever its last row says."""


@dataclass(frozen=True, slots=True)
class Live:
    """From now on lines arrive as they are written."""


@dataclass(frozen=True, slots=True)
class WaitingForFile:
    """The path does not exist (yet); the source waits for it to appear."""

    path: str


@dataclass(frozen=True, slots=True)
class Truncated:
    """The file got shorter than what was read (``size`` bytes now).

    ``continues`` as for :class:`Replaced`: true when what it holds now does not
    start with the first bytes read (emptied and written again, as a rotation
    by copy and truncate does: the lines read are kept, its lines follow them,
    numbering goes on, as ``tail -F`` shows it); false when it does (the same
    session written again, shorter: a reset, it is read from the start)."""

    size: int
    continues: bool


@dataclass(frozen=True, slots=True)
class Replaced:
    """Another file now sits at the path (renamed over it, or rewritten in place).

    The old file was read to its end first. ``continues`` is true when the new
    file does not start with the old one's first bytes (a rotation: its lines
    are appended, numbering goes on); false when it does (the same session
    written again: a reset, it is read from the start)."""

    continues: bool


@dataclass(frozen=True, slots=True)
class Deleted:
    """The file was removed (after its last lines were read); a follower waits for it."""


@dataclass(frozen=True, slots=True)
class Recreated:
    """A file appeared again where a deleted one was; it is followed again.

    ``continues`` as for :class:`Replaced`."""

    continues: bool


@dataclass(frozen=True, slots=True)
class CannotRead:
    """An OS error on the path (``error`` is its text); a follower retries."""

    path: str
    error: str


@dataclass(frozen=True, slots=True)
class WatchFailed:
    """Change notifications failed (``error``); the source polls every ``poll_s`` seconds."""

    error: str
    poll_s: float


@dataclass(frozen=True, slots=True)
class ProcessStarted:
    """The command runs, as process ``pid``."""

    pid: int


@dataclass(frozen=True, slots=True)
class ProcessExited:
    """The command ended with ``status`` (negative: killed by that signal).

    Its output may still be open (something it started holds the pipe): lines
    keep coming until :class:`OutputClosed`. ``by_user``: :meth:`stop` ended it."""

    status: int
    by_user: bool = False


@dataclass(frozen=True, slots=True)
class OutputClosed:
    """The command's output pipes are closed: nothing more will arrive."""


@dataclass(frozen=True, slots=True)
class CannotStart:
    """The command could not be started (``error`` is why)."""

    command: str
    error: str


@dataclass(frozen=True, slots=True)
class EndOfInput:
    """A pipe reached its end, or a file read without following reached EOF.

    ``stopped``: the reader was stopped before the end."""

    stopped: bool = False


@dataclass(frozen=True, slots=True)
class Stderr:
    """Lines of a subprocess's standard error, decoded, in order."""

    lines: list[str]


Event = (Lines | Progress | HistoryRead | Live | WaitingForFile | Truncated | Replaced | Deleted
         | Recreated | CannotRead | WatchFailed | ProcessStarted | ProcessExited | OutputClosed
         | CannotStart | EndOfInput | Stderr)
"""Everything a :class:`Source` yields."""


def is_reset(event: Event) -> bool:
    """Whether ``event`` drops everything read so far (numbering restarts at 1)."""
    match event:
        case Truncated(continues=continues) | Replaced(continues=continues) \
                | Recreated(continues=continues):
            return not continues
        case _:
            return False


@runtime_checkable
class Source(Protocol):
    """Something that yields :data:`Event` values until it ends or is stopped."""

    label: str
    """Short human description: ``"file ~/x.jsonl"``, ``"stdin"``, ``"cmd: claude -p …"``."""
    kind: Literal["file", "pipe", "command"]

    def events(self) -> AsyncGenerator[Event, None]:
        """Yield events. Implementations are ``async def`` generators.

        Close the generator when done (``contextlib.aclosing``) so watcher
        threads and subprocesses are released at once, not at GC.

        Iterate once per source. After :meth:`stop` the iteration finishes
        promptly.
        """
        ...

    async def stop(self) -> None:
        """Stop reading (and terminate a subprocess); safe to call twice."""
        ...


# ------------------------------------------------------------------ helpers


def _err_text(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc) or type(exc).__name__


async def _sleep_unless(event: asyncio.Event, seconds: float) -> None:
    """Sleep ``seconds`` or until ``event`` is set, whichever comes first."""
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(event.wait(), seconds)


# ----------------------------------------------------------------- FileTail

_SIG_BYTES = 64
"""How many bytes at the start of the file, and before the read offset, are
re-checked to tell a rewrite from an append."""
_INLINE_READ = 256 * 1024
"""Reads expected to be at most this big run on the loop, bigger ones in a thread."""

_json_check = msgspec.json.Decoder()


def _complete_json_object(data: bytes) -> bool:
    """Whether ``data`` (a line without its newline) is one whole JSON object."""
    if not data.lstrip().startswith(b"{"):
        return False
    try:
        _json_check.decode(data)
    except msgspec.DecodeError:
        return False
    return True


class FileTail:
    """Read a file from the start, then follow it as it grows (``tail -F``).

    The byte offset is the single source of truth: the history and every
    later append are read with ``pread`` from that offset, so nothing is
    missed or repeated however the watcher's notifications line up. The
    directory watcher (``watchfiles.awatch`` on the parent directory) is
    started *before* the history read, and it also wakes up every
    ``poll_timeout_ms`` so a missed notification only costs latency.

    Emits :class:`WaitingForFile` (path absent), :class:`Progress` and
    :class:`Lines` of the history, :class:`HistoryRead`, :class:`Live`, then
    :class:`Lines` as appended. The file's identity is its inode *and* its
    first bytes: a new inode at the path is :class:`Replaced` (after the old
    file was read to its end), a shorter file :class:`Truncated`, first bytes
    (or the bytes before the offset) that changed ``Replaced`` too. A removed
    file is :class:`Deleted` (its last lines read first) and, when it comes
    back, :class:`Recreated`. Each of these says whether the file continues
    what was read (another content at the path: a rotation, by rename or by
    copy and truncate; the lines read are kept and its lines follow, as
    ``tail -F`` shows them) or is the same session written again (it starts
    with the same first bytes: read again from the start). A last line
    without its newline is held until
    the newline arrives, unless it is a whole JSON object and nothing was
    written for ``idle_flush_ms``: then it is shown (as ``tail -F`` would),
    and the newline that may follow is not taken for an empty line.
    With ``follow=False`` it reads to EOF and ends with :class:`EndOfInput`.

    ``step_ms`` is watchfiles' polling step: a lone append is reported after
    one to two steps, so it bounds the latency (``debounce_ms`` only caps
    how long a burst is grouped).
    """

    kind: Literal["file", "pipe", "command"] = "file"

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        follow: bool = True,
        debounce_ms: int = 50,
        chunk_size: int = 4 * MiB,
        poll_timeout_ms: int = 1000,
        step_ms: int = 10,
        idle_flush_ms: int = 500,
    ) -> None:
        self.path = Path(os.path.abspath(os.path.expanduser(os.fspath(path))))
        self.label = f"file {tilde(str(self.path), home())}"
        self.follow = follow
        self.debounce_ms = max(1, int(debounce_ms))
        self.step_ms = max(1, min(int(step_ms), self.debounce_ms))
        self.chunk_size = max(1, int(chunk_size))
        self.poll_timeout_ms = max(10, int(poll_timeout_ms))
        self.idle_flush_s = max(0.01, idle_flush_ms / 1000)
        self._stopping = asyncio.Event()
        self._wake = asyncio.Event()
        self._watcher: asyncio.Task[None] | None = None
        self._watch_error: str | None = None
        # Per-open-file state.
        self._fd: int | None = None
        self._ident: tuple[int, int] | None = None
        self._splitter = LineSplitter(lend=GIANT_LINE)
        self._head = b""
        """The file's first line (at most _SIG_BYTES of it) as read: its identity."""
        self._sig = b""
        """The last bytes read (up to _SIG_BYTES), just before the offset."""
        self._pending_since = 0.0
        self._skip_newline = False
        """A held last line was shown at idle: its newline, if it comes, ends nothing new."""
        self._split_giant = False
        """The last read split a giant line (see ``_giant_lines``)."""

    # -- public

    def resume(self, offset: int, lines: int) -> None:
        """Start at ``offset``, after ``lines`` lines (before ``events()``): the
        fold of what comes before was restored (see :mod:`viewer.fold_cache`).
        The file's first bytes and those before ``offset`` are its identity,
        as if they had been read."""
        with open(self.path, "rb") as fh:
            head = fh.read(_SIG_BYTES)
            fh.seek(max(0, offset - _SIG_BYTES))
            sig = fh.read(min(offset, _SIG_BYTES))
        nl = head.find(b"\n")
        self._head = head[: nl + 1] if nl >= 0 else head
        self._sig = sig
        self._splitter = LineSplitter(line_no=lines, offset=offset, lend=GIANT_LINE)

    @property
    def read_to(self) -> tuple[int, int] | None:
        """(offset, lines): where the complete lines read so far end, and how
        many; ``None`` when a last line was taken without its newline (shown
        at idle, or at the end of a file not followed): the lines given out
        then end where no line does."""
        splitter = self._splitter
        end = splitter.offset - splitter.pending_size
        if self._skip_newline:
            return None
        if not splitter.pending_size and end:
            try:
                if self._fd is None or os.pread(self._fd, 1, end - 1) != b"\n":
                    return None
            except OSError:
                return None
        return end, splitter.line_no

    async def stop(self) -> None:
        """Stop following; ``events()`` finishes at its next step."""
        self._stopping.set()
        self._wake.set()

    async def events(self) -> AsyncGenerator[Event, None]:
        """Yield the file's history, then its appends (see the class docstring)."""
        if self.follow:
            self._watcher = asyncio.create_task(self._watch(), name=f"watch {self.path}")
            # Let the task construct the inotify watch before the history read.
            await asyncio.sleep(0)
            await asyncio.sleep(0)
        try:
            async for event in self._run():
                yield event
        finally:
            self._stopping.set()
            self._close()
            watcher = self._watcher
            if watcher is not None and not watcher.done():
                # The watcher thread sees the stop event within one step; never wait for it.
                watcher.cancel()

    # -- watcher

    async def _watch(self) -> None:
        name = self.path.name
        parent = self.path.parent

        def only_target(_change: object, path: str) -> bool:
            return os.path.basename(path) == name

        while not self._stopping.is_set():
            if not parent.is_dir():
                await _sleep_unless(self._stopping, self.poll_timeout_ms / 1000)
                self._wake.set()
                continue
            try:
                async for _changes in awatch(
                    parent,
                    watch_filter=only_target,
                    debounce=self.debounce_ms,
                    step=self.step_ms,
                    stop_event=self._stopping,
                    rust_timeout=self.poll_timeout_ms,
                    yield_on_timeout=True,
                    recursive=False,
                ):
                    # An empty set is a timeout: still a cue for a cheap re-stat.
                    self._wake.set()
                return  # awatch returns only when the stop event is set
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - directory vanished, inotify limits, ...
                self._watch_error = _err_text(exc)
                self._wake.set()
                await _sleep_unless(self._stopping, self.poll_timeout_ms / 1000)

    async def _wait_for_change(self) -> None:
        timeout = self.poll_timeout_ms / 1000
        if self._splitter.pending_size and not self._skip_newline:
            # a held last line: look again when it has been idle long enough
            idle = time.monotonic() - self._pending_since
            timeout = max(0.01, min(timeout, self.idle_flush_s - idle))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._wake.wait(), timeout)
        self._wake.clear()

    # -- file state

    def _close(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
        self._fd = None
        self._ident = None

    def _modified(self) -> float | None:
        """The open file's modification time (epoch seconds), if it can be read."""
        try:
            return os.fstat(self._fd).st_mtime if self._fd is not None else None
        except OSError:
            return None

    def _open(self) -> os.stat_result:
        """Open the path (the offset stays where it is); raises OSError."""
        fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        try:
            st = os.fstat(fd)
        except OSError:
            os.close(fd)
            raise
        self._close()
        self._fd = fd
        self._ident = (st.st_dev, st.st_ino)
        return st

    def _restart(self, *, keep_numbering: bool = False) -> None:
        """Start reading the open file at offset 0 (lines numbered on, or from 1)."""
        self._splitter = LineSplitter(line_no=self._splitter.line_no if keep_numbering else 0,
                                      lend=GIANT_LINE)
        self._head = b""
        self._sig = b""
        self._skip_newline = False

    def _starts_like_before(self) -> bool:
        """Whether the open file begins with the first bytes the previous one had."""
        if not self._head or self._fd is None:
            return False
        try:
            return os.pread(self._fd, len(self._head), 0) == self._head
        except OSError:
            return False

    def _rewritten(self) -> bool:
        """True if the file's first bytes, or those just before our offset, are
        not what we read there: the same inode now holds other content."""
        if self._fd is None:
            return False
        try:
            if self._head and os.pread(self._fd, len(self._head), 0) != self._head:
                return True
            if self._sig:
                end = self._splitter.offset
                return os.pread(self._fd, len(self._sig), end - len(self._sig)) != self._sig
        except OSError:
            return False
        return False

    def _read_chunk(self) -> tuple[list[RawLine], int]:
        """Read up to ``chunk_size`` bytes at the offset; return (lines, bytes read)."""
        assert self._fd is not None
        splitter = self._splitter
        offset = splitter.offset
        data = os.pread(self._fd, self.chunk_size, offset)
        n = len(data)
        if not n:
            return [], 0
        head = self._head
        if offset == len(head) and len(head) < _SIG_BYTES and not head.endswith(b"\n"):
            head = (head + data)[:_SIG_BYTES]
            nl = head.find(b"\n")
            self._head = head[: nl + 1] if nl >= 0 else head
        self._sig = (self._sig + data[-_SIG_BYTES:])[-_SIG_BYTES:]
        if self._skip_newline:
            self._skip_newline = False
            if data.startswith(b"\n"):
                splitter.offset += 1  # the newline of the line already shown
                data = data[1:]
        lines = splitter.feed(data)
        del data
        if splitter.pending_size:
            self._pending_since = time.monotonic()
        self._giant_lines(lines)
        return lines, n

    def _giant_lines(self, lines: list[RawLine]) -> None:
        """Replace each giant line (lent by the splitter as a ``bytearray``) by its
        skeleton, its long strings read again from the file once its bytes are
        dropped; the plain bytes when it cannot be split."""
        for i in range(len(lines)):
            if type(lines[i][2]) is not bytearray:
                continue
            line_no, offset, data = lines[i]
            lines[i] = None  # type: ignore[call-overload]  # the bytes go when ``data`` does
            self._split_giant = True
            size = len(data)
            planned = giant.plan(data, GIANT_STRING) if size <= MAX_LINE_BYTES else None
            skeleton = decode_line(planned[0]) if planned is not None else None
            if planned is None or type(skeleton) is Malformed:
                lines[i] = RawLine(line_no, offset, bytes(data))
                continue
            del data
            fd = self._fd
            assert fd is not None
            as_json = giant.in_raw_fields(skeleton, len(planned[1]))
            try:
                line: bytes = giant.complete(planned, _file_reader(fd, offset), as_json)
            except (ValueError, msgspec.DecodeError):
                line = os.pread(fd, size, offset)  # changed meanwhile: as it is now
            lines[i] = RawLine(line_no, offset, line)
        if self._split_giant:
            _give_back_freed_memory()

    def _batches(self, lines: list[RawLine]) -> list[list[RawLine]]:
        """``lines`` as Lines batches: a giant line alone (``Feed`` takes it so)."""
        if not self._split_giant:
            return [lines]
        self._split_giant = False
        out: list[list[RawLine]] = []
        run: list[RawLine] = []
        for line in lines:
            if type(line[2]) is giant.GiantLine:
                if run:
                    out.append(run)
                    run = []
                out.append([line])
            else:
                run.append(line)
        if run:
            out.append(run)
        return out

    def _flush_idle_line(self) -> RawLine | None:
        """The held last line, if it is a whole JSON object idle long enough."""
        splitter = self._splitter
        if (not splitter.pending_size or self._skip_newline
                or time.monotonic() - self._pending_since < self.idle_flush_s
                or not _complete_json_object(splitter.pending)):
            return None
        self._skip_newline = True
        return self._flush()

    def _flush(self) -> RawLine | None:
        """The held last line as a line (a giant one split, as in ``_read_chunk``)."""
        last = self._splitter.flush()
        if last is None or type(last[2]) is not bytearray:
            return last
        lines = [last]
        del last
        self._giant_lines(lines)
        self._split_giant = False  # a lone line: its own batch anyway
        return lines[0]

    async def _drain(self, size_hint: int, progress_total: int | None) -> AsyncGenerator[Event, None]:
        """Read from the offset to EOF, yielding Lines (and Progress if a total is given)."""
        total = progress_total or 0
        while not self._stopping.is_set():
            if size_hint - self._splitter.offset > _INLINE_READ:
                lines, n = await asyncio.to_thread(self._read_chunk)
            else:
                lines, n = self._read_chunk()
            if lines:
                for batch in self._batches(lines):
                    yield Lines(batch)
            done = self._splitter.offset
            if progress_total is not None and n:
                total = max(total, done)
                yield Progress(done, total)
            if n < self.chunk_size:
                return
            size_hint = max(size_hint, done + self.chunk_size)

    async def _drain_old(self) -> AsyncGenerator[Event, None]:
        """Read what the open file (moved away or deleted) got before it went,
        its last line too: nothing more will be appended to it."""
        with contextlib.suppress(OSError):
            async for event in self._drain(0, None):
                yield event
        if (last := self._flush()) is not None:
            yield Lines([last])

    # -- main loop

    async def _run(self) -> AsyncGenerator[Event, None]:
        run = _Run(self.label.removeprefix("file "))
        while not self._stopping.is_set():
            if self._watch_error and self._watch_error != run.announced_watch_error:
                run.announced_watch_error = self._watch_error
                yield WatchFailed(self._watch_error, self.poll_timeout_ms / 1000)
            async for event in self._look(run):
                yield event
            if run.done:
                return
            await self._wait_for_change()

    async def _look(self, run: _Run) -> AsyncGenerator[Event, None]:
        """One look at the path: what happened to it since the last, and what is new in it."""
        try:
            st: os.stat_result | None = os.stat(self.path)
        except FileNotFoundError:
            st = None
        except OSError as exc:
            for event in self._cannot_read(run, _err_text(exc)):
                yield event
            return
        if st is not None and not stat.S_ISREG(st.st_mode):
            run.done = True
            yield CannotRead(run.shown, "it is a directory" if stat.S_ISDIR(st.st_mode)
                             else "it is not a regular file")
            return
        if st is None:
            async for event in self._missing(run):
                yield event
            return
        try:
            async for event in self._present(run, st):
                yield event
        except OSError as exc:
            self._close()
            for event in self._cannot_read(run, _err_text(exc)):
                yield event
            if not run.done:
                run.history = True
                run.deleted = self._splitter.line_no > 0 or self._splitter.offset > 0

    def _cannot_read(self, run: _Run, text: str) -> Iterator[Event]:
        """Reading failed: the end when not following, else told once per error."""
        if not self.follow:
            run.done = True
            yield CannotRead(run.shown, text)
        elif text != run.announced_error:
            run.announced_error = text
            yield CannotRead(run.shown, text)

    async def _missing(self, run: _Run) -> AsyncGenerator[Event, None]:
        """The path does not exist: the open file was deleted, or the file is awaited."""
        if self._fd is not None:
            async for event in self._drain_old():
                yield event
            self._close()
            run.deleted = True
            run.done = not self.follow
            yield Deleted()
        elif not run.announced_waiting and not run.deleted:
            if not self.follow:
                run.done = True
                yield CannotRead(run.shown, os.strerror(errno.ENOENT))
                return
            run.announced_waiting = True
            yield WaitingForFile(run.shown)

    async def _present(self, run: _Run, st: os.stat_result) -> AsyncGenerator[Event, None]:
        """The path is a regular file: (re)open it, say how it changed, read what is new."""
        run.size = st.st_size
        async for event in self._changed(run, st):
            yield event
        run.announced_error = None
        if run.history:
            async for event in self._history(run):
                yield event
            if run.done:
                return
        elif run.size > self._splitter.offset:
            async for event in self._drain(run.size, None):
                yield event
        if (last := self._flush_idle_line()) is not None:
            yield Lines([last])

    async def _changed(self, run: _Run, st: os.stat_result) -> AsyncGenerator[Event, None]:
        """Open the file if none is; say if it came back, was replaced, truncated or rewritten."""
        if self._fd is None:
            run.size = self._open().st_size
            if run.deleted:
                run.deleted = False
                continues = not self._starts_like_before()
                self._restart(keep_numbering=continues)
                run.history = not continues
                yield Recreated(continues)
            run.announced_waiting = False
        elif (st.st_dev, st.st_ino) != self._ident:
            # moved away and replaced: first what the old file got before it went
            async for event in self._drain_old():
                yield event
            run.size = self._open().st_size
            continues = not self._starts_like_before()
            self._restart(keep_numbering=continues)
            run.history = not continues
            yield Replaced(continues)
        elif st.st_size < self._splitter.offset:
            continues = not self._starts_like_before()
            self._restart(keep_numbering=continues)
            run.history = not continues
            yield Truncated(st.st_size, continues)
        elif self._rewritten():
            continues = not self._starts_like_before()
            self._restart(keep_numbering=continues)
            run.history = not continues
            yield Replaced(continues)

    async def _history(self, run: _Run) -> AsyncGenerator[Event, None]:
        """Read the file from offset 0 to its end; then follow it, or end."""
        async for event in self._drain(run.size, run.size):
            yield event
        if self._stopping.is_set():
            run.done = True
            return
        if not self.follow:
            if (last := self._flush()) is not None:
                yield Lines([last])
        yield HistoryRead(self._splitter.line_no, self._modified())
        run.history = False
        if not self.follow:
            run.done = True
            yield EndOfInput()
            return
        yield Live()


@dataclass(slots=True)
class _Run:
    """Where one run of :meth:`FileTail._run` stands, and what it has told."""

    shown: str
    """The path as events name it."""
    announced_waiting: bool = False
    announced_error: str | None = None
    announced_watch_error: str | None = None
    deleted: bool = False
    """A file was open and then removed: its return is Recreated."""
    history: bool = True
    """The next read starts at offset 0 and reports Progress."""
    size: int = 0
    """The file's size at this look."""
    done: bool = False
    """No more events."""


def _file_reader(fd: int, base: int) -> giant.ReadInto:
    """A ``readinto(offset, view)`` of the file ``fd`` from byte ``base`` on."""
    if hasattr(os, "preadv"):
        return lambda offset, view: os.preadv(fd, [view], base + offset)

    def readinto(offset: int, view: memoryview) -> int:
        data = os.pread(fd, len(view), base + offset)
        view[:len(data)] = data
        return len(data)
    return readinto


def _load_libc() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes
        import ctypes.util

        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.malloc_trim  # noqa: B018 - glibc's
        return libc
    except (OSError, AttributeError):  # not glibc
        return None


_LIBC = _load_libc()
def _give_back_freed_memory() -> None:
    """Return the buffers a giant line was read through to the OS: glibc keeps
    freed blocks of a few MB in its heap, resident (``malloc_trim``; a no-op
    elsewhere)."""
    if _LIBC is not None:
        _LIBC.malloc_trim(0)


# ------------------------------------------------------------- StreamSource


class StreamSource:
    """Read a byte stream (stdin, a pipe) in chunks until EOF.

    ``reader`` is an :class:`asyncio.StreamReader` or a binary file object.
    A file object is read by a daemon thread (so a blocked read can never
    hold up interpreter exit), which closes it at the end if
    ``close_reader``; ``transport`` (a pipe reader's) is closed at the end.
    Reads are chunked, never ``readline()``, so lines of any length pass.
    At EOF the unterminated last line (if any) is emitted and the stream
    ends with :class:`EndOfInput`. Iterate ``events()`` once.
    """

    kind: Literal["file", "pipe", "command"] = "pipe"

    def __init__(
        self,
        reader: asyncio.StreamReader | BinaryIO,
        label: str = "stdin",
        *,
        chunk_size: int = 1 * MiB,
        transport: asyncio.BaseTransport | None = None,
        close_reader: bool = False,
    ) -> None:
        self.reader = reader
        self.label = label
        self.chunk_size = max(1, int(chunk_size))
        self._transport = transport
        self._close_reader = close_reader
        self._stopping = False
        self._queue: asyncio.Queue[bytes | BaseException | None] | None = None

    async def stop(self) -> None:
        """Stop reading; ``events()`` ends with ``EndOfInput(stopped=True)``."""
        self._stopping = True
        if self._transport is not None:
            # connection_lost() then feeds EOF to the reader.
            self._transport.close()
        elif isinstance(self.reader, asyncio.StreamReader):
            self.reader.feed_eof()
        elif self._queue is not None:
            with contextlib.suppress(asyncio.QueueFull):
                self._queue.put_nowait(None)

    async def events(self) -> AsyncGenerator[Event, None]:
        """Yield :class:`Live`, Lines until EOF, then :class:`EndOfInput`."""
        splitter = LineSplitter()
        read = self._read_stream if isinstance(self.reader, asyncio.StreamReader) else self._read_thread()
        try:
            yield Live()
            while True:
                try:
                    chunk = await read()
                except asyncio.CancelledError:
                    raise
                except Exception as exc:  # noqa: BLE001 - any read failure ends the stream
                    yield CannotRead(self.label, _err_text(exc))
                    return
                if not chunk:
                    break
                if lines := splitter.feed(chunk):
                    yield Lines(lines)
            if (last := splitter.flush()) is not None:
                yield Lines([last])
            yield EndOfInput(stopped=self._stopping)
        finally:
            self._stopping = True
            if self._transport is not None:
                self._transport.close()

    async def _read_stream(self) -> bytes:
        assert isinstance(self.reader, asyncio.StreamReader)
        return await self.reader.read(self.chunk_size)

    def _read_thread(self) -> Callable[[], Awaitable[bytes]]:
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[bytes | BaseException | None] = asyncio.Queue(maxsize=8)
        self._queue = queue
        f = cast(BinaryIO, self.reader)
        read: Callable[[int], bytes] = getattr(f, "read1", None) or f.read
        size = self.chunk_size

        def pump() -> None:
            try:
                pump_until_done()
            finally:
                if self._close_reader:
                    with contextlib.suppress(Exception):
                        f.close()

        def pump_until_done() -> None:
            while True:
                item: bytes | BaseException | None
                try:
                    item = read(size) or None
                except BaseException as exc:  # noqa: BLE001 - handed to the loop
                    item = exc
                try:
                    fut = asyncio.run_coroutine_threadsafe(queue.put(item), loop)
                except RuntimeError:  # loop closed
                    return
                while True:
                    try:
                        fut.result(0.5)
                        break
                    except TimeoutError:
                        if self._stopping:
                            fut.cancel()
                            return
                    except BaseException:  # noqa: BLE001 - loop gone or put cancelled
                        return
                if item is None or isinstance(item, BaseException) or self._stopping:
                    return

        threading.Thread(target=pump, name=f"read {self.label}", daemon=True).start()

        async def next_chunk() -> bytes:
            item = await queue.get()
            if isinstance(item, BaseException):
                raise item
            return item or b""

        return next_chunk


async def open_stdin(fd: int | None = None, label: str = "stdin") -> StreamSource:
    """Return a :class:`StreamSource` reading ``fd`` (default: a duplicate of fd 0).

    An explicit ``fd`` (such as the one :func:`take_stdin_pipe` returns) is
    owned by the source from then on and closed when it ends. Pipes and
    sockets are read through ``loop.connect_read_pipe``; regular files and
    terminals, which the pipe transport refuses, by a daemon thread.
    """
    if fd is None:
        fd = os.dup(0)
    mode = os.fstat(fd).st_mode
    if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=_PIPE_BUFFER, loop=loop)
        pipe = os.fdopen(fd, "rb", buffering=0)
        transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader, loop=loop), pipe)
        return StreamSource(reader, label, transport=transport)
    return StreamSource(os.fdopen(fd, "rb", buffering=0), label, close_reader=True)


def take_stdin_pipe() -> int | None:
    """Move piped stdin out of the way so Textual can read the keyboard.

    For ``claude -p … | cctv``: Textual's Linux driver reads keys from
    ``sys.__stdin__.fileno()`` (fd 0). If fd 0 is not a terminal, this
    duplicates it to a new fd (returned: pass it to :func:`open_stdin`), then
    opens the controlling terminal ``/dev/tty`` onto fd 0 and rebinds
    ``sys.stdin``/``sys.__stdin__`` to it. Call it before the App starts.

    Call it only when stdin is to be read (``cctv -`` or no file given):
    a ``/dev/null`` stdin also counts as "not a terminal".
    Returns ``None`` (and changes nothing) when stdin already is a terminal.
    Raises :class:`OSError` (and changes nothing) when there is no
    controlling terminal, e.g. under CI; the caller decides what then.
    """
    try:
        if os.isatty(0):
            return None
    except OSError:
        pass
    tty = os.open("/dev/tty", os.O_RDWR | getattr(os, "O_CLOEXEC", 0))
    try:
        pipe_fd = os.dup(0)  # non-inheritable
        try:
            os.dup2(tty, 0)  # fd 0 stays inheritable: children see the terminal
        except OSError:
            os.close(pipe_fd)
            raise
    finally:
        os.close(tty)
    old = sys.__stdin__
    encoding = getattr(old, "encoding", None) or "utf-8"
    errors = getattr(old, "errors", None) or "strict"
    stdin = open(0, "r", encoding=encoding, errors=errors, closefd=False)  # noqa: SIM115
    sys.stdin = stdin
    setattr(sys, "__stdin__", stdin)  # noqa: B010 - typeshed marks it Final
    return pipe_fd


# ------------------------------------------------------------ CommandSource


_PIPE_BUFFER = 256 * 1024
"""What a pipe reader buffers before it stops reading (asyncio pauses at twice
this): the bound on bytes waiting while the app folds (chunked reads pass
lines of any length). asyncio's 64 KiB default is too small for throughput,
the 64 MiB used before let ``yes`` park 128 MiB here."""
_QUEUED = 8
"""Events a command's readers may have waiting: with the 64 KiB stdout chunks
(a pipe's size), at most ~0.5 MB of lines are read ahead of the fold."""


class _ExitAwareProtocol(asyncio.subprocess.SubprocessStreamProtocol):
    """The protocol create_subprocess_exec uses, plus an event set at exit."""

    def __init__(self, limit: int, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(limit=limit, loop=loop)
        self.exited = asyncio.Event()

    def process_exited(self) -> None:
        super().process_exited()
        self.exited.set()


_CLOSED = object()
"""Queued by a pipe reader when its pipe is closed."""


class CommandSource:
    """Run a command and read its stdout as lines, its stderr as text.

    The process gets ``stdin=DEVNULL`` and its own session (process group),
    so :meth:`stop` can signal it and everything it spawned. stdout is read
    in chunks through a :class:`LineSplitter` (any line length); each stderr
    line is yielded as :class:`Stderr` (the consumer keeps them, the source
    does not). Reading goes on until the output pipes close, not until the
    process exits: a grandchild that still writes is read to its end.

    Emits :class:`ProcessStarted`, then Lines and Stderr, :class:`ProcessExited`
    when the process ends (the pipes may still be open) and
    :class:`OutputClosed` when they are closed; or only :class:`CannotStart`.
    """

    kind: Literal["file", "pipe", "command"] = "command"

    def __init__(
        self,
        argv: list[str],
        *,
        cwd: str | os.PathLike[str] | None = None,
        env: dict[str, str] | None = None,
        chunk_size: int = 64 * 1024,
        grace: float = 2.0,
    ) -> None:
        self.argv = list(argv)
        self.label = "cmd: " + clip(shlex.join(self.argv), 60)
        self.cwd = cwd
        self.env = env
        self.chunk_size = max(1, int(chunk_size))
        self.grace = grace
        """Seconds between SIGTERM and SIGKILL when stopped."""
        self.process: asyncio.subprocess.Process | None = None
        self.returncode: int | None = None
        self.stopped_by_user = False
        self._transport: asyncio.SubprocessTransport | None = None
        self._closer: asyncio.Task[None] | None = None
        self._exited: asyncio.Event | None = None

    async def stop(self) -> None:
        """SIGTERM the process group now, SIGKILL it after :attr:`grace` seconds,
        then stop reading output a survivor may still hold. Returns at once;
        safe to call twice."""
        proc = self.process
        if proc is None or self._closer is not None:
            return
        if proc.returncode is None:
            self.stopped_by_user = True
        self._signal(proc, signal.SIGTERM)
        self._closer = asyncio.create_task(self._close_after(proc))

    async def _close_after(self, proc: asyncio.subprocess.Process) -> None:
        # (Process.wait() would also wait for the pipes, which a survivor may hold)
        exited = self._exited
        assert exited is not None
        try:
            await asyncio.wait_for(exited.wait(), self.grace)
        except TimeoutError:
            self._signal(proc, signal.SIGKILL)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(exited.wait(), self.grace)
        await asyncio.sleep(0.2)  # pipes the group held close by themselves
        if self._transport is not None:
            self._transport.close()  # the pipe readers see EOF

    @staticmethod
    def _signal(proc: asyncio.subprocess.Process, sig: signal.Signals) -> None:
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(sig)

    async def events(self) -> AsyncGenerator[Event, None]:
        """Yield the command's output until its pipes close (see the class docstring)."""
        if not self.argv:
            yield CannotStart("", "no command given")
            return
        loop = asyncio.get_running_loop()
        try:
            # create_subprocess_exec(), spelled out to see the exit itself:
            # Process.wait() also waits for the pipes to close.
            transport, protocol = await loop.subprocess_exec(
                lambda: _ExitAwareProtocol(limit=_PIPE_BUFFER, loop=loop),
                *self.argv,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=self.cwd,
                env=self.env,
                start_new_session=True,
            )
        except (OSError, ValueError, subprocess.SubprocessError) as exc:
            yield CannotStart(self.argv[0], _err_text(exc))
            return
        proc = asyncio.subprocess.Process(transport, protocol, loop)
        self.process = proc
        self._transport = transport
        self._exited = protocol.exited
        yield ProcessStarted(proc.pid)
        queue: asyncio.Queue[Event | object] = asyncio.Queue(maxsize=_QUEUED)
        assert proc.stdout is not None and proc.stderr is not None
        tasks = [
            asyncio.create_task(self._pump_stdout(proc.stdout, queue)),
            asyncio.create_task(self._pump_stderr(proc.stderr, queue)),
            asyncio.create_task(self._after_exit(protocol.exited, transport, queue)),
        ]
        try:
            open_pipes, exited = 2, False
            while open_pipes or not exited:
                event = await queue.get()
                if event is _CLOSED:
                    open_pipes -= 1
                    if not open_pipes:
                        yield OutputClosed()
                    continue
                if isinstance(event, ProcessExited):
                    exited = True
                    self.returncode = event.status
                yield event  # type: ignore[misc]
        finally:
            for task in tasks:
                task.cancel()
            if proc.returncode is None:
                # the consumer went away (the app quits): end the command, briefly wait
                self.stopped_by_user = True
                self._signal(proc, signal.SIGTERM)
                with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                    await asyncio.wait_for(protocol.exited.wait(), 0.3)
            if self._closer is not None:
                self._closer.cancel()
            transport.close()  # (kills the child outright if it still runs)

    async def _after_exit(self, exited: asyncio.Event, transport: asyncio.SubprocessTransport,
                          queue: asyncio.Queue) -> None:
        await exited.wait()
        status = transport.get_returncode()
        await queue.put(ProcessExited(status if status is not None else -1, self.stopped_by_user))

    async def _pump_stdout(self, stream: asyncio.StreamReader, queue: asyncio.Queue) -> None:
        splitter = LineSplitter()
        try:
            while chunk := await stream.read(self.chunk_size):
                if lines := splitter.feed(chunk):
                    await queue.put(Lines(lines))
        except (OSError, ValueError) as exc:
            await queue.put(CannotRead("stdout", _err_text(exc)))
        if (last := splitter.flush()) is not None:
            await queue.put(Lines([last]))
        await queue.put(_CLOSED)

    async def _pump_stderr(self, stream: asyncio.StreamReader, queue: asyncio.Queue) -> None:
        splitter = LineSplitter()

        async def emit(lines: list[RawLine]) -> None:
            if lines:
                await queue.put(Stderr([line.data.decode("utf-8", "replace") for line in lines]))

        try:
            while chunk := await stream.read(64 * 1024):
                await emit(splitter.feed(chunk))
        except (OSError, ValueError) as exc:
            await queue.put(CannotRead("stderr", _err_text(exc)))
        if (last := splitter.flush()) is not None:
            await emit([last])
        await queue.put(_CLOSED)
