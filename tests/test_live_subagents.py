"""A sub-agent that starts while cctv follows its session is picked up live.

Real recordings (the 2.1.328 capture with an on-disk sub-agent) are written to
a temporary projects folder line by line, the way the CLI writes them, while
the real app follows the session under Pilot.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from cctv.reducer.state import MAIN
from cctv.viewer.app import CctvApp
from cctv.viewer.loader import load_path
from cctv.viewer.screens.session import SessionScreen
from cctv.viewer.sources import FileTail
from cctv.widgets.transcript import TranscriptView

from conftest import FIXTURES, wait_for, screen_text

PROJECT = FIXTURES / "captures" / "projects" / "-home-ada-src-demo"
SESSION = "d7acffbd-7cff-4056-82e8-4364dc8df14a"
AGENT_FILE = "agent-acfff52c46df9b7f9"
CALL = "toolu_01POmk2Upx4u34UIjZsjjwy3"
RESULT_LINE = 25  # the Agent call's tool_result in the main file (1-based)


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


async def _run_live(tmp_path: Path, agent_dir: Path, *, meta: dict | None,
                    start_empty: bool = False) -> None:
    """Open the session before the sub-agent exists; then write it like the CLI does."""
    project = tmp_path / "proj"
    project.mkdir()
    main_lines = _lines(PROJECT / f"{SESSION}.jsonl")
    agent_lines = _lines(PROJECT / SESSION / "subagents" / f"{AGENT_FILE}.jsonl")
    main_path = project / f"{SESSION}.jsonl"
    head = b"".join(main_lines[:RESULT_LINE - 1])  # the call, not its result
    main_path.write_bytes(b"" if start_empty else head)
    expected = load_path(PROJECT / f"{SESSION}.jsonl")
    want_items = len(expected.session.agents[CALL].items)

    app = CctvApp(FileTail(main_path), clock=None)
    async with app.run_test(size=(120, 36)) as pilot:
        if start_empty:  # a session cctv opened before its first line was written
            await wait_for(pilot, lambda: app.shown.source_state.empty)
            main_path.write_bytes(head)
        await wait_for(pilot, lambda: CALL in app.shown.feed.session.calls)
        await pilot.pause(0.3)
        assert CALL not in app.shown.feed.session.agents or not app.shown.feed.session.agents[CALL].items
        # the sub-agent starts: its folder and first lines appear (no meta file yet)
        target = project / SESSION / agent_dir
        target.mkdir(parents=True)
        with open(target / f"{AGENT_FILE}.jsonl", "wb", buffering=0) as fh:
            fh.write(b"".join(agent_lines[:3]))
            await wait_for(pilot, lambda: CALL in app.shown.feed.session.agents
                           and app.shown.feed.session.agents[CALL].items)
            if meta is not None:
                (target / f"{AGENT_FILE}.meta.json").write_text(json.dumps(meta))
            for line in agent_lines[3:]:
                fh.write(line)
                await pilot.pause(0.01)
        session = app.shown.feed.session
        await wait_for(pilot, lambda: len(session.agents[CALL].items) == want_items)
        # still running as far as the main file knows, and already showing its tools
        call = session.calls[CALL]
        assert call.subagent == CALL and call.result is None
        assert not [a for a in session.agents if a.startswith("agent-")]  # no orphan copy
        # its card says so: running, with the tools it has used so far (not "pending")
        await wait_for(pilot, lambda: "◐ running · 2 tools · last Read" in screen_text(app))
        assert "pending" not in screen_text(app)
        with open(main_path, "ab") as fh:
            fh.write(b"".join(main_lines[RESULT_LINE - 1:]))
        await wait_for(pilot, lambda: session.calls[CALL].result is not None)
        assert len(session.agents[CALL].items) == want_items
        await wait_for(pilot, lambda: "✓ done · 2 tools · last Read" in screen_text(app))
        # enter on the card shows the sub-agent's transcript
        view = app.screen.query_one(TranscriptView)
        view.move_cursor(call.item.index)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen)
                       and app.screen.agent_id == CALL)
        await pilot.pause(0.2)
        text = screen_text(app)
        assert "Bash" in text and "Read" in text


async def test_a_subagent_started_after_opening_is_folded_live_from_its_first_line(tmp_path: Path) -> None:
    await _run_live(tmp_path, Path("subagents"), meta=None)


async def test_a_nested_workflow_agent_with_a_late_meta_file_is_folded_live(tmp_path: Path) -> None:
    meta = json.loads((PROJECT / SESSION / "subagents" / f"{AGENT_FILE}.meta.json").read_text())
    await _run_live(tmp_path, Path("subagents") / "workflows" / "run-1", meta=meta)


async def test_an_existing_subagent_still_opens(tmp_path: Path) -> None:
    dst = tmp_path / "proj"
    dst.mkdir()
    shutil.copy(PROJECT / f"{SESSION}.jsonl", dst)
    shutil.copytree(PROJECT / SESSION, dst / SESSION)
    app = CctvApp(FileTail(dst / f"{SESSION}.jsonl"), clock=None)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for(pilot, lambda: CALL in app.shown.feed.session.agents
                       and app.shown.feed.session.agents[CALL].items)
        expected = load_path(PROJECT / f"{SESSION}.jsonl")
        await wait_for(pilot, lambda: len(app.shown.feed.session.agents[CALL].items)
                       == len(expected.session.agents[CALL].items))
        assert app.shown.feed.session.agents[CALL].agent_file_id == AGENT_FILE.removeprefix("agent-")
        assert MAIN in app.shown.feed.session.agents


async def test_a_session_that_began_empty_still_follows_its_subagents(tmp_path: Path) -> None:
    await _run_live(tmp_path, Path("subagents"), meta=None, start_empty=True)
