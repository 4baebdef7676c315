"""A file's lines stay on disk: the raw view reads them back by offset, and
refuses (saying why) when the file is no longer the one that was read.

A Feed reading a file holds no line's bytes (half the memory of a big
session); a Feed reading a pipe keeps them. Both fold to the same state.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from cctv.reducer.feed import Feed, read_file_lines
from cctv.reducer.state import MAIN
from cctv.reducer.summary import summarize
from cctv.viewer.app import CctvApp
from cctv.viewer.rawstore import RawStore, RawUnavailable, rereadable
from cctv.viewer.screens.session import SessionScreen
from cctv.viewer.sources import FileTail, StreamSource

from conftest import FIXTURES, recordings, wait_for
from test_app import SUBAGENT_SESSION, PROJECT, STREAM


def _feeds(path: Path) -> tuple[Feed, Feed]:
    kept, lean = Feed(), Feed(keep_raw=False)
    for batch in read_file_lines(path):
        kept.feed(batch)
        lean.feed(batch)
    return kept, lean


def test_every_line_of_every_recording_reads_back_as_it_was_read() -> None:
    files = recordings() + sorted((FIXTURES / "public").rglob("*.jsonl"))
    lines = 0
    for path in files:
        kept, lean = _feeds(path)
        assert all(e.raw == b"" for e in lean.entries)
        # the fold does not need the bytes: the same state either way
        assert summarize(lean.session) == summarize(kept.session)
        store = RawStore()
        store.track(path)
        for a, b in zip(kept.entries, lean.entries, strict=True):
            assert store.raw(b) == a.raw
            assert store.with_raw(b) == a
        lines += len(kept.entries)
    assert lines > 5000


def test_a_kept_line_is_returned_as_it_is() -> None:
    kept, _ = _feeds(STREAM / "03_tools.jsonl")
    store = RawStore()  # nothing tracked: a pipe
    entry = kept.entries[2]
    assert store.with_raw(entry) is entry


@pytest.fixture
def copied(tmp_path: Path) -> Path:
    path = tmp_path / "s.jsonl"
    shutil.copy(STREAM / "03_tools.jsonl", path)
    return path


def _lean_store(path: Path) -> tuple[Feed, RawStore]:
    _, lean = _feeds(path)
    store = RawStore()
    store.track(path)
    return lean, store


def test_a_file_rewritten_in_place_is_refused(copied: Path) -> None:
    lean, store = _lean_store(copied)
    data = copied.read_bytes()
    with open(copied, "r+b") as fh:  # same inode, same size, other bytes
        fh.write(data.replace(b'"assistant"', b'"assistanT"'))
    with pytest.raises(RawUnavailable, match=r"line 3 of s.jsonl: the file was rewritten"):
        store.raw(lean.entries[2])


def test_a_truncated_file_is_refused(copied: Path) -> None:
    lean, store = _lean_store(copied)
    with open(copied, "r+b") as fh:
        fh.truncate(100)
    with pytest.raises(RawUnavailable, match="truncated"):
        store.raw(lean.entries[0])


def test_a_replaced_file_is_refused(copied: Path) -> None:
    lean, store = _lean_store(copied)
    other = copied.with_name("new.jsonl")
    other.write_bytes(copied.read_bytes())
    other.replace(copied)  # same bytes, but another file (as an editor saves)
    with pytest.raises(RawUnavailable, match="replaced"):
        store.raw(lean.entries[0])


def test_a_rotated_file_reads_the_new_lines_and_checks_the_old_ones(copied: Path) -> None:
    from cctv.reducer.decode import decode_line

    lean, store = _lean_store(copied)
    old = copied.read_bytes().splitlines()
    copied.rename(copied.with_name("s.jsonl.1"))
    new_line = b'{"type":"keep_alive"}'
    copied.write_bytes(new_line + b"\n")  # the rotation: numbering goes on in the new file
    store.replaced(copied)
    assert store.raw(decode_line(new_line, len(old) + 1, 0, keep_raw=False)) == new_line
    with pytest.raises(RawUnavailable, match="rewritten"):  # never another line's bytes
        store.raw(lean.entries[0])


def test_a_deleted_file_is_refused(copied: Path) -> None:
    lean, store = _lean_store(copied)
    copied.unlink()
    with pytest.raises(RawUnavailable, match="cannot read it again"):
        store.raw(lean.entries[0])


def test_a_growing_file_still_reads_back(copied: Path) -> None:
    lean, store = _lean_store(copied)
    with open(copied, "ab") as fh:
        fh.write(b'{"type":"keep_alive"}\n')
    assert store.raw(lean.entries[-1]) == (STREAM / "03_tools.jsonl").read_bytes().splitlines()[-1]


def test_a_fifo_is_not_rereadable(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    assert not rereadable(fifo)
    assert rereadable(tmp_path / "not-there-yet.jsonl")
    assert rereadable(STREAM / "03_tools.jsonl")


# --- in the app ------------------------------------------------------------------------


async def test_raw_view_of_a_file_reads_the_line_back_and_says_when_it_cannot(copied: Path) -> None:
    from cctv.viewer.screens.raw import RawScreen

    app = CctvApp(FileTail(copied, follow=False), clock=None)
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for(pilot, lambda: app.shown.ended is not None)
        assert not app.shown.feed.keep_raw and all(e.raw == b"" for e in app.shown.feed.entries)
        await pilot.press("g", "r")
        await wait_for(pilot, lambda: isinstance(app.screen, RawScreen))
        screen = app.screen
        assert isinstance(screen, RawScreen)
        line = screen.entry.line_no
        assert screen.entry.raw == copied.read_bytes().splitlines()[line - 1]
        assert '"type": "assistant"' in screen.view.text
        await pilot.press("escape")
        await pilot.pause()
        # the file is rewritten behind the viewer's back: a message, not wrong bytes
        data = copied.read_bytes()
        with open(copied, "r+b") as fh:
            fh.write(data.replace(b'"assistant"', b'"assistanT"'))
        await pilot.press("r")
        await pilot.pause()
        assert isinstance(app.screen, SessionScreen)
        messages = [n.message for n in app._notifications]
        assert any(f"line {line} of s.jsonl: the file was rewritten" in m for m in messages)


async def test_raw_view_of_a_pipe_keeps_the_bytes() -> None:
    from cctv.viewer.screens.raw import RawScreen

    data = (STREAM / "03_tools.jsonl").read_bytes()
    read_fd, write_fd = os.pipe()
    os.write(write_fd, data)
    os.close(write_fd)
    reader = os.fdopen(read_fd, "rb", buffering=0)
    app = CctvApp(StreamSource(reader, "stdin", close_reader=True), clock=None)
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for(pilot, lambda: app.shown.ended is not None)
        assert app.shown.feed.keep_raw
        await pilot.press("g", "r")
        await wait_for(pilot, lambda: isinstance(app.screen, RawScreen))
        line = app.screen.entry.line_no
        assert app.screen.entry.raw == data.splitlines()[line - 1]


async def test_raw_view_of_a_subagent_line_reads_its_own_file(tmp_path: Path) -> None:
    from cctv.viewer.screens.raw import RawScreen

    dst = tmp_path / "proj"
    dst.mkdir()
    shutil.copy(PROJECT / f"{SUBAGENT_SESSION}.jsonl", dst)
    shutil.copytree(PROJECT / SUBAGENT_SESSION, dst / SUBAGENT_SESSION)
    app = CctvApp(FileTail(dst / f"{SUBAGENT_SESSION}.jsonl", follow=False), clock=None)
    async with app.run_test(size=(120, 36)) as pilot:
        session = app.shown.feed.session
        await wait_for(pilot, lambda: any(
            a.id != MAIN and a.items for a in session.agents.values()))
        agent_id = next(a.id for a in session.agents.values() if a.id != MAIN)
        assert agent_id in app.shown.feed.agent_entries
        app.open_agent(agent_id)
        await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen)
                       and app.screen.agent_id == agent_id)
        await pilot.press("g", "r")
        await wait_for(pilot, lambda: isinstance(app.screen, RawScreen))
        entry = app.screen.entry
        agent_file = next((dst / SUBAGENT_SESSION / "subagents").glob("agent-*.jsonl"))
        assert entry.raw == agent_file.read_bytes().splitlines()[entry.line_no - 1]
        assert entry.raw != b""
