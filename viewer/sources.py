"""Input sources: a followed file, a pipe (stdin), a subprocess.

Each source is Textual-free. ``events()`` is an async generator of small
immutable events; a consumer (the app's worker, a test, a benchmark) folds
them into its state::

    async with contextlib.aclosing(FileTail(path).events()) as events:
        async for event in events:
            match event:
                case Lines(lines): ...
                case Reset(reason): ...   # drop all state; numbering restarts at 1
                ...

I/O problems never escape ``events()`` as exceptions: they become
:class:`Ended` or :class:`Status` events with readable text. Lines come from
:class:`reducer.lines.LineSplitter`, so every source numbers lines the same way
and holds a trailing fragment until its newline arrives.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import signal
import stat
import subprocess
import sys
import threading
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Literal, Protocol, cast, runtime_checkable

from watchfiles import awatch

from reducer.lines import LineSplitter, RawLine

__all__ = [
    "Lines",
    "Reset",
    "Waiting",
    "Status",
    "Ended",
    "Stderr",
    "Progress",
    "Event",
    "Source",
    "FileTail",
    "StreamSource",
    "CommandSource",
    "open_stdin",
    "take_stdin_pipe",
]

MiB = 1024 * 1024


# --------------------------------------------------------------------- events


@dataclass(frozen=True, slots=True)
class Lines:
    """A batch of complete lines, in order."""

    lines: list[RawLine]


@dataclass(frozen=True, slots=True)
class Reset:
    """The input was truncated or replaced: drop all state.

    Line numbers restart at 1 and offsets at 0 with the next :class:`Lines`.
    """

    reason: str


@dataclass(frozen=True, slots=True)
class Waiting:
    """Nothing to read yet (e.g. the file does not exist yet)."""

    reason: str


@dataclass(frozen=True, slots=True)
class Status:
    """Informational text, e.g. ``"following"`` or ``"history read: 12 lines"``."""

    text: str


@dataclass(frozen=True, slots=True)
class Ended:
    """The input ended: end of stream, process exit, file deleted, or an error.

    A :class:`FileTail` that follows may still go on after ``Ended("deleted")``:
    if the file reappears it yields :class:`Reset` and reads it from the start.
    """

    reason: str
    exit_code: int | None = None


@dataclass(frozen=True, slots=True)
class Stderr:
    """One line of a subprocess's standard error, decoded."""

    text: str


@dataclass(frozen=True, slots=True)
class Progress:
    """Bytes read so far of a file's history (the read from offset 0 to EOF)."""

    done: int
    total: int


Event = Lines | Reset | Waiting | Status | Ended | Stderr | Progress
"""Everything a :class:`Source` yields."""


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
        promptly (possibly after a final :class:`Ended`).
        """
        ...

    async def stop(self) -> None:
        """Stop reading (and terminate a subprocess); safe to call twice."""
        ...


# ------------------------------------------------------------------ helpers


def _tilde(path: Path | str) -> str:
    p = str(path)
    home = os.path.expanduser("~")
    if home not in ("", "/") and (p == home or p.startswith(home + os.sep)):
        return "~" + p[len(home) :]
    return p


def _shorten(text: str, width: int = 60) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


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
"""How many bytes before the read offset are re-checked to detect a rewrite."""
_INLINE_READ = 256 * 1024
"""Reads expected to be at most this big run on the loop, bigger ones in a thread."""


class FileTail:
    """Read a file from the start, then follow it as it grows (``tail -F``).

    The byte offset is the single source of truth: the history and every
    later append are read with ``pread`` from that offset, so nothing is
    missed or repeated however the watcher's notifications line up. The
    directory watcher (``watchfiles.awatch`` on the parent directory) is
    started *before* the history read, and it also wakes up every
    ``poll_timeout_ms`` so a missed notification only costs latency.

    Emits, in order: optionally :class:`Waiting` (path absent), then
    :class:`Progress` and :class:`Lines` batches of the history,
    ``Status("history read: N lines")``, ``Status("following")``, then
    :class:`Lines` as appended. On truncation, rewrite or replacement
    (new inode) it yields :class:`Reset` and reads again from offset 0; on
    deletion ``Ended("deleted")`` and, if the file comes back, ``Reset``.
    With ``follow=False`` it reads to EOF, emits the unterminated last line
    (if any), and ends with ``Ended("end of file")``.

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
    ) -> None:
        self.path = Path(os.path.abspath(os.path.expanduser(os.fspath(path))))
        self.label = f"file {_tilde(self.path)}"
        self.follow = follow
        self.debounce_ms = max(1, int(debounce_ms))
        self.step_ms = max(1, min(int(step_ms), self.debounce_ms))
        self.chunk_size = max(1, int(chunk_size))
        self.poll_timeout_ms = max(10, int(poll_timeout_ms))
        self._stopping = asyncio.Event()
        self._wake = asyncio.Event()
        self._watcher: asyncio.Task[None] | None = None
        self._watch_error: str | None = None
        # Per-open-file state.
        self._fd: int | None = None
        self._ident: tuple[int, int] | None = None
        self._splitter = LineSplitter()
        self._sig = b""

    # -- public

    async def stop(self) -> None:
        """Stop following; ``events()`` finishes at its next step."""
        self._stopping.set()
        self._wake.set()
        watcher = self._watcher
        if watcher is not None and not watcher.done():
            # The Rust thread sees the stop event within one step.
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(asyncio.shield(watcher), 2)
            watcher.cancel()

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
                with contextlib.suppress(BaseException):
                    await asyncio.wait_for(asyncio.shield(watcher), 2)
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
                self._watch_error = f"watching {_tilde(parent)} failed ({_err_text(exc)}); polling"
                self._wake.set()
                await _sleep_unless(self._stopping, self.poll_timeout_ms / 1000)

    async def _wait_for_change(self) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._wake.wait(), self.poll_timeout_ms / 1000)
        self._wake.clear()

    # -- file state

    def _close(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
        self._fd = None
        self._ident = None

    def _open(self) -> os.stat_result:
        """Open the path and start at offset 0; raises OSError."""
        self._close()
        fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        try:
            st = os.fstat(fd)
        except OSError:
            os.close(fd)
            raise
        self._fd = fd
        self._ident = (st.st_dev, st.st_ino)
        self._restart()
        return st

    def _restart(self) -> None:
        self._splitter = LineSplitter()
        self._sig = b""

    def _rewritten(self) -> bool:
        """True if the bytes just before our offset are not what we read there."""
        if not self._sig or self._fd is None:
            return False
        end = self._splitter.offset
        try:
            return os.pread(self._fd, len(self._sig), end - len(self._sig)) != self._sig
        except OSError:
            return False

    def _read_chunk(self) -> tuple[list[RawLine], int]:
        """Read up to ``chunk_size`` bytes at the offset; return (lines, bytes read)."""
        assert self._fd is not None
        data = os.pread(self._fd, self.chunk_size, self._splitter.offset)
        if not data:
            return [], 0
        lines = self._splitter.feed(data)
        self._sig = (self._sig + data[-_SIG_BYTES:])[-_SIG_BYTES:]
        return lines, len(data)

    async def _drain(self, size_hint: int, progress_total: int | None) -> AsyncGenerator[Event, None]:
        """Read from the offset to EOF, yielding Lines (and Progress if a total is given)."""
        total = progress_total or 0
        while not self._stopping.is_set():
            if size_hint - self._splitter.offset > _INLINE_READ:
                lines, n = await asyncio.to_thread(self._read_chunk)
            else:
                lines, n = self._read_chunk()
            if lines:
                yield Lines(lines)
            done = self._splitter.offset
            if progress_total is not None and n:
                total = max(total, done)
                yield Progress(done, total)
            if n < self.chunk_size:
                return
            size_hint = max(size_hint, done + self.chunk_size)

    # -- main loop

    async def _run(self) -> AsyncGenerator[Event, None]:
        shown = self.label.removeprefix("file ")
        announced_waiting = False
        announced_error: str | None = None
        announced_watch_error: str | None = None
        had_file = False  # a file was open and then deleted: its reappearance is a Reset
        history = True  # the next read starts at offset 0 and reports Progress

        while not self._stopping.is_set():
            if self._watch_error and self._watch_error != announced_watch_error:
                announced_watch_error = self._watch_error
                yield Status(self._watch_error)

            try:
                st: os.stat_result | None = os.stat(self.path)
            except FileNotFoundError:
                st = None
            except OSError as exc:
                text = f"cannot stat {shown}: {_err_text(exc)}"
                if not self.follow:
                    yield Ended(text)
                    return
                if text != announced_error:
                    announced_error = text
                    yield Status(text)
                await self._wait_for_change()
                continue

            if st is not None and not stat.S_ISREG(st.st_mode):
                what = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file"
                yield Ended(f"cannot follow {shown}: it is {what}")
                return

            if st is None:
                if self._fd is not None:
                    # Deleted (or renamed away): read what was appended before it went.
                    try:
                        async for event in self._drain(0, None):
                            yield event
                    except OSError:
                        pass
                    self._close()
                    had_file = True
                    yield Ended("deleted")
                    if not self.follow:
                        return
                elif not announced_waiting and not had_file:
                    if not self.follow:
                        yield Ended(f"not found: {shown}")
                        return
                    announced_waiting = True
                    yield Waiting(f"waiting for {shown} to appear")
                await self._wait_for_change()
                continue

            try:
                if self._fd is None:
                    st = self._open()
                    history = True
                    if had_file:
                        had_file = False
                        yield Reset("file reappeared")
                    elif announced_waiting:
                        yield Status(f"{shown} appeared")
                    announced_waiting = False
                elif (st.st_dev, st.st_ino) != self._ident:
                    st = self._open()
                    history = True
                    yield Reset("file replaced")
                elif st.st_size < self._splitter.offset or self._rewritten():
                    what = "truncated" if st.st_size < self._splitter.offset else "rewritten"
                    self._restart()
                    history = True
                    yield Reset(f"file {what}")
                announced_error = None

                if history:
                    yield Status("reading history")
                    async for event in self._drain(st.st_size, st.st_size):
                        yield event
                    if self._stopping.is_set():
                        return
                    if not self.follow:
                        last = self._splitter.flush()
                        if last is not None:
                            yield Lines([last])
                    yield Status(f"history read: {self._splitter.line_no} lines")
                    history = False
                    if not self.follow:
                        yield Ended("end of file")
                        return
                    yield Status("following")
                elif st.st_size > self._splitter.offset:
                    async for event in self._drain(st.st_size, None):
                        yield event
            except OSError as exc:
                text = f"cannot read {shown}: {_err_text(exc)}"
                self._close()
                if not self.follow:
                    yield Ended(text)
                    return
                if text != announced_error:
                    announced_error = text
                    yield Status(text)
                history = True
                had_file = self._splitter.line_no > 0 or self._splitter.offset > 0

            await self._wait_for_change()


# ------------------------------------------------------------- StreamSource


class StreamSource:
    """Read a byte stream (stdin, a pipe) in chunks until EOF.

    ``reader`` is an :class:`asyncio.StreamReader` or a binary file object.
    A file object is read by a daemon thread (so a blocked read can never
    hold up interpreter exit), which closes it at the end if
    ``close_reader``; ``transport`` (a pipe reader's) is closed at the end.
    Reads are chunked, never ``readline()``, so lines of any length pass.
    At EOF the unterminated last line (if any) is emitted and the stream
    ends with ``Ended("end of input")``. Iterate ``events()`` once.
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
        """Stop reading; ``events()`` ends with ``Ended("stopped")``."""
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
        """Yield Lines until EOF, then Ended("end of input")."""
        splitter = LineSplitter()
        read = self._read_stream if isinstance(self.reader, asyncio.StreamReader) else self._read_thread()
        try:
            while True:
                try:
                    chunk = await read()
                except asyncio.CancelledError:
                    raise
                except Exception as exc:  # noqa: BLE001 - any read failure ends the stream
                    yield Ended(f"read error: {_err_text(exc)}")
                    return
                if not chunk:
                    break
                if lines := splitter.feed(chunk):
                    yield Lines(lines)
            if (last := splitter.flush()) is not None:
                yield Lines([last])
            yield Ended("stopped" if self._stopping else "end of input")
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
        reader = asyncio.StreamReader(limit=64 * MiB, loop=loop)
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

_PIPES_LINGER = object()


class _ExitAwareProtocol(asyncio.subprocess.SubprocessStreamProtocol):
    """The protocol create_subprocess_exec uses, plus an event set at exit."""

    def __init__(self, limit: int, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(limit=limit, loop=loop)
        self.exited = asyncio.Event()

    def process_exited(self) -> None:
        super().process_exited()
        self.exited.set()


class CommandSource:
    """Run a command and read its stdout as lines, its stderr as text.

    The process gets ``stdin=DEVNULL`` and its own session (process group),
    so :meth:`stop` can signal it and everything it spawned. stdout is read
    in chunks through a :class:`LineSplitter` (any line length);
    each stderr line is yielded as :class:`Stderr` and kept in
    :attr:`stderr_lines`. Ends with ``Ended("exited", returncode)`` (negative
    for a signal), or ``Ended("cannot start …")`` if it cannot be started.
    """

    kind: Literal["file", "pipe", "command"] = "command"

    def __init__(
        self,
        argv: list[str],
        *,
        cwd: str | os.PathLike[str] | None = None,
        env: dict[str, str] | None = None,
        chunk_size: int = 1 * MiB,
        linger: float = 2.0,
    ) -> None:
        self.argv = list(argv)
        self.label = "cmd: " + _shorten(shlex.join(self.argv))
        self.cwd = cwd
        self.env = env
        self.chunk_size = max(1, int(chunk_size))
        self.linger = linger
        """Seconds to keep reading after exit while a grandchild holds the pipes."""
        self.stderr_lines: list[str] = []
        """Every stderr line so far, decoded (for a stderr pane)."""
        self.process: asyncio.subprocess.Process | None = None
        self.returncode: int | None = None

    async def stop(self, grace: float = 2.0) -> None:
        """SIGTERM the process group, then SIGKILL after ``grace`` seconds."""
        proc = self.process
        if proc is None or proc.returncode is not None:
            return
        self._signal(proc, signal.SIGTERM)
        try:
            await asyncio.wait_for(proc.wait(), grace)
        except TimeoutError:
            self._signal(proc, signal.SIGKILL)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(proc.wait(), grace)

    @staticmethod
    def _signal(proc: asyncio.subprocess.Process, sig: signal.Signals) -> None:
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(sig)

    async def events(self) -> AsyncGenerator[Event, None]:
        """Yield Lines (stdout) and Stderr until the process exits, then Ended."""
        if not self.argv:
            yield Ended("cannot start: no command given")
            return
        loop = asyncio.get_running_loop()
        try:
            # create_subprocess_exec(), spelled out to see the exit itself:
            # Process.wait() also waits for the pipes to close.
            transport, protocol = await loop.subprocess_exec(
                lambda: _ExitAwareProtocol(limit=64 * MiB, loop=loop),
                *self.argv,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=self.cwd,
                env=self.env,
                start_new_session=True,
            )
        except (OSError, ValueError, subprocess.SubprocessError) as exc:
            yield Ended(f"cannot start {self.argv[0]}: {_err_text(exc)}")
            return
        proc = asyncio.subprocess.Process(transport, protocol, loop)
        self.process = proc
        queue: asyncio.Queue[Event | None | object] = asyncio.Queue(maxsize=64)
        assert proc.stdout is not None and proc.stderr is not None
        tasks = [
            asyncio.create_task(self._pump_stdout(proc.stdout, queue)),
            asyncio.create_task(self._pump_stderr(proc.stderr, queue)),
        ]
        waiter = asyncio.create_task(self._after_exit(protocol.exited, queue))
        try:
            open_streams = len(tasks)
            while open_streams:
                event = await queue.get()
                if event is None:
                    open_streams -= 1
                elif event is _PIPES_LINGER:
                    # The process is gone but something it spawned holds the pipes.
                    yield Status("output still open after the process exited; stopped reading")
                    transport.close()
                    break
                else:
                    yield event  # type: ignore[misc]
            rc = proc.returncode
            self.returncode = rc if rc is not None else await proc.wait()
            yield Ended("exited", self.returncode)
        finally:
            for task in (*tasks, waiter):
                task.cancel()
            if proc.returncode is None:
                await self.stop()

    async def _after_exit(self, exited: asyncio.Event, queue: asyncio.Queue) -> None:
        await exited.wait()
        await asyncio.sleep(self.linger)
        await queue.put(_PIPES_LINGER)

    async def _pump_stdout(self, stream: asyncio.StreamReader, queue: asyncio.Queue) -> None:
        splitter = LineSplitter()
        try:
            while chunk := await stream.read(self.chunk_size):
                if lines := splitter.feed(chunk):
                    await queue.put(Lines(lines))
        except (OSError, ValueError) as exc:
            await queue.put(Status(f"stdout read error: {_err_text(exc)}"))
        if (last := splitter.flush()) is not None:
            await queue.put(Lines([last]))
        await queue.put(None)

    async def _pump_stderr(self, stream: asyncio.StreamReader, queue: asyncio.Queue) -> None:
        splitter = LineSplitter()

        async def emit(lines: list[RawLine]) -> None:
            for line in lines:
                text = line.data.decode("utf-8", "replace")
                self.stderr_lines.append(text)
                await queue.put(Stderr(text))

        try:
            while chunk := await stream.read(64 * 1024):
                await emit(splitter.feed(chunk))
        except (OSError, ValueError) as exc:
            await queue.put(Status(f"stderr read error: {_err_text(exc)}"))
        if (last := splitter.flush()) is not None:
            await emit([last])
        await queue.put(None)
