"""The live board (viewer.live_board): sessions written to lately, their states
from file events, and who started needing you, once per change."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from cctv.reducer.live_state import APPROVAL_AFTER_S
from cctv.viewer.index import SessionIndex
from cctv.viewer.live_board import LiveBoard, session_of, watch_sessions

from conftest import FIXTURES
from test_sessions_live import INTERACTIVE, PERMISSION, TOOLS, Writer


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


@pytest.fixture
def projects(tmp_path: Path) -> Path:
    (tmp_path / "projects" / "-home-ada-src-demo").mkdir(parents=True)
    return tmp_path / "projects"


def rows_of(index: SessionIndex, *writers: Writer):
    index.refresh(only=[w.path for w in writers])
    wanted = {str(w.path) for w in writers}
    return [r for r in index.rows() if r.path in wanted]


def test_who_needs_you_is_said_once_per_change(projects: Path) -> None:
    index = SessionIndex(projects)
    board = LiveBoard()
    w = Writer(projects, TOOLS)
    w.through(b'"command":"python3 test_utils.py')
    now = time.time()
    (t,) = board.update(rows_of(index, w), now)
    assert t.before is None and t.after.kind == "working" and not t.calls_you
    assert board.counts() == "1 live"
    # nothing written: at the due time the quiet call may be a prompt
    due = board.due(now)
    assert due is not None and due - os.stat(w.path).st_mtime == pytest.approx(APPROVAL_AFTER_S)
    (t,) = board.retime(due + 0.01)
    assert t.after.kind == "needs_approval" and t.calls_you
    assert board.retime(due + 1) == []  # said once
    assert board.counts() == "1 live · 1 needs you"
    w.upto(len(w.lines))
    (t,) = board.update(rows_of(index, w), time.time())
    assert t.after.kind == "needs_you" and t.calls_you
    assert board.update(rows_of(index, w), time.time()) == []


def test_a_refresh_of_named_files_reads_those_alone_and_reports_their_rows(projects: Path) -> None:
    index = SessionIndex(projects)
    one, two = Writer(projects, TOOLS), Writer(projects, INTERACTIVE)
    one.upto(5)
    two.upto(5)
    report = index.refresh()
    assert sorted(r.path for r in report.rows) == sorted([str(one.path), str(two.path)])
    one.upto(9)
    two.upto(9)
    report = index.refresh(only=[one.path])
    assert [r.path for r in report.rows] == [str(one.path)] and report.gone == []
    one.path.unlink()
    report = index.refresh(only=[one.path])
    assert report.rows == [] and report.gone == [str(one.path)]
    assert [r.path for r in index.rows()] == [str(two.path)]


def test_the_longest_waiting_comes_first(projects: Path) -> None:
    index = SessionIndex(projects)
    board = LiveBoard()
    done = Writer(projects, INTERACTIVE)
    done.upto(len(done.lines))
    asking = Writer(projects, PERMISSION, "asking.jsonl")
    asking.through(b'"subtype":"can_use_tool"')
    working = Writer(projects, TOOLS, "working.jsonl")
    working.through(b'"command":"python3 test_utils.py')
    board.update(rows_of(index, done, asking, working), time.time())
    assert [(Path(r.path).name, s.kind) for r, s in board.ordered()] == [
        ("asking.jsonl", "needs_approval"), (done.path.name, "needs_you"),
        ("working.jsonl", "working")]
    row, state = board.needing_you(but=str(asking.path))
    assert row.path == str(done.path) and state.kind == "needs_you"


def test_a_session_past_the_horizon_leaves_the_board(projects: Path) -> None:
    index = SessionIndex(projects)
    board = LiveBoard(horizon=600)
    w = Writer(projects, INTERACTIVE)
    w.upto(len(w.lines))
    board.update(rows_of(index, w), time.time())
    assert board.states
    (t,) = board.retime(time.time() + 601)
    assert t.after.kind == "ended" and not board.states and board.counts() == ""


def test_a_sub_agent_file_is_its_sessions(tmp_path: Path) -> None:
    root = tmp_path / "projects"
    assert session_of(root / "p" / "s.jsonl", root) == root / "p" / "s.jsonl"
    assert session_of(root / "p" / "s" / "subagents" / "agent-1.jsonl", root) == root / "p" / "s.jsonl"
    assert session_of(root / "p" / "s" / "subagents" / "agent-1.meta.json", root) is None
    assert session_of(tmp_path / "elsewhere.jsonl", root) is None


async def test_file_events_name_the_sessions_written(projects: Path) -> None:
    found: list[set[Path]] = []

    async def watch() -> None:
        async for paths in watch_sessions(projects):
            found.append(paths)
            return

    task = asyncio.create_task(watch())
    await asyncio.sleep(0.3)  # the watch is set up
    w = Writer(projects, TOOLS)
    w.upto(3)
    agent = FIXTURES / "captures/projects/-home-ada-src-demo/d7acffbd-7cff-4056-82e8-4364dc8df14a"
    sub = projects / "-home-ada-src-demo" / "d7acffbd-7cff-4056-82e8-4364dc8df14a" / "subagents"
    sub.mkdir(parents=True)
    for f in (agent / "subagents").iterdir():
        (sub / f.name).write_bytes(f.read_bytes())
    await asyncio.wait_for(task, 5)
    assert w.path in found[0]
