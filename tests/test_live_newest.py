"""cctv tail notices a session that starts after the one it follows.

A temporary projects folder holds copies of the real sessions; a new session
file is written while the real app follows the older one under Pilot.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from cctv.viewer.app import CctvApp
from cctv.viewer.launch import build_source, newest_watch
from cctv.viewer.newest import NewestSession
from cctv.viewer.sources import FileTail

from conftest import FIXTURES, wait_for

PROJECTS = FIXTURES / "captures" / "projects"
PROJECT = PROJECTS / "-home-ada-src-demo"
OLD = "142bb34b-89e4-4e11-b4ed-b3397e45f6d4"
NEW = "d7acffbd-7cff-4056-82e8-4364dc8df14a"


def _projects(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "projects"
    (root / PROJECT.name).mkdir(parents=True)
    old = root / PROJECT.name / f"{OLD}.jsonl"
    shutil.copy(PROJECT / f"{OLD}.jsonl", old)
    return root, old


def test_newest_session_reports_only_files_created_after_it_began(tmp_path: Path) -> None:
    root, old = _projects(tmp_path)
    watch = NewestSession(root, old)
    assert watch.poll() is None
    with open(old, "ab") as fh:  # the followed one growing is not news
        fh.write(b"\n")
    assert watch.poll() is None
    other = root / "-home-ada-src-other"
    other.mkdir()
    (other / "agent-x.jsonl").write_text("{}\n")  # a sub-agent file is not a session
    new = other / f"{NEW}.jsonl"
    shutil.copy(PROJECT / f"{NEW}.jsonl", new)
    assert watch.poll() == new
    assert watch.poll() is None  # reported once


async def test_tail_offers_the_newer_session_and_l_switches_to_it(tmp_path: Path) -> None:
    root, old = _projects(tmp_path)
    app = CctvApp(FileTail(old), clock=None, newest=NewestSession(root, old))
    app.NEWEST_POLL_S = 0.2
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for(pilot, lambda: app.shown.feed.session.session_id == OLD)
        new = root / PROJECT.name / f"{NEW}.jsonl"
        shutil.copytree(PROJECT / NEW, root / PROJECT.name / NEW)
        shutil.copy(PROJECT / f"{NEW}.jsonl", new)
        await wait_for(pilot, lambda: app.offered == new)
        await wait_for(pilot, lambda: any(  # a notification is posted, then shown
            "a newer session started" in n.message and NEW in n.message and "press L" in n.message
            for n in app._notifications))
        assert app.shown.feed.session.session_id == OLD  # only offered
        await pilot.press("L")
        await wait_for(pilot, lambda: app.shown.feed.session.session_id == NEW)
        assert app.shown.source.path == new and NEW in app.shown.label
        # its sub-agent file is followed too
        await wait_for(pilot, lambda: any(a.items for k, a in app.shown.feed.session.agents.items() if k))


async def test_follow_newest_switches_by_itself(tmp_path: Path) -> None:
    root, old = _projects(tmp_path)
    app = CctvApp(FileTail(old), clock=None, newest=NewestSession(root, old), follow_newest=True)
    app.NEWEST_POLL_S = 0.2
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for(pilot, lambda: app.shown.feed.session.session_id == OLD)
        new = root / PROJECT.name / f"{NEW}.jsonl"
        shutil.copy(PROJECT / f"{NEW}.jsonl", new)
        await wait_for(pilot, lambda: app.shown.feed.session.session_id == NEW)
        assert app.offered is None


def test_tail_words(tmp_path: Path, monkeypatch) -> None:
    root = tmp_path / "cfg"
    shutil.copytree(PROJECTS, root / "projects")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(root))
    source = build_source(["tail", "--follow-newest"])
    assert isinstance(source, FileTail) and source.follow
    assert isinstance(newest_watch(["tail", "--follow-newest"], source), NewestSession)
    later = tmp_path / "not" / "yet.jsonl"
    named = build_source(["tail", str(later)])  # waits for a file that does not exist yet
    assert isinstance(named, FileTail) and named.follow and named.path == later
    assert newest_watch(["tail", str(later)], named) is None
    waited = build_source(["--wait", str(later)])
    assert isinstance(waited, FileTail) and waited.follow
    assert "usage: cctv --wait PATH" in build_source(["--wait"])
    assert "--follow-newest is for cctv tail without a path" in build_source(
        ["tail", str(later), "--follow-newest"])
    assert os.path.basename(str(source.path)).endswith(".jsonl")


async def test_tail_says_when_another_session_starts_needing_you_and_j_switches(tmp_path: Path) -> None:
    from cctv.widgets.status_bar import StatusBar

    root, old = _projects(tmp_path)
    other = root / PROJECT.name / "f70c6abd-bc92-44a7-80e8-76abec8cb9d7.jsonl"
    lines = (PROJECT / other.name).read_bytes().splitlines(True)
    bash = next(i for i, line in enumerate(lines, 1) if b'"command":"python3 test_utils.py' in line)
    other.write_bytes(b"".join(lines[:bash]))  # at work: a Bash call
    app = CctvApp(FileTail(old), clock=None, newest=NewestSession(root, old))
    async with app.run_test(size=(160, 30)) as pilot:
        await wait_for(pilot, lambda: app.board is not None and str(other) in app.board.states)
        assert app.board.states[str(other)].kind == "working"
        bar = app.screen.query_one(StatusBar)
        assert "J to switch" not in bar.text
        with open(other, "ab") as fh:  # the turn ends: it needs you
            fh.writelines(lines[bash:])
        await wait_for(pilot, lambda: "needs you · J to switch" in bar.text)
        assert "◆ Make the greeting in utils.py" in bar.text
        await pilot.press("J")
        await wait_for(pilot, lambda: app.shown.feed.session.session_id == other.stem)
        await wait_for(pilot, lambda: "J to switch" not in app.screen.query_one(StatusBar).text)
