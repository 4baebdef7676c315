"""TranscriptView: what a user sees for real recordings, how the keys move, follow
mode, search, and that 100k items open fast."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from rich.console import Console
from textual import events
from textual.app import App, ComposeResult

from cctv.reducer.feed import Feed, read_file_lines
from cctv.reducer.lines import RawLine
from cctv.reducer.fold import Session
from cctv.reducer.state import (
    MAIN,
    CompactionItem,
    NoticeItem,
    TextItem,
    ToolCall,
    Turn,
    TurnFooterItem,
    HookItem,
    Item,
    ProblemItem,
    PromptItem,
    ThinkingItem,
    ToolItem,
)
from cctv.viewer.loader import load_path
from cctv.widgets.cards import Palette, RenderContext, estimate_height, margin_top, render_item
from cctv.widgets.transcript import TranscriptView
from conftest import FIXTURES

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = FIXTURES
STREAM = REFERENCE / "captures" / "stream"
DEMO = ROOT / "viewer" / "demo" / "demo_session.jsonl"
SUBAGENT_ID = "toolu_01POmk2Upx4u34UIjZsjjwy3"


class TranscriptApp(App[None]):
    """One TranscriptView over a session; records the messages it posts."""

    def __init__(self, session: Session, agent_id: str = MAIN, theme: str | None = None) -> None:
        super().__init__()
        self.session = session
        self.agent_id = agent_id
        self.opened: list[str] = []
        self.follow_changes: list[bool] = []
        self.cursor_moves: list[Item | None] = []
        if theme:
            self.theme = theme

    def compose(self) -> ComposeResult:
        yield TranscriptView(self.session, self.agent_id, id="transcript")

    def on_transcript_view_open_agent(self, message: TranscriptView.OpenAgent) -> None:
        assert message.control is self.query_one(TranscriptView)
        self.opened.append(message.agent_id)

    def on_transcript_view_follow_changed(self, message: TranscriptView.FollowChanged) -> None:
        self.follow_changes.append(message.following)

    def on_transcript_view_cursor_moved(self, message: TranscriptView.CursorMoved) -> None:
        self.cursor_moves.append(message.item)


def rows(view: TranscriptView) -> list[str]:
    """The text of every row on screen."""
    return [view.render_line(y).text.rstrip() for y in range(view.scrollable_content_region.height)]


def screen(view: TranscriptView) -> str:
    return "\n".join(rows(view))


def row_with(view: TranscriptView, needle: str) -> int:
    for y, text in enumerate(rows(view)):
        if needle in text:
            return y
    raise AssertionError(f"{needle!r} not on screen:\n{screen(view)}")


def colour_of(view: TranscriptView, needle: str):
    """The foreground colour of the segment that holds ``needle``."""
    for y in range(view.scrollable_content_region.height):
        for seg in view.render_line(y):
            if needle in seg.text:
                return seg.style.color if seg.style else None
    raise AssertionError(f"{needle!r} not on screen")


def index_of(view: TranscriptView, predicate) -> int:
    return next(i for i, item in enumerate(view.items) if predicate(item))


# --- what is drawn ---------------------------------------------------------------------------


async def test_tools_show_command_output_diff_and_failed_read() -> None:
    app = TranscriptApp(load_path(STREAM / "03_tools.jsonl").session)
    async with app.run_test(size=(100, 120)) as pilot:
        await pilot.pause()
        view = app.query_one(TranscriptView)
        text = screen(view)
        # Bash: the command and its output (stdout from the structured result)
        assert "● Bash  python3 test_utils.py && python3 app.py" in text
        assert "$ python3 test_utils.py && python3 app.py" in text
        assert "2 passed" in text and "Hello, world!" in text
        # the failing Bash: exit code and stderr, marked failed
        assert "Exit code 3" in text and "boom" in text
        # Edit: the diff with - and + lines
        assert "- def greet(name: str) -> str:" in text
        assert '+ def greet(name: str, greeting: str = "Hello") -> str:' in text
        assert '+     return f"{greeting}, {name}!"' in text
        # Read: path and line range; the failed Read in the error colour
        assert "● Read  /home/ada/src/demo/utils.py" in text
        assert "lines 1–4 of 4" in text
        failed = rows(view)[row_with(view, "missing.py")]
        assert "✗ failed" in failed
        error = view.get_component_rich_style("transcript--error").color
        assert colour_of(view, "File does not exist") == error
        # TodoWrite as a checklist, Write folded with a hint
        assert "☑ Find the greeting code" in text and "◐ Finding the greeting code" in text
        assert "more lines (enter to expand)" in text
        # the turn footer
        assert re.search(r"── turn 1 · 0\.7s \(api 0\.4s\) · \$0\.0654 · in 12k out 868", text)


async def test_subagent_card_shows_progress_and_enter_opens_it() -> None:
    session = load_path(STREAM / "05_subagent.jsonl").session
    app = TranscriptApp(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        view = app.query_one(TranscriptView)
        text = screen(view)
        assert "● Agent  Survey the demo project" in text
        assert "general-purpose · Survey the demo project" in text
        assert "✓ done · 2 tools · last Read" in text
        assert "1,234 tok total" in text
        assert "enter: open sub-agent" in text
        await pilot.press("C")  # previous tool call: the Agent card
        item = view.cursor_item
        assert isinstance(item, ToolItem) and item.call.name == "Agent"
        await pilot.press("enter")
        await pilot.pause()
        assert app.opened == [SUBAGENT_ID] == [item.call.subagent]
    # the sub-agent's own transcript
    app = TranscriptApp(session, SUBAGENT_ID)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        text = screen(app.query_one(TranscriptView))
        assert "▌ prompt" in text
        assert "$ ls -1" in text and "notes.txt" in text
        assert "● Read  /home/ada/src/demo/utils.py" in text


async def test_compaction_divider_expands_to_summary() -> None:
    app = TranscriptApp(load_path(STREAM / "10_compact_manual.jsonl").session)
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.pause()
        view = app.query_one(TranscriptView)
        divider = rows(view)[row_with(view, "compacted (manual)")]
        assert "──── compacted (manual) 1,225 → 2,787 tokens · 0.1s ────" in divider
        assert "continued from a previous conversation" not in screen(view)
        view.move_cursor(index_of(view, lambda i: isinstance(i, CompactionItem)))
        await pilot.press("enter")
        await pilot.pause()
        assert "continued from a previous conversation" in screen(view)
        await pilot.press("space")
        await pilot.pause()
        assert "continued from a previous conversation" not in screen(view)


async def test_hook_chips_and_expansion() -> None:
    app = TranscriptApp(load_path(STREAM / "07_hooks.jsonl").session)
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.pause()
        view = app.query_one(TranscriptView)
        text = screen(view)
        assert "⚓ SessionStart:startup ✓ exit 0" in text
        assert "⚓ PreToolUse:Bash ✓ exit 0" in text
        assert "⚓ Stop ✗ exit 2" in text
        stop = index_of(view, lambda i: isinstance(i, HookItem) and i.hook.exit_code == 2)
        view.move_cursor(stop)
        assert "pre-tool tick 3" not in screen(view)
        await pilot.press("enter")
        await pilot.pause()
        y = row_with(view, "⚓ Stop ✗ exit 2")
        assert "stop hook: please also mention the README" in rows(view)[y + 1]
        # e finds the failed hook as an error
        await pilot.press("g", "e")
        assert view.cursor_index == stop


async def test_malformed_lines_are_rows_with_line_numbers(tmp_path: Path) -> None:
    good = (STREAM / "01_simple_text.jsonl").read_bytes().splitlines()
    bad = [b"this is not json", b'{"type":"foo_bar","x":1}', b'{"type":"assistant",']
    path = tmp_path / "broken.jsonl"
    path.write_bytes(b"\n".join([good[0], bad[0], *good[1:3], bad[1], bad[2], *good[3:]]) + b"\n")
    app = TranscriptApp(load_path(path).session)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        view = app.query_one(TranscriptView)
        text = screen(view)
        assert "⚠ line 2: invalid JSON" in text
        assert "? line 5: unknown frame kind 'foo_bar'" in text
        assert "⚠ line 6: invalid JSON: truncated" in text
        warning = view.get_component_rich_style("transcript--warning").color
        assert colour_of(view, "line 2: invalid JSON") == warning
        problems = [i for i, item in enumerate(view.items) if isinstance(item, ProblemItem)]
        assert len(problems) == 3
        # e / E visit exactly the problem rows
        view.move_cursor(0)
        visited = [0] if view.cursor_index in problems else []
        for _ in range(4):
            await pilot.press("e")
            if view.cursor_index not in visited:
                visited.append(view.cursor_index)
        assert visited == problems
        await pilot.press("E")
        assert view.cursor_index == problems[1]


async def test_thinking_collapsed_with_tokens_and_expands() -> None:
    app = TranscriptApp(load_path(STREAM / "04_thinking.jsonl").session)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        view = app.query_one(TranscriptView)
        assert "✻ thinking · 33 tok" in screen(view)
        assert "consider a docstring" not in screen(view)
        await pilot.press("g")
        assert view.cursor_index == 0
        await pilot.press("enter")
        await pilot.pause()
        assert "consider a docstring" in screen(view)


# --- keys ------------------------------------------------------------------------------------


async def test_cursor_moves_and_jumps() -> None:
    session = load_path(DEMO).session
    app = TranscriptApp(session)
    async with app.run_test(size=(100, 24)) as pilot:
        await pilot.pause()
        view = app.query_one(TranscriptView)
        items = view.items
        assert view.cursor_index == len(items) - 1  # starts at the end, following
        await pilot.press("g")
        assert view.cursor_index == 0 and view.scroll_y == 0
        await pilot.press("j", "j", "down")
        assert view.cursor_index == 3
        await pilot.press("k")
        assert view.cursor_index == 2
        # turns: every prompt in order
        prompts = [i for i, item in enumerate(items) if isinstance(item, PromptItem)]
        assert len(prompts) == 7
        await pilot.press("g")
        seen = []
        for _ in prompts:
            await pilot.press("right_square_bracket")
            seen.append(view.cursor_index)
        assert seen == prompts
        await pilot.press("left_square_bracket")
        assert view.cursor_index == prompts[-2]
        # tool calls
        calls = [i for i, item in enumerate(items) if isinstance(item, ToolItem)]
        await pilot.press("g", "c")
        assert view.cursor_index == calls[0]
        await pilot.press("c", "c")
        assert view.cursor_index == calls[2]
        await pilot.press("C")
        assert view.cursor_index == calls[1]
        # the cursor stays on screen as it moves
        await pilot.press("G")
        assert view.following and view.cursor_index == len(items) - 1
        for _ in range(25):
            await pilot.press("k")
        await pilot.pause()
        start = view._index.start(view.cursor_index) + margin_top(view.cursor_item)
        assert view.scroll_y <= start < view.scroll_y + view.scrollable_content_region.height
        assert not view.following
        # page keys move the view and the cursor
        await pilot.press("g", "pagedown")
        await pilot.pause()
        assert view.scroll_y > 0 and view.cursor_index > 0
        await pilot.press("pageup")
        await pilot.pause()
        assert view.scroll_y == 0
        assert app.cursor_moves and app.cursor_moves[-1] is view.cursor_item


async def test_search_highlights_and_n_N_cycle() -> None:
    app = TranscriptApp(load_path(DEMO).session)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        view = app.query_one(TranscriptView)
        count = view.search("HELLO from bash")  # case-insensitive
        matches = [i for i, item in enumerate(view.items)
                   if "hello from bash" in (getattr(item, "text", "") or "").lower()
                   or (isinstance(item, ToolItem) and item.call.name == "Bash"
                       and "hello from bash" in str(item.call.input).lower())]
        assert count == len(view._search.matches) >= 2
        assert set(matches) <= set(view._search.matches)
        first = view.cursor_index
        assert first in view._search.matches
        # n steps through the matching rows of an item, then on to the next item
        rows_in_first = len(view._match_rows(first))
        for _ in range(rows_in_first):
            await pilot.press("n")
        second = view.cursor_index
        assert second != first and second in view._search.matches
        await pilot.press("N")
        assert view.cursor_index == first and view.match_row == view._match_rows(first)[-1]
        # n wraps around: every matching row of every item once, then the first again
        await pilot.press("n")
        stops = {(view.cursor_index, view.match_row)}
        for _ in range(200):
            await pilot.press("n")
            if (view.cursor_index, view.match_row) in stops:
                break
            stops.add((view.cursor_index, view.match_row))
        assert {i for i, _row in stops} == set(view._search.matches)
        # a match off the cursor is marked in the gutter
        await pilot.pause()
        other = next(i for i in view._search.matches if i != view.cursor_index)
        view.move_cursor(other)
        await pilot.pause()
        marked = [y for y in range(view.scrollable_content_region.height)
                  if view.render_line(y).text.startswith("▌")]
        assert len(marked) > len(view._strips(other))  # the cursor item and another match
        assert view.search("no such text anywhere") == 0
        assert not view.search_next()
        assert view.search("") == 0 and view._search.matches == []


def test_every_message_carries_its_view_as_control() -> None:
    """One base for the transcript's messages: each has the view that sent it
    as ``control`` (what ``@on(..., selector)`` matches), and keeps its name."""
    from cctv.reducer.filters import ViewFilter

    view = TranscriptView(Session(), id="transcript")
    item = TextItem(MAIN, 1, 0, text="hi", message_id="m1")
    messages = [TranscriptView.OpenAgent(view, "agent"),
                TranscriptView.OpenText(view, item, editor=True),
                TranscriptView.ViewImages(view, item), TranscriptView.FollowChanged(view, False),
                TranscriptView.CursorMoved(view, None), TranscriptView.FilterChanged(view, ViewFilter())]
    for message in messages:
        assert isinstance(message, TranscriptView.TranscriptMessage)
        assert message.control is view and message.transcript is view
    assert [type(m).handler_name for m in messages] == [
        "on_transcript_view_open_agent", "on_transcript_view_open_text",
        "on_transcript_view_view_images", "on_transcript_view_follow_changed",
        "on_transcript_view_cursor_moved", "on_transcript_view_filter_changed"]


async def test_a_seek_and_a_restart_search_again_for_the_query_as_typed() -> None:
    """A replay seek (``rebind``) and a restarted source (``reset``) search the
    new state for what was typed, not for its casefold: a word whose casefold
    is other letters (ß → ss) stays highlighted, and its folded item stays folded."""
    session = load_path(DEMO).session
    item = next(i for i in session.main.items if isinstance(i, TextItem))
    item.text = "Die Straße ist lang."
    app = TranscriptApp(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        view = app.query_one(TranscriptView)

        def highlighted() -> list[str]:
            return [seg.text for y in range(view.scrollable_content_region.height)
                    for seg in view.render_line(y) if seg.style is not None and seg.style.reverse]

        assert view.search("Straße") == 1
        await pilot.pause()
        assert highlighted() == ["Straße"] and not view.is_expanded(item)
        view.rebind(session)
        await pilot.pause()
        assert highlighted() == ["Straße"] and not view.is_expanded(item)
        view.reset(session)
        await pilot.pause()
        assert highlighted() == ["Straße"] and not view.is_expanded(item)


async def test_click_selects_and_click_again_toggles() -> None:
    app = TranscriptApp(load_path(STREAM / "04_thinking.jsonl").session)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        view = app.query_one(TranscriptView)
        y = row_with(view, "✻ thinking")
        await pilot.click(TranscriptView, offset=(10, y))
        await pilot.pause()
        assert view.cursor_index == 0
        assert "consider a docstring" not in screen(view)
        await pilot.click(TranscriptView, offset=(10, y))
        await pilot.pause()
        assert "consider a docstring" in screen(view)


# --- follow mode and live changes ---------------------------------------------------------------


def demo_lines() -> list[RawLine]:
    return [line for batch in read_file_lines(DEMO) for line in batch]


async def test_follow_mode_appends_scroll_up_and_G() -> None:
    lines = demo_lines()
    feed = Feed()
    feed.feed(lines[:20])
    app = TranscriptApp(feed.session)
    async with app.run_test(size=(80, 16)) as pilot:
        await pilot.pause()
        view = app.query_one(TranscriptView)
        assert view.following and view.scroll_y == view.max_scroll_y
        # new items keep the view pinned to the end
        for chunk in (lines[20:40], lines[40:60]):
            view.apply_changes(feed.feed(chunk))
            await pilot.pause()
            assert view.following
            assert view.virtual_size.height > 16
            assert view.scroll_y == view.max_scroll_y
            assert view.cursor_index == len(view.items) - 1
        # a wheel scroll up leaves the end and stops following
        view.post_message(events.MouseScrollUp(view, 5, 5, 0, -1, 0, False, False, False))
        await pilot.pause()
        assert not view.following
        assert app.follow_changes[-1] is False
        parked = view.scroll_y
        assert parked < view.max_scroll_y
        # more items: the view stays where the user put it
        view.apply_changes(feed.feed(lines[60:90]))
        await pilot.pause()
        assert not view.following and view.scroll_y == parked
        # G follows again
        await pilot.press("G")
        await pilot.pause()
        assert view.following and app.follow_changes[-1] is True
        assert view.scroll_y == view.max_scroll_y
        view.apply_changes(feed.feed(lines[90:]))
        await pilot.pause()
        assert view.scroll_y == view.max_scroll_y
        assert "turn 6 · 0.0s" in screen(view)  # /compact is a prompt, not a turn
        # page up stops following too; End resumes
        await pilot.press("pageup")
        assert not view.following
        await pilot.press("end")
        assert view.following


@pytest.mark.parametrize("name", ["04b_thinking_partial.jsonl", "05_subagent.jsonl"])
async def test_line_by_line_ends_where_a_whole_load_does(name: str) -> None:
    """Streamed deltas, updates and sub-agent progress applied one line at a time
    leave the same screen as folding the file at once."""
    lines = [line for batch in read_file_lines(STREAM / name) for line in batch]
    feed = Feed()
    app = TranscriptApp(feed.session)
    async with app.run_test(size=(90, 30)) as pilot:
        await pilot.pause()
        view = app.query_one(TranscriptView)
        for n, line in enumerate(lines):
            view.apply_changes(feed.feed([line]))
            if n % 3 == 0:
                await pilot.pause()
        await pilot.pause()
        live = screen(view)
    app = TranscriptApp(load_path(STREAM / name).session)
    async with app.run_test(size=(90, 30)) as pilot:
        await pilot.pause()
        assert screen(app.query_one(TranscriptView)) == live


async def test_item_updates_are_redrawn_and_heights_above_keep_the_view_still() -> None:
    lines = demo_lines()
    feed = Feed()
    feed.feed(lines)
    app = TranscriptApp(feed.session)
    async with app.run_test(size=(80, 12)) as pilot:
        await pilot.pause()
        view = app.query_one(TranscriptView)
        view.move_cursor(len(view.items) // 2)
        await pilot.pause()
        assert not view.following
        before = screen(view)
        top = view.scroll_y
        # expanding an item above the viewport (by state change) must not move the text
        above = index_of(view, lambda i: isinstance(i, ThinkingItem) and i.text)
        assert view._index.start(above) < top
        view.toggle_expanded(view.items[above])
        view.move_cursor(view.cursor_index)  # unchanged cursor, keeps it visible
        await pilot.pause()
        assert screen(view) == before
        assert view.scroll_y > top
        # a hidden item takes no rows
        item = view.items[above]
        height = view._index.heights[above]
        item.hidden = True
        item.version += 1
        from cctv.reducer.state import ItemUpdated
        view.apply_changes([ItemUpdated(MAIN, above)])
        await pilot.pause()
        assert view._index.heights[above] == 0
        assert screen(view) == before
        assert height > 0


async def test_resize_reflows_text() -> None:
    app = TranscriptApp(load_path(STREAM / "10_compact_manual.jsonl").session)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        view = app.query_one(TranscriptView)
        assert any(len(r) > 70 for r in rows(view))
        await pilot.resize_terminal(40, 30)
        await pilot.pause()
        assert all(len(r) <= 40 for r in rows(view))
        assert "compacted" in screen(view)
        assert view.scroll_y == view.max_scroll_y


async def test_theme_switch_recolours() -> None:
    app = TranscriptApp(load_path(STREAM / "03_tools.jsonl").session)
    async with app.run_test(size=(100, 60)) as pilot:
        await pilot.pause()
        view = app.query_one(TranscriptView)
        dark = colour_of(view, "File does not exist")
        background = view.render_line(0)._segments[0].style.bgcolor
        app.theme = "textual-light"
        await pilot.pause()
        assert colour_of(view, "File does not exist") != dark
        assert colour_of(view, "File does not exist") == \
            view.get_component_rich_style("transcript--error").color
        assert view.render_line(0)._segments[0].style.bgcolor != background


async def test_reset_rebuilds_from_a_new_session() -> None:
    app = TranscriptApp(load_path(STREAM / "03_tools.jsonl").session)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        view = app.query_one(TranscriptView)
        view.reset(load_path(STREAM / "07_hooks.jsonl").session)
        await pilot.pause()
        assert "⚓ Stop" in screen(view) and "TodoWrite" not in screen(view)
        assert view.following and view.cursor_index == len(view.items) - 1


# --- estimates -------------------------------------------------------------------------------


def test_estimates_are_exact_for_collapsed_items() -> None:
    """Collapsed heights come from string lengths alone, and match the render."""
    console = Console(width=200, color_system="truecolor")
    paths = sorted(STREAM.glob("*.jsonl")) + [DEMO]
    checked = 0
    for path in paths:
        session = load_path(path).session
        ctx = RenderContext(session, console, Palette())
        for agent in session.agents.values():
            for item in agent.items:
                for width in (40, 78, 118):
                    rendered = len(render_item(item, width, False, ctx))
                    assert estimate_height(item, width, False, session) == rendered, (path, item)
                    checked += 1
    assert checked > 300


def drawn(item: Item, session: Session | None = None, width: int = 80,
          expanded: bool = False) -> list[str]:
    ctx = RenderContext(session or Session(), Console(width=200), Palette())
    return [strip.text.rstrip() for strip in render_item(item, width, expanded, ctx)]


def test_card_statuses_come_from_state() -> None:
    call = ToolCall("toolu_x", "Bash", {"command": "sleep 100"}, MAIN, 0, 1,
                    status="running", elapsed=90.0, heartbeats=3)
    item = ToolItem(MAIN, 1, 0, call=call)
    assert drawn(item)[0].endswith("◐ running 1m30s · 3 heartbeats")
    assert drawn(item)[1] == "  $ sleep 100"
    call.status, call.elapsed, call.heartbeats = "pending", None, 0
    assert drawn(item)[0].endswith("○ pending")
    call.status, call.denied_reason = "denied", "the user said no"
    assert drawn(item)[0].endswith("⊘ denied") and "  ⊘ the user said no" in drawn(item)
    call.status = "interrupted"
    assert drawn(item)[0].endswith("⏸ interrupted")
    call.status, call.elapsed = "done", 0.4
    call.result = "\n".join(f"line {n}" for n in range(1, 21))
    rows_ = drawn(item)
    assert rows_[0].endswith("✓ 0.4s")
    assert rows_[-1] == "  … 13 more lines (enter to expand)"  # "$ sleep 100" + 7 shown
    call.result = "\n".join(f"line {n}" for n in range(1, 9))
    assert drawn(item)[-1] == "  line 8"  # one line more than the fold: shown, not hinted
    call.result = "\n".join(f"line {n}" for n in range(1, 21))
    assert len(drawn(item, expanded=True)) == 1 + 1 + 20


def test_mcp_tool_input_is_pretty_json_and_errors_use_the_error_style() -> None:
    call = ToolCall("toolu_m", "mcp__tracker__create_issue",
                    {"title": "Crash on start", "labels": ["bug", "p1"], "body": "x" * 90},
                    MAIN, 0, 1, status="failed", result="tracker: 403 forbidden", is_error=True)
    item = ToolItem(MAIN, 1, 0, call=call)
    rows_ = drawn(item)
    assert rows_[0].startswith("● mcp__tracker__create_issue  Crash on start")
    assert rows_[0].endswith("✗ failed")
    assert rows_[1].startswith('  {"title":"Crash on start","labels":["bug","p1"],"body":"xxx')
    assert rows_[1].endswith("…") and len(rows_[1]) == 80
    assert rows_[-1] == "  tracker: 403 forbidden"
    expanded = drawn(item, expanded=True)
    assert '    "title": "Crash on start",' in expanded and '      "bug",' in expanded
    ctx = RenderContext(Session(), Console(width=200), Palette())
    last = render_item(item, 80, False, ctx)[-1]
    assert any(seg.style and seg.style.color == Palette().error.color
               for seg in last if "403" in seg.text)


def test_streaming_text_thinking_footer_and_notice() -> None:
    text = TextItem(MAIN, 1, 0, text="Partial **answer**", message_id="msg_1", streaming=True)
    assert drawn(text)[0].endswith("▍")
    thinking = ThinkingItem(MAIN, 1, 0, text="", redacted=True, tokens=1234, message_id="msg_1")
    assert drawn(thinking) == ["✻ thinking (redacted) · 1,234 tok"]
    turn = Turn(2, "go", 1, number=3, closed=True, is_error=True, subtype="error_max_turns",
                duration_ms=12400, duration_api_ms=9800, cost_usd=0.0213)
    turn.usage.input_tokens, turn.usage.output_tokens = 2400, 120
    footer = drawn(TurnFooterItem(MAIN, 9, turn.index, turn_ref=turn))[0]
    assert footer.startswith(
        "── turn 3 · 12s (api 9.8s) · $0.0213 · in 2.4k out 120 · ✗ failed · max turns")
    notice = NoticeItem(MAIN, 3, 0, category="api retry",
                        text="API retry 2/10 in 1.0s (529 overloaded)",
                        level="warning")
    assert drawn(notice) == ["! [api retry] API retry 2/10 in 1.0s (529 overloaded)"]


# --- scale -----------------------------------------------------------------------------------


_IDS = re.compile(rb'"((?:toolu|msg|req)_[A-Za-z0-9]+)"')


def synthesize(n_items: int) -> Feed:
    """A Feed of ~n items: 03_tools repeated with fresh tool/message ids each time."""
    source = (STREAM / "03_tools.jsonl").read_bytes().splitlines()
    feed = Feed()
    line_no = 0
    copy = 0
    while len(feed.session.main.items) < n_items:
        suffix = b"_%d" % copy
        batch = []
        for data in source:
            line_no += 1
            data = _IDS.sub(lambda m: b'"' + m.group(1) + suffix + b'"', data)
            batch.append(RawLine(line_no, 0, data))
        feed.feed(batch)
        copy += 1
    return feed


async def test_100k_items_mount_and_render_the_end_fast() -> None:
    feed = synthesize(100_000)
    n = len(feed.session.main.items)
    assert n >= 100_000
    app = TranscriptApp(feed.session)
    started = time.perf_counter()
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        view = app.query_one(TranscriptView)
        text = screen(view)
        elapsed = time.perf_counter() - started
        print(f"\n100k: {n} items mounted, end rendered in {elapsed:.2f}s "
              f"({view.virtual_size.height} rows)")
        assert f"turn {len(feed.session.turns)}" in text
        assert view.scroll_y == view.max_scroll_y
        assert elapsed < 5.0
        # appending is O(new): one more copy of the session
        t = time.perf_counter()
        source = (STREAM / "03_tools.jsonl").read_bytes().splitlines()
        base = feed.session.lines
        changes = feed.feed([RawLine(base + i + 1, 0, _IDS.sub(
            lambda m: b'"' + m.group(1) + b'_new"', data)) for i, data in enumerate(source)])
        view.apply_changes(changes)
        await pilot.pause()
        append = time.perf_counter() - t
        print(f"100k: appended {len(changes)} changes and redrew in {append * 1000:.0f}ms")
        assert len(view._index.items) == len(feed.session.main.items)
        assert view.scroll_y == view.max_scroll_y
        assert append < 1.0
        # the top is reachable and drawn
        t = time.perf_counter()
        await pilot.press("g")
        await pilot.pause()
        print(f"100k: jump to top in {(time.perf_counter() - t) * 1000:.0f}ms")
        assert "I'll plan this out first." in screen(view)


# --- snapshots -------------------------------------------------------------------------------


def test_snapshot_tools_80x24(snap_compare) -> None:
    app = TranscriptApp(load_path(STREAM / "03_tools.jsonl").session)
    # from the top, six calls down: the Edit card with its diff under the cursor
    assert snap_compare(app, terminal_size=(80, 24), press=["g", *["c"] * 6])


def test_snapshot_subagent_120x36(snap_compare) -> None:
    app = TranscriptApp(load_path(DEMO).session)
    assert snap_compare(app, terminal_size=(120, 36),
                        press=["g", *["right_square_bracket"] * 2, "c"])


def test_snapshot_compaction_expanded_80x24(snap_compare) -> None:
    session = load_path(STREAM / "10_compact_manual.jsonl").session

    async def expand(pilot) -> None:
        view = pilot.app.query_one(TranscriptView)
        view.move_cursor(index_of(view, lambda i: isinstance(i, CompactionItem)))
        await pilot.press("enter")

    assert snap_compare(TranscriptApp(session), terminal_size=(80, 24), run_before=expand)


def test_snapshot_hooks_light_theme_120x36(snap_compare) -> None:
    session = load_path(DEMO).session
    app = TranscriptApp(session, theme="textual-light")
    assert snap_compare(app, terminal_size=(120, 36),
                        press=["g", *["right_square_bracket"] * 3, "c", "e"])
