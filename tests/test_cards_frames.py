"""Every frame readable (issue 8): sub-agent answers without the CLI's hand-back
frame, task notifications as one line, git and control frames with their
content, failed turns saying why, images with their type, size and dimensions
and a key to open them — each on a real recording."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from cctv.reducer.fold import Session
from cctv.reducer.state import MAIN, NoticeItem, PromptItem, ToolItem, TurnFooterItem
from cctv.reducer.queries import is_error_item
from cctv.viewer.app import CctvApp
from cctv.viewer.headless import run_check
from cctv.viewer.loader import load_path
from cctv.viewer.sources import FileTail
from cctv.widgets.cards import Palette, RenderContext, estimate_height, render_item
from cctv.widgets.transcript import TranscriptView
from conftest import FIXTURES

PUBLIC = FIXTURES / "public" / "claude-code-log"
ASYNC = PUBLIC / "async_agents" / "eb000000-0000-4000-8000-000000000001.jsonl"
DEMO_DISK = FIXTURES / "captures" / "projects" / "-home-ada-src-demo"
HAND_BACK = DEMO_DISK / "d7acffbd-7cff-4056-82e8-4364dc8df14a.jsonl"
QUEUED = DEMO_DISK / "e321c1d0-19a4-4a0d-819a-a0cf937b8a13.jsonl"
IMAGE_SESSION = PUBLIC / "real_projects" / "-Users-dain-workspace-danieldemmel-me-next" / \
    "9e953218-585f-4692-89df-9e0747a31c68.jsonl"
CONSOLE = Console(width=200, color_system="truecolor")


def drawn(item, session: Session, width: int = 120, expanded: bool = False) -> list[str]:
    ctx = RenderContext(session, CONSOLE, Palette())
    return [s.text.rstrip() for s in render_item(item, width, expanded, ctx)]


def items(path: Path, cls=object):
    session = load_path(path).session
    for agent in session.agents.values():
        for item in agent.items:
            if isinstance(item, cls):
                yield session, item


def test_an_on_disk_agent_card_shows_the_answer_not_the_hand_back_frame() -> None:
    session, item = next((s, i) for s, i in items(HAND_BACK, ToolItem) if i.call.name == "Agent")
    rows = drawn(item, session)
    assert "↳ The project has README.md, app.py, notes.txt and utils.py." in "\n".join(rows)
    assert not any("Subagent hand-back" in row or "agentId" in row for row in rows)
    assert len(rows) == estimate_height(item, 120, False, session)


def test_an_async_agent_card_shows_its_task_not_the_launch_boilerplate() -> None:
    session, item = next((s, i) for s, i in items(ASYNC, ToolItem) if i.call.name == "Task")
    rows = drawn(item, session)
    text = "\n".join(rows)
    assert "Async agent launched" not in text
    assert "✓ done · 2 tools · 23,099 tok total · 15s" in text
    assert '↳ Agent "Coverage analysis" completed' in text


def test_a_task_notification_on_disk_reads_as_one_line_with_its_result_on_expand() -> None:
    session, item = next((s, i) for s, i in items(ASYNC, NoticeItem) if i.category == "task")
    assert drawn(item, session)[0] == (
        '· [task] cccc… completed · 23,099 tokens · 2 tools · 15s · '
        'Agent "Coverage analysis" completed …')
    expanded = drawn(item, session, expanded=True)
    assert "  - `relay.py`: 15% → 96%" in expanded
    assert not any("<usage>" in row or "total_tokens" in row for row in expanded)


def test_a_queued_task_notification_is_the_task_line_not_queued_command() -> None:
    notices = [i for _, i in items(QUEUED, NoticeItem)]
    assert [n.text for n in notices if n.category == "task"] == [
        'b0q8… completed · Background command "Run a short job in the background" '
        'completed (exit code 0)']
    assert not any(n.text == "queued command" for n in notices)


def test_a_commit_is_drawn_with_its_branch() -> None:
    path = FIXTURES / "captures" / "stream" / "03_tools.jsonl"
    session, item = next((s, i) for s, i in items(path, NoticeItem) if i.category == "git")
    assert drawn(item, session)[0] == "· [git] commit on main …"
    assert drawn(item, session, expanded=True)[1].strip() == "/home/ada/src/demo"


@pytest.mark.parametrize("name, words", [
    ("permission_request_hook", "✗ failed · max turns reached"),
    ("interrupt", "⏸ interrupted"),  # aborted by the user: interrupted, not failed (#7)
])
def test_a_failed_turns_footer_says_failed_and_why(name: str, words: str) -> None:
    path = FIXTURES / "forge" / "2.1.220" / f"{name}.jsonl"
    session, footer = next(items(path, TurnFooterItem))
    assert words in drawn(footer, session, width=160)[0]
    assert is_error_item(footer)


def _control_error_session(tmp_path: Path) -> Path:
    """mcp_toggle (2.1.220) with its second control response turned into an error."""
    lines = (FIXTURES / "forge" / "2.1.220" / "mcp_toggle.jsonl").read_text().splitlines()
    for i, line in enumerate(lines):
        frame = json.loads(line)
        if frame.get("type") == "control_response" and i > 8:
            request_id = frame["response"]["request_id"]
            frame["response"] = {"subtype": "error", "request_id": request_id,
                                 "error": "MCP server plugin:context7 not found"}
            lines[i] = json.dumps(frame)
            break
    path = tmp_path / "control_error.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


async def test_a_control_error_is_drawn_and_e_reaches_it(tmp_path: Path) -> None:
    app = CctvApp(FileTail(_control_error_session(tmp_path), follow=False), clock=None)
    async with app.run_test(size=(120, 30)) as pilot:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 10
        while app.shown.ended is None and loop.time() < deadline:
            await pilot.pause(0.05)
        view = app.screen.query_one(TranscriptView)
        await pilot.press("g")
        await pilot.press("e")
        await pilot.pause()
        item = view.cursor_item
        assert isinstance(item, NoticeItem) and item.category == "control"
        rows = drawn(item, app.shown.feed.session)
        assert rows == ["✗ [control] control request failed: MCP server plugin:context7 not found …"]


def test_prompt_suggestions_and_tool_summaries_show_their_text() -> None:
    # no recording has them yet; shapes as WIRE.md gives them
    from cctv.reducer.decode import decode_line

    session = Session()
    for n, frame in enumerate([
            {"type": "tool_use_summary", "summary": "Read 3 files", "preceding_tool_use_ids": []},
            {"type": "prompt_suggestion", "suggestion": "run the tests", "uuid": "u1"}], 1):
        session.apply(decode_line(json.dumps(frame).encode(), n))
    rows = [drawn(i, session)[0] for i in session.agents[MAIN].items]
    assert rows == ["· [tool summary] Read 3 files", "· [suggestion] run the tests"]
    assert session.unknown == []


def test_a_prompt_image_shows_type_size_and_dimensions() -> None:
    session, item = next((s, i) for s, i in items(IMAGE_SESSION, PromptItem) if i.images)
    rows = drawn(item, session)
    assert rows[0].startswith("▌ you · turn 11 · 1 image")  # IDE-context prompts are prompts (#7)
    assert "  ▣ image/png · 145.0 KiB · 1002×606 (v: view)" in rows
    assert len(rows) == estimate_height(item, 120, False, session)


async def test_v_writes_the_image_to_the_cache_and_says_where(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("PATH", str(tmp_path / "no-viewer"))  # no xdg-open: say the path
    app = CctvApp(FileTail(IMAGE_SESSION, follow=False), clock=None)
    async with app.run_test(size=(120, 30)) as pilot:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 10
        while app.shown.ended is None and loop.time() < deadline:
            await pilot.pause(0.05)
        view = app.screen.query_one(TranscriptView)
        index = next(i for i, it in enumerate(view.items) if isinstance(it, PromptItem) and it.images)
        view.move_cursor(index)
        await pilot.press("v")
        await pilot.pause()
        files = list((tmp_path / "cache" / "cctv" / "images").iterdir())
        assert len(files) == 1 and files[0].suffix == ".png"
        data = files[0].read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) == 148489
        messages = [n.message for n in app._notifications]
        assert any(str(files[0]) in m and "no xdg-open" in m for m in messages)


def test_no_kind_in_the_recordings_is_unknown() -> None:
    """``cctv check --json`` over every session file of the fixtures knows every kind
    (workflow journals, which are not sessions, left out)."""
    paths = [str(p) for p in sorted(FIXTURES.rglob("*.jsonl")) if p.name != "journal.jsonl"]
    out = io.StringIO()
    run_check(paths, True, out, io.StringIO())
    reports = json.loads(out.getvalue())
    assert len(reports) == len(paths) > 200
    assert {r["path"]: r["unknown_kinds"] for r in reports if r["unknown_kinds"]} == {}


def test_a_system_frame_without_a_rule_shows_its_fields() -> None:
    path = FIXTURES / "forge" / "2.1.220" / "reload_plugins.jsonl"
    session, item = next((s, i) for s, i in items(path, NoticeItem)
                         if i.category == "system/commands_changed")
    assert drawn(item, session)[0] == "· [system/commands_changed] commands: 104 items"
    # code_change_published has no recording yet: whatever its fields, the PR's URL shows
    from cctv.reducer.decode import decode_line

    session = Session()
    session.apply(decode_line(b'{"type":"system","subtype":"code_change_published",'
                              b'"url":"https://github.com/o/r/pull/7","session_id":"s"}', 1))
    notice = session.agents[MAIN].items[-1]
    assert "url: https://github.com/o/r/pull/7" in drawn(notice, session)[0]


@pytest.mark.parametrize("name, path, keys, size, theme", [
    # the async agent's card, and its task line expanded to the agent's result
    ("async_agent", ASYNC, ["g", "c", "j", "j", "enter"], (100, 30), "textual-dark"),
    # a prompt with an image (type, size, dimensions), light theme, 80x24
    ("image_prompt_light", IMAGE_SESSION, [], (80, 24), "textual-light"),
])
def test_snapshots(snap_compare, name: str, path: Path, keys: list[str],
                   size: tuple[int, int], theme: str) -> None:
    app = CctvApp(None, feed=load_path(path), clock=None)
    app.theme = theme

    async def to_image(pilot) -> None:
        view = app.screen.query_one(TranscriptView)
        view.move_cursor(next(i for i, it in enumerate(view.items)
                              if isinstance(it, PromptItem) and it.images))
        await pilot.pause()

    assert snap_compare(app, press=keys, terminal_size=size,
                        run_before=to_image if name == "image_prompt_light" else None)
