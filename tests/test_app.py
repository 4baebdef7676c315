"""The whole app, driven like a user: live sources, drill-down, panels, raw view.

Each test runs the real :class:`viewer.app.CctvApp` headless with a real source
(a followed temporary file, a pipe, a subprocess) fed from the reference
recordings, and checks what is on screen or in the state the screen draws.
"""

from __future__ import annotations

import os
import shutil
import sys
import textwrap
from pathlib import Path

import pytest

from cctv.reducer.state import MAIN
from cctv.viewer.app import CctvApp
from cctv.viewer.screens.session import SessionScreen
from cctv.viewer.sources import CommandSource, FileTail, StreamSource
from cctv.widgets.status_bar import StatusBar
from cctv.widgets.transcript import TranscriptView

from conftest import FIXTURES, wait_for, screen_text

REF = FIXTURES
STREAM = REF / "captures" / "stream"
PROJECT = REF / "captures" / "projects" / "-home-ada-src-demo"
SUBAGENT_SESSION = "d7acffbd-7cff-4056-82e8-4364dc8df14a"


def status_text(app: CctvApp) -> str:
    return app.screen.query_one(StatusBar).text


async def test_follows_a_growing_file_and_pauses_when_scrolled_up(tmp_path: Path) -> None:
    lines = (STREAM / "03_tools.jsonl").read_bytes().splitlines(keepends=True)
    path = tmp_path / "live.jsonl"
    path.write_bytes(b"".join(lines[:10]))
    app = CctvApp(FileTail(path), clock=None)
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for(pilot, lambda: app.shown.feed.session.lines == 10)
        assert "follow" in status_text(app)
        # the CLI appends the rest, a partial line first: nothing may be lost or doubled
        with open(path, "ab") as fh:
            rest = b"".join(lines[10:])
            fh.write(rest[:50])
            fh.flush()
            await pilot.pause(0.3)
            assert app.shown.feed.session.lines == 10  # the partial line is held back
            fh.write(rest[50:])
        await wait_for(pilot, lambda: app.shown.feed.session.lines == len(lines))
        assert [e.line_no for e in app.shown.feed.entries] == list(range(1, len(lines) + 1))
        view = app.screen.query_one(TranscriptView)
        await wait_for(pilot, lambda: view.following and view.scroll_y == view.max_scroll_y)
        # the session's final answer is on screen: the view followed the end
        assert "turn 1" in screen_text(app)
        await pilot.press("g")
        await pilot.pause()
        assert not view.following
        app._flush_panels()
        assert "paused" in status_text(app)
        await pilot.press("G")
        await pilot.pause()
        assert view.following


async def test_a_file_written_over_with_another_session_keeps_both(tmp_path: Path) -> None:
    """Emptied and written with other lines (a rotation by copy and truncate,
    as far as a reader can tell): the turns shown stay, the new ones follow."""
    path = tmp_path / "s.jsonl"
    shutil.copy(STREAM / "11_multi_turn.jsonl", path)
    app = CctvApp(FileTail(path), clock=None)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: len(app.shown.feed.session.turns) == 2)
        path.write_bytes((STREAM / "01_simple_text.jsonl").read_bytes())
        await wait_for(pilot, lambda: len(app.shown.feed.session.turns) == 3)
        assert "8e4b2dbb-330b-4d03-a3ef-8b4c8ce07f1e" in app.shown.feed.session.session_ids


async def test_stdin_pipe_source() -> None:
    read_fd, write_fd = os.pipe()
    reader = os.fdopen(read_fd, "rb", buffering=0)
    app = CctvApp(StreamSource(reader, "stdin", close_reader=True), clock=None)
    async with app.run_test(size=(140, 30)) as pilot:
        os.write(write_fd, (STREAM / "05_subagent.jsonl").read_bytes())
        os.close(write_fd)
        await wait_for(pilot, lambda: app.shown.ended is not None)
        assert app.shown.ended == "end of input"
        session = app.shown.feed.session
        assert len(session.turns) == 1 and session.turns[0].closed
        assert "stdin" in status_text(app)
        assert "ended" in status_text(app)


SCRIPT = textwrap.dedent("""
    import sys, time
    lines = open(sys.argv[1], "rb").read().splitlines(keepends=True)
    for i, line in enumerate(lines):
        sys.stdout.buffer.write(line)
        sys.stdout.flush()
        if i % 5 == 0:
            time.sleep(0.02)
    sys.stderr.write("warning: scripted run\\n")
    sys.exit(3)
""")


async def test_subprocess_source_shows_exit_status_and_stderr(tmp_path: Path) -> None:
    script = tmp_path / "emit.py"
    script.write_text(SCRIPT)
    source = CommandSource([sys.executable, str(script), str(STREAM / "06_background_bash.jsonl")])
    app = CctvApp(source, clock=None)
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for(pilot, lambda: app.shown.ended is not None)
        assert app.shown.ended == "exited with status 3"
        app._flush_panels()
        assert "exited with status 3" in status_text(app)
        assert len(app.shown.feed.session.tasks) == 2
        await pilot.press("s")
        await pilot.pause()
        from cctv.viewer.screens.stderr import StderrScreen

        assert isinstance(app.screen, StderrScreen)
        assert "warning: scripted run" in "\n".join(app.screen.buffer.lines)


async def test_malformed_lines_are_rows_with_their_line_numbers(tmp_path: Path) -> None:
    lines = (STREAM / "01_simple_text.jsonl").read_bytes().splitlines(keepends=True)
    bad = lines[:1] + [b'{"type":"assistant",\n', b"\xff\xfe not utf-8\n", b'{"type":"brand_new_kind"}\n'] + lines[1:]
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b"".join(bad))
    app = CctvApp(FileTail(path, follow=False), clock=None)
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for(pilot, lambda: app.shown.ended is not None)
        text = screen_text(app)
        assert "line 2" in text and "line 3" in text and "line 4" in text
        assert "brand_new_kind" in text
        # the rest of the session still renders: the reply and its turn footer
        assert len(app.shown.feed.session.turns) == 1 and app.shown.feed.session.turns[0].closed


async def test_on_disk_session_opens_its_subagent(tmp_path: Path) -> None:
    # a copy, so following it never touches the shared reference
    dst = tmp_path / "proj"
    dst.mkdir()
    shutil.copy(PROJECT / f"{SUBAGENT_SESSION}.jsonl", dst)
    shutil.copytree(PROJECT / SUBAGENT_SESSION, dst / SUBAGENT_SESSION)
    app = CctvApp(FileTail(dst / f"{SUBAGENT_SESSION}.jsonl"), clock=None)
    async with app.run_test(size=(120, 36)) as pilot:
        session = app.shown.feed.session
        await wait_for(pilot, lambda: any(
            a.id != MAIN and a.items for a in session.agents.values()))
        agent_id = next(a.id for a in session.agents.values() if a.id != MAIN)
        view = app.screen.query_one(TranscriptView)
        # move the cursor to the Agent call and open it
        await pilot.press("g")
        for _ in range(20):
            item = view.cursor_item
            if item is not None and getattr(getattr(item, "call", None), "subagent", None):
                break
            await pilot.press("c")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen)
                       and app.screen.agent_id == agent_id)
        sub_text = screen_text(app)
        assert "Bash" in sub_text and "Read" in sub_text
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen.agent_id == MAIN


async def test_tasks_panel_raw_view_and_help() -> None:
    from cctv.reducer.feed import read_file_lines
    from cctv.viewer.screens.help import HelpScreen
    from cctv.viewer.screens.raw import RawScreen

    app = CctvApp(None, clock=None)
    async with app.run_test(size=(140, 40)) as pilot:
        for batch in read_file_lines(STREAM / "06_background_bash.jsonl"):
            app.fold_now(batch)
        await pilot.pause()
        await pilot.press("t")
        await pilot.pause()
        assert app.screen.show_tasks
        panel_text = "\n".join(str(r) for r in app.screen.query_one("#tasks").rows)
        assert "background" in panel_text.lower() or "bash" in panel_text.lower()
        await pilot.press("g", "r")
        await pilot.pause()
        assert isinstance(app.screen, RawScreen)
        # line 1 is system/init, which draws no item: the first item is line 2's reply
        assert app.screen.title_text.startswith("line 2 · offset 2,853 · assistant")
        await pilot.press("escape", "question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)


@pytest.mark.parametrize(
    ("name", "keys", "size", "theme"),
    [
        ("demo", [], (120, 36), "textual-dark"),
        ("demo_light", [], (120, 36), "textual-light"),
        ("tools_80x24", [], (80, 24), "textual-dark"),
        ("tasks_panel", ["t"], (140, 36), "textual-dark"),
        ("compaction", [], (120, 36), "textual-dark"),
        ("hooks", ["g"], (120, 36), "textual-dark"),
        ("on_disk_subagent", ["g", "c", "enter"], (120, 36), "textual-dark"),
        ("malformed", ["g"], (100, 24), "textual-dark"),
    ],
)
def test_snapshots(snap_compare, tmp_path: Path, name: str, keys: list[str],
                   size: tuple[int, int], theme: str) -> None:
    from cctv.viewer.paths import demo_path
    from cctv.viewer.loader import load_path

    bad = tmp_path / "bad.jsonl"
    good = (STREAM / "01_simple_text.jsonl").read_bytes().splitlines(keepends=True)
    bad.write_bytes(b"".join(good[:1] + [b'{"type":"assistant",\n', b"\xff\xfe not utf-8\n",
                                          b'{"type":"brand_new_kind"}\n'] + good[1:]))

    path = {
        "demo": demo_path(),
        "demo_light": demo_path(),
        "tools_80x24": STREAM / "03_tools.jsonl",
        "tasks_panel": STREAM / "06_background_bash.jsonl",
        "compaction": STREAM / "10_compact_manual.jsonl",
        "hooks": STREAM / "07_hooks.jsonl",
        "on_disk_subagent": PROJECT / f"{SUBAGENT_SESSION}.jsonl",
        "malformed": bad,
    }[name]
    app = CctvApp(None, feed=load_path(path), clock=None)
    app.theme = theme
    assert snap_compare(app, press=keys, terminal_size=size)


async def test_a_giant_reply_is_cut_with_a_hint_not_laid_out_whole(tmp_path: Path) -> None:
    # a 6 MB reply (the CLI writes such lines; USERS.md cites 12.8 M-char ones):
    # Markdown for all of it at every redraw took over a minute at 15 MB
    import json

    lines = (STREAM / "01_simple_text.jsonl").read_text().splitlines()
    frame = json.loads(lines[1])
    frame["message"]["content"] = [{"type": "text", "text": "word " * 1_200_000}]
    lines[1] = json.dumps(frame)
    path = tmp_path / "giant.jsonl"
    path.write_text("\n".join(lines) + "\n")
    app = CctvApp(FileTail(path, follow=False), clock=None)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.shown.ended is not None, timeout=20)
        await pilot.press("g")
        await pilot.pause()
        view = app.screen.query_one(TranscriptView)
        rows = [view.render_line(y).text for y in range(view.virtual_size.height)]
        assert any("more characters (enter: show all as plain text)" in row for row in rows)
        assert len(rows) < 2000  # 64 KB of Markdown, not 6 MB


async def test_a_pasted_million_line_prompt_expands_to_a_capped_body(tmp_path: Path) -> None:
    import json

    from cctv.widgets.cards import EXPAND_LINES

    lines = (STREAM / "01_simple_text.jsonl").read_text().splitlines()
    prompt = {"type": "user", "message": {"role": "user", "content": "pasted line\n" * 1_000_000},
              "parent_tool_use_id": None, "session_id": "s", "uuid": "u-1"}
    lines.insert(1, json.dumps(prompt))
    path = tmp_path / "paste.jsonl"
    path.write_text("\n".join(lines) + "\n")
    app = CctvApp(FileTail(path, follow=False), clock=None)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.shown.ended is not None, timeout=20)
        view = app.screen.query_one(TranscriptView)
        await pilot.press("g")  # the prompt is the first item
        await pilot.press("enter")
        await pilot.pause()
        rows = [view.render_line(y).text for y in range(min(view.virtual_size.height, 6000))]
        assert sum("pasted line" in row for row in rows) == EXPAND_LINES
        assert any(f"{1_000_000 - EXPAND_LINES:,} more lines · " in row and "(m: more · o: pager)"
                   in row for row in rows)


@pytest.mark.parametrize("age_days, says", [(400, "idle"), (0, "requesting")])
async def test_a_session_that_stopped_growing_long_ago_is_not_requesting(
        tmp_path: Path, age_days: int, says: str) -> None:
    """This CLI (mid-2025) wrote no stop reason: its last row, the model's
    answer, reads as mid-turn. Written a year ago, the session is over (idle);
    written just now, the answer may go on (requesting)."""
    import time

    src = (FIXTURES / "public" / "claude-code-log" / "real_projects"
           / "-Users-dain-workspace-claude-code-log-sample"
           / "b45ad5d8-81fb-4bcb-baba-19d9f503d731.jsonl")
    path = tmp_path / src.name
    shutil.copyfile(src, path)
    then = time.time() - age_days * 86400
    os.utime(path, (then, then))
    app = CctvApp(FileTail(path), clock=None)
    async with app.run_test(size=(160, 30)) as pilot:
        await wait_for(pilot, lambda: app.shown.live and "follow" in status_text(app))
        await pilot.pause(0.1)
        app.screen.refresh_panels()
        assert status_text(app).split(" │ ")[0].endswith(says)
        assert app.shown.feed.session.activity.kind == "requesting"  # the fold's own word is kept
