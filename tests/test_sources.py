"""Input sources: FileTail, StreamSource, CommandSource, take_stdin_pipe."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cctv.reducer.lines import RawLine
from cctv.viewer.sources import (
    CannotRead,
    CannotStart,
    CommandSource,
    Deleted,
    EndOfInput,
    Event,
    FileTail,
    HistoryRead,
    Lines,
    Live,
    OutputClosed,
    ProcessExited,
    ProcessStarted,
    Progress,
    Recreated,
    Replaced,
    Source,
    Stderr,
    StreamSource,
    Truncated,
    WaitingForFile,
    WatchFailed,
    is_reset,
    open_stdin,
)

ROOT = Path(__file__).resolve().parents[1]
FAST: dict[str, Any] = dict(debounce_ms=20, poll_timeout_ms=200)


class Collector:
    """Runs a source's events() in a task and records everything it yields."""

    def __init__(self, source: Source) -> None:
        self.source = source
        self.events: list[Event] = []
        self._changed = asyncio.Event()
        self._task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        async with contextlib.aclosing(self.source.events()) as events:
            async for event in events:
                self.events.append(event)
                self._changed.set()
        self._changed.set()

    @property
    def lines(self) -> list[RawLine]:
        """Lines since the last Reset."""
        out: list[RawLine] = []
        for event in self.events:
            if is_reset(event):
                out.clear()
            elif isinstance(event, Lines):
                out.extend(event.lines)
        return out

    def texts(self) -> list[bytes]:
        return [line.data for line in self.lines]

    def of(self, kind: type) -> list:
        return [e for e in self.events if isinstance(e, kind)]

    async def until(self, predicate: Callable[[Collector], bool], timeout: float = 3.0) -> None:
        async with asyncio.timeout(timeout):
            while not predicate(self):
                if self._task.done():
                    self._task.result()
                    assert predicate(self), f"source finished early: {self.events!r}"
                self._changed.clear()
                await self._changed.wait()

    async def following(self) -> None:
        await self.until(lambda c: Live() in c.events)

    async def close(self) -> None:
        await asyncio.wait_for(self.source.stop(), 5)
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait_for(self._task, 5)


@pytest.fixture
async def collect():
    made: list[Collector] = []

    def start(source: Source) -> Collector:
        made.append(Collector(source))
        return made[-1]

    yield start
    for c in made:
        await c.close()


def append(path: Path, data: bytes) -> None:
    with open(path, "ab") as f:
        f.write(data)


# ------------------------------------------------------------------ FileTail


async def test_history_then_appends_arrive_once(tmp_path: Path, collect) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"a\nb\n")
    c = collect(FileTail(path, **FAST))
    await c.following()
    assert c.texts() == [b"a", b"b"]
    assert HistoryRead(2) in c.events
    append(path, b"c\n")
    await c.until(lambda c: len(c.lines) == 3)
    append(path, b"d\ne\n")
    await c.until(lambda c: len(c.lines) == 5)
    await asyncio.sleep(0.3)  # a poll timeout passes: nothing repeated
    assert c.texts() == [b"a", b"b", b"c", b"d", b"e"]
    assert [(ln.line_no, ln.offset) for ln in c.lines] == [(1, 0), (2, 2), (3, 4), (4, 6), (5, 8)]
    assert not any(is_reset(e) for e in c.events)


async def test_appends_during_a_20mb_history_read_arrive_exactly_once_in_order(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    pad = "x" * 80

    def line(n: int) -> bytes:
        return b'{"n":%d,"pad":"%s"}' % (n, pad.encode())

    history = 200_000  # ~20 MB
    path.write_bytes(b"".join(line(n) + b"\n" for n in range(1, history + 1)))
    assert path.stat().st_size > 19_000_000
    extra = 400
    written = 0

    async def writer() -> None:
        nonlocal written
        with open(path, "ab", buffering=0) as f:
            for n in range(history + 1, history + extra + 1):
                data = line(n) + b"\n"
                if n % 7 == 0:  # split some appends mid-line
                    f.write(data[:10])
                    await asyncio.sleep(0.001)
                    f.write(data[10:])
                else:
                    f.write(data)
                written = n - history
                await asyncio.sleep(0.001)

    source = FileTail(path, chunk_size=1024 * 1024, **FAST)
    got: list[RawLine] = []
    written_when_history_done = None
    writing = asyncio.create_task(writer())
    async with asyncio.timeout(15):
        async with contextlib.aclosing(source.events()) as events:
            async for event in events:
                match event:
                    case Lines(lines):
                        got.extend(lines)
                        if got[-1].line_no == history + extra:
                            break
                    case Progress():
                        await asyncio.sleep(0.003)  # slow the history read so the writer overlaps it
                    case HistoryRead():
                        written_when_history_done = written
                    case Live():
                        pass
                    case _:
                        pytest.fail(f"unexpected {event!r}")
    await writing
    await source.stop()
    assert written_when_history_done is not None and 0 < written_when_history_done < extra, written_when_history_done
    assert [ln.line_no for ln in got] == list(range(1, history + extra + 1))
    offset = 0
    for ln in got:
        assert ln.data == line(ln.line_no)
        assert ln.offset == offset
        offset += len(ln.data) + 1


async def test_small_chunks_split_lines_anywhere(tmp_path: Path, collect) -> None:
    path = tmp_path / "s.jsonl"
    body = b"".join(b"line %d %s\n" % (n, b"y" * (n % 13)) for n in range(300))
    path.write_bytes(body + b"tail")
    c = collect(FileTail(path, chunk_size=7, **FAST))
    await c.following()
    assert c.texts() == body.splitlines()
    progress = c.of(Progress)
    assert progress[-1] == Progress(len(body) + 4, len(body) + 4)
    assert [p.done for p in progress] == sorted(p.done for p in progress)


async def test_partial_line_held_until_newline(tmp_path: Path, collect) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"a":1}\n{"b"')
    c = collect(FileTail(path, idle_flush_ms=100, **FAST))
    await c.following()
    assert c.texts() == [b'{"a":1}']
    append(path, b":2")
    await asyncio.sleep(0.35)  # idle past the flush delay and a poll timeout: not JSON yet, held
    assert c.texts() == [b'{"a":1}']
    append(path, b"}\n")
    await c.until(lambda c: len(c.lines) == 2)
    assert c.lines[1] == RawLine(2, 8, b'{"b":2}')


async def test_a_complete_json_last_line_without_newline_shows_after_idle(tmp_path: Path, collect) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"a":1}\n')
    c = collect(FileTail(path, idle_flush_ms=150, **FAST))
    await c.following()
    append(path, b'{"b":2}')  # a writer that never ends its last line
    await c.until(lambda c: len(c.lines) == 2, timeout=2)
    assert c.lines[1] == RawLine(2, 8, b'{"b":2}')
    # the newline arriving later ends that line, it is not an empty line of its own
    append(path, b'\n{"c":3}\n')
    await c.until(lambda c: len(c.lines) == 3)
    await asyncio.sleep(0.3)
    assert c.texts() == [b'{"a":1}', b'{"b":2}', b'{"c":3}']
    assert c.lines[2] == RawLine(3, 16, b'{"c":3}')


async def test_a_complete_json_line_at_history_end_shows_after_idle(tmp_path: Path, collect) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"a":1}\n{"b":2}')
    c = collect(FileTail(path, idle_flush_ms=150, **FAST))
    await c.following()
    assert c.texts() == [b'{"a":1}']
    await c.until(lambda c: len(c.lines) == 2, timeout=2)
    append(path, b'{"c":3}\n')  # no newline came: the next bytes start a new line
    await c.until(lambda c: len(c.lines) == 3)
    assert c.texts() == [b'{"a":1}', b'{"b":2}', b'{"c":3}']


async def test_truncation_keeps_what_was_read_and_follows_the_new_lines(tmp_path: Path,
                                                                         collect) -> None:
    """A rotation by copy and truncate (logrotate's copytruncate): as ``tail -F``
    shows it, the lines read stay and the new ones follow, numbered on."""
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"one\ntwo\nthree\n")
    c = collect(FileTail(path, **FAST))
    await c.following()
    with open(path, "r+b") as f:
        f.truncate(0)
    await c.until(lambda c: bool(c.of(Truncated)))
    append(path, b"new\n")
    await c.until(lambda c: c.texts() == [b"one", b"two", b"three", b"new"])
    assert c.of(Truncated) == [Truncated(0, continues=True)]
    assert c.lines[-1] == RawLine(4, 0, b"new")
    assert not any(is_reset(e) for e in c.events)


async def test_truncation_to_the_same_session_shorter_reads_it_again(tmp_path: Path,
                                                                     collect) -> None:
    """Shorter but starting as before: the same session written again, read from line 1."""
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"first":1}\ntwo\nthree\n')
    c = collect(FileTail(path, **FAST))
    await c.following()
    with open(path, "r+b") as f:
        f.truncate(len(b'{"first":1}\n'))
    await c.until(lambda c: bool(c.of(Truncated)))
    append(path, b"again\n")
    await c.until(lambda c: c.texts() == [b'{"first":1}', b"again"])
    assert c.of(Truncated) == [Truncated(12, continues=False)]


async def test_rewrite_in_place_larger_is_detected(tmp_path: Path, collect) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"aaaa\n")
    c = collect(FileTail(path, **FAST))
    await c.following()
    with open(path, "r+b") as f:  # same inode, new content, bigger than what was read
        f.write(b"bbbbbbbbbb\ncc\n")
    # other content from its first byte: a rotation (kept, followed)
    await c.until(lambda c: c.texts() == [b"aaaa", b"bbbbbbbbbb", b"cc"])
    assert c.of(Replaced) == [Replaced(continues=True)]


def _numbered(n: int, tag: str) -> bytes:
    return b'{"n":%03d,"v":"%s"}\n' % (n, tag.encode())


async def test_truncate_and_refill_past_the_old_size_between_polls_is_caught(tmp_path: Path, collect) -> None:
    # Same inode, refilled longer than before, and the 64 bytes before the old
    # offset happen to be the same: only the first bytes tell it is not the same file.
    path = tmp_path / "s.jsonl"
    old = [_numbered(n, "old") for n in range(1, 18)]
    new = [_numbered(n, "new") for n in range(1, 21)]
    same_tail = b"".join(new[:17])[-64:]
    old_bytes = b"".join(old)
    old_bytes = old_bytes[:-64] + same_tail  # the old file ends with the same 64 bytes
    path.write_bytes(old_bytes)
    c = collect(FileTail(path, poll_timeout_ms=5000, debounce_ms=2000, step_ms=2000))
    await c.following()
    fd = os.open(path, os.O_WRONLY)
    os.ftruncate(fd, 0)
    os.pwrite(fd, b"".join(new), 0)
    os.close(fd)
    await c.until(lambda c: len(c.lines) == 37, timeout=8)
    # other lines than the ones read: a rotation, kept and followed
    assert c.texts() == old_bytes.splitlines() + [ln.rstrip(b"\n") for ln in new]
    assert c.of(Replaced) == [Replaced(continues=True)]


async def test_replacement_by_rename_rereads_the_same_session(tmp_path: Path, collect) -> None:
    # an editor's atomic save: the new file starts like the old one: read again from line 1
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"first":1}\nold2\n')
    c = collect(FileTail(path, **FAST))
    await c.following()
    tmp = tmp_path / "s.jsonl.tmp"
    tmp.write_bytes(b'{"first":1}\nnew2\n')
    os.replace(tmp, path)
    await c.until(lambda c: c.texts() == [b'{"first":1}', b"new2"])
    assert c.of(Replaced) == [Replaced(continues=False)]
    append(path, b"new3\n")
    await c.until(lambda c: len(c.lines) == 3)
    assert c.lines[2] == RawLine(3, 17, b"new3")


async def test_rotation_drains_the_old_file_then_continues_with_the_new(tmp_path: Path, collect) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"a1\na2\n")
    c = collect(FileTail(path, poll_timeout_ms=5000, debounce_ms=2000, step_ms=2000))
    await c.following()
    with open(path, "ab") as f:  # written just before the file is moved away
        f.write(b"a3\na4\n")
        os.rename(path, tmp_path / "s.jsonl.1")
        path.write_bytes(b"b1\n")
        f.write(b"a5")  # ... and even after, into the moved file, without a newline
    await c.until(lambda c: len(c.lines) == 6, timeout=8)
    assert c.texts() == [b"a1", b"a2", b"a3", b"a4", b"a5", b"b1"]
    assert c.of(Replaced) == [Replaced(continues=True)]
    assert c.events.index(Replaced(continues=True)) > next(
        i for i, e in enumerate(c.events) if isinstance(e, Lines) and e.lines[-1].data == b"a5")
    assert [ln.line_no for ln in c.lines] == [1, 2, 3, 4, 5, 6]
    assert c.lines[-1].offset == 0  # an offset in the new file
    append(path, b"b2\n")
    await c.until(lambda c: c.texts()[-1] == b"b2", timeout=8)


async def test_missing_file_waits_then_reads_when_created(tmp_path: Path, collect) -> None:
    path = tmp_path / "later.jsonl"
    c = collect(FileTail(path, **FAST))
    await c.until(lambda c: bool(c.of(WaitingForFile)))
    assert c.of(WaitingForFile)[0].path.endswith("later.jsonl")
    assert not c.lines
    path.write_bytes(b"first\n")
    await c.until(lambda c: c.texts() == [b"first"])
    append(path, b"second\n")
    await c.until(lambda c: c.texts() == [b"first", b"second"])
    assert not any(is_reset(e) for e in c.events) and not c.of(Deleted)
    assert c.events.index(HistoryRead(1)) > c.events.index(c.of(WaitingForFile)[0])


async def test_missing_parent_directory_waits_too(tmp_path: Path, collect) -> None:
    path = tmp_path / "not" / "yet" / "s.jsonl"
    c = collect(FileTail(path, **FAST))
    await c.until(lambda c: bool(c.of(WaitingForFile)))
    path.parent.mkdir(parents=True)
    path.write_bytes(b"x\n")
    await c.until(lambda c: c.texts() == [b"x"])


async def test_deleted_then_recreated_is_followed_again(tmp_path: Path, collect) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"a\n")
    c = collect(FileTail(path, **FAST))
    await c.following()
    append(path, b"b\n")
    path.unlink()
    await c.until(lambda c: bool(c.of(Deleted)))
    assert c.texts() == [b"a", b"b"]  # what was appended before the unlink is not lost
    path.write_bytes(b"again\n")  # another file: its lines follow the old ones
    await c.until(lambda c: c.texts() == [b"a", b"b", b"again"])
    assert c.of(Recreated) == [Recreated(continues=True)]
    append(path, b"more\n")
    await c.until(lambda c: c.texts()[-1] == b"more")
    path.unlink()
    await c.until(lambda c: len(c.of(Deleted)) == 2)
    path.write_bytes(b"again\nmore\nfive\n")  # the same file written again: a reset
    await c.until(lambda c: len(c.of(Recreated)) == 2)
    await c.until(lambda c: c.texts() == [b"again", b"more", b"five"])
    assert c.of(Recreated)[1] == Recreated(continues=False)


async def test_an_os_error_is_reported_and_retried(tmp_path: Path, collect) -> None:
    path = tmp_path / "s.jsonl"
    os.symlink(path, path)  # a symlink to itself: stat fails with ELOOP
    c = collect(FileTail(path, **FAST))
    await c.until(lambda c: bool(c.of(CannotRead)))
    (err,) = c.of(CannotRead)
    assert err.path.endswith("s.jsonl") and "symbolic links" in err.error
    path.unlink()
    path.write_bytes(b"ok\n")
    await c.until(lambda c: c.texts() == [b"ok"])


async def test_watch_failure_falls_back_to_polling(tmp_path: Path, collect, monkeypatch) -> None:
    # inotify refusing a watch (its limit reached) is not something a test can
    # cause without harming the machine: make the watcher fail the same way.
    import cctv.viewer.sources as sources

    def no_watch(*_args, **_kwargs):
        raise OSError(28, "inotify watch limit reached")

    monkeypatch.setattr(sources, "awatch", no_watch)
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"a\n")
    c = collect(FileTail(path, debounce_ms=20, poll_timeout_ms=100))
    await c.until(lambda c: bool(c.of(WatchFailed)))
    assert c.of(WatchFailed)[0] == WatchFailed("inotify watch limit reached", 0.1)
    append(path, b"b\n")  # still read, by polling
    await c.until(lambda c: c.texts() == [b"a", b"b"])


async def test_no_follow_flushes_partial_and_ends(tmp_path: Path, collect) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"a\r\nb\nno newline")
    c = collect(FileTail(path, follow=False))
    await c.until(lambda c: bool(c.of(EndOfInput)))
    assert c.texts() == [b"a", b"b", b"no newline"]
    assert c.events[-2:] == [HistoryRead(3), EndOfInput()]


async def test_empty_file_history_is_zero_lines(tmp_path: Path, collect) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"")
    c = collect(FileTail(path, **FAST))
    await c.following()
    assert HistoryRead(0) in c.events and not c.lines


async def test_no_follow_missing_file_ends(tmp_path: Path, collect) -> None:
    c = collect(FileTail(tmp_path / "nope.jsonl", follow=False))
    await c.until(lambda c: bool(c.of(CannotRead)))
    assert c.of(CannotRead)[0].error == "No such file or directory"


async def test_directory_or_fifo_is_refused(tmp_path: Path, collect) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for path, why in ((tmp_path, "it is a directory"), (fifo, "it is not a regular file")):
        c = collect(FileTail(path, **FAST))
        await c.until(lambda c: bool(c.of(CannotRead)))
        assert c.of(CannotRead)[0].error == why


async def test_stop_ends_iteration_at_once(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"a\n")
    source = FileTail(path, **FAST)
    seen: list[Event] = []

    async def run() -> None:
        async with contextlib.aclosing(source.events()) as events:
            async for event in events:
                seen.append(event)

    task = asyncio.create_task(run())
    async with asyncio.timeout(3):
        while Live() not in seen:
            await asyncio.sleep(0.01)
    loop = asyncio.get_running_loop()
    started = loop.time()
    await source.stop()
    await asyncio.wait_for(task, 1)
    assert loop.time() - started < 0.3


# -------------------------------------------------------------- StreamSource


async def test_stream_source_over_os_pipe(collect) -> None:
    r, w = os.pipe()
    c = collect(await open_stdin(r, label="pipe"))
    big = b"z" * (5 * 1024 * 1024)  # far past asyncio's 64 KiB readline limit
    os.write(w, b"one\ntw")
    await c.until(lambda c: c.texts() == [b"one"])
    await asyncio.sleep(0.05)
    assert c.texts() == [b"one"]  # partial held

    def write_rest() -> None:
        with os.fdopen(w, "wb") as f:
            f.write(b"o\n" + big + b"\nlast")

    await asyncio.to_thread(write_rest)
    await c.until(lambda c: bool(c.of(EndOfInput)))
    assert c.texts() == [b"one", b"two", big, b"last"]
    assert c.events[0] == Live() and c.events[-1] == EndOfInput()
    assert c.source.kind == "pipe" and c.source.label == "pipe"


async def test_stream_source_from_regular_file_uses_thread(tmp_path: Path, collect) -> None:
    path = tmp_path / "in.jsonl"
    path.write_bytes(b"x\ny\nz")
    fd = os.open(path, os.O_RDONLY)
    c = collect(await open_stdin(fd))
    await c.until(lambda c: bool(c.of(EndOfInput)))
    assert c.texts() == [b"x", b"y", b"z"]


async def test_stream_source_from_stream_reader_and_stop(collect) -> None:
    reader = asyncio.StreamReader()
    c = collect(StreamSource(reader, "test"))
    reader.feed_data(b"a\nb")
    await c.until(lambda c: c.texts() == [b"a"])
    await c.source.stop()
    await c.until(lambda c: bool(c.of(EndOfInput)))
    assert c.events[-1] == EndOfInput(stopped=True)


# ------------------------------------------------------------- CommandSource

SCRIPT = textwrap.dedent(
    """
    import sys, time
    for i in range(3):
        print(f'{{"i": {i}}}', flush=True)
        print(f"warn {i}", file=sys.stderr, flush=True)
        time.sleep(0.05)
    sys.stdout.write("partial-at-exit")
    sys.exit(3)
    """
)


def _done(c: Collector) -> bool:
    return bool(c.of(OutputClosed)) and bool(c.of(ProcessExited))


async def test_command_lines_stderr_and_exit_code(collect) -> None:
    c = collect(CommandSource([sys.executable, "-c", SCRIPT]))
    await c.until(_done)
    assert isinstance(c.events[0], ProcessStarted) and c.events[0].pid > 0
    assert c.texts() == [b'{"i": 0}', b'{"i": 1}', b'{"i": 2}', b"partial-at-exit"]
    assert [line for e in c.of(Stderr) for line in e.lines] == ["warn 0", "warn 1", "warn 2"]
    assert c.of(ProcessExited) == [ProcessExited(3, by_user=False)]
    assert c.source.returncode == 3
    assert c.source.kind == "command" and c.source.label.startswith("cmd: ")


async def test_command_20mb_line_arrives_intact(collect) -> None:
    script = "import sys; sys.stdout.write('{\"k\": \"' + 'q' * 20_000_000 + '\"}\\nend\\n')"
    c = collect(CommandSource([sys.executable, "-c", script]))
    await c.until(_done, timeout=4)
    lines = c.lines
    assert len(lines) == 2
    assert len(lines[0].data) == 20_000_000 + 9
    assert json.loads(lines[0].data)["k"] == "q" * 20_000_000
    assert lines[1] == RawLine(2, 20_000_010, b"end")
    assert c.of(ProcessExited) == [ProcessExited(0)]


async def test_missing_command_cannot_start(collect) -> None:
    c = collect(CommandSource(["cctv-no-such-command-xyz", "-p"]))
    await c.until(lambda c: bool(c.of(CannotStart)))
    assert c.events == [CannotStart("cctv-no-such-command-xyz", "No such file or directory")]


async def test_command_stop_terminates_and_says_by_whom(collect) -> None:
    script = "import time; print('up', flush=True); time.sleep(30)"
    c = collect(CommandSource([sys.executable, "-c", script]))
    await c.until(lambda c: c.texts() == [b"up"])
    await asyncio.wait_for(c.source.stop(), 0.2)  # returns at once
    await c.until(_done)
    assert c.of(ProcessExited) == [ProcessExited(-15, by_user=True)]


async def test_a_grandchild_is_read_until_the_pipe_closes(tmp_path: Path, collect) -> None:
    # the shape of `cctv run -- sh -c '(sleep 1; cat session.jsonl) & exit 0'`
    session = tmp_path / "session.jsonl"
    rows = [b'{"type":"system","n":%d}' % n for n in range(30)]
    session.write_bytes(b"\n".join(rows) + b"\n")
    c = collect(CommandSource(["sh", "-c", f"(sleep 0.5; cat {session}) & exit 0"]))
    await c.until(lambda c: bool(c.of(ProcessExited)))
    assert c.of(ProcessExited) == [ProcessExited(0)]
    assert not c.of(OutputClosed)  # the grandchild still holds the pipe
    await c.until(_done, timeout=4)
    assert c.texts() == rows
    closed = c.events.index(OutputClosed())
    assert c.events.index(ProcessExited(0)) < closed
    assert all(not isinstance(e, Lines) for e in c.events[closed:])


async def test_stop_also_ends_a_grandchild_holding_the_pipe(collect) -> None:
    c = collect(CommandSource(["sh", "-c", "(sleep 30; echo late) & echo early; exit 0"], grace=0.5))
    await c.until(lambda c: bool(c.of(ProcessExited)) and c.texts() == [b"early"])
    await c.source.stop()
    await c.until(_done, timeout=3)
    assert c.texts() == [b"early"]


async def test_sources_satisfy_protocol(tmp_path: Path) -> None:
    assert isinstance(FileTail(tmp_path / "x"), Source)
    assert isinstance(CommandSource(["true"]), Source)
    assert isinstance(StreamSource(asyncio.StreamReader()), Source)
    assert FileTail(tmp_path / "x").kind == "file"


# ------------------------------------------------------------ take_stdin_pipe

CHILD = textwrap.dedent(
    """
    import fcntl, json, os, sys, termios
    fcntl.ioctl(1, termios.TIOCSCTTY, 0)  # make the pty our controlling terminal
    from cctv.viewer.sources import take_stdin_pipe
    fd = take_stdin_pipe()
    data = b""
    while chunk := os.read(fd, 65536):
        data += chunk
    import select
    ready = select.select([0], [], [], 5)[0]
    key = os.read(0, 100).decode() if ready else None
    json.dump({{
        "fd": fd,
        "data": data.decode(),
        "fd0_tty": os.isatty(0),
        "key": key,
        "stdin_tty": sys.stdin.isatty() and sys.__stdin__.isatty(),
        "stdin_fd": sys.__stdin__.fileno(),
    }}, open({out!r}, "w"))
    """
)


def test_take_stdin_pipe_swaps_in_the_terminal(tmp_path: Path) -> None:
    import pty

    master, slave = pty.openpty()
    out = tmp_path / "out.json"
    try:
        proc = subprocess.Popen(
            [sys.executable, "-c", CHILD.format(out=str(out))],
            stdin=subprocess.PIPE,
            stdout=slave,
            stderr=slave,
            start_new_session=True,
        )
        assert proc.stdin is not None
        os.write(master, b"typed\n")  # a keystroke on the terminal must reach fd 0
        proc.stdin.write(b"piped line 1\npiped line 2\n")
        proc.stdin.close()
        assert proc.wait(timeout=10) == 0
    finally:
        os.close(slave)
        os.close(master)
    result = json.loads(out.read_text())
    assert result["data"] == "piped line 1\npiped line 2\n"
    assert result["fd"] > 2
    assert result["fd0_tty"] and result["stdin_tty"] and result["stdin_fd"] == 0
    assert result["key"] == "typed\n", result


def test_take_stdin_pipe_returns_none_on_a_tty(tmp_path: Path) -> None:
    import pty

    master, slave = pty.openpty()
    script = "from cctv.viewer.sources import take_stdin_pipe; print(take_stdin_pipe())"
    try:
        result = subprocess.run([sys.executable, "-c", script], stdin=slave, capture_output=True, timeout=10)
    finally:
        os.close(slave)
        os.close(master)
    assert result.stdout.strip() == b"None", result.stderr
