"""Finding one's way in a session, as users of lnav and less expect: filters by
kind, search that highlights the words and steps row by row, a time column and
jump-to-time, sideways scrolling of unwrapped bodies, a navigable tasks panel
and a raw view that steps to the paired frames. Each on a real recording."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from cctv.reducer.filters import PRESETS, ViewFilter, next_preset, parse_hide
from cctv.reducer.item_time import Arrivals, ItemTimes, format_clock, parse_clock
from cctv.reducer.timestamps import parse_timestamp
from cctv.reducer.state import MAIN, HookItem, NoticeItem, ToolItem
from cctv.reducer.queries import is_error_item
from cctv.viewer.app import CctvApp
from cctv.viewer.loader import load_path
from cctv.widgets.status_bar import StatusBar
from cctv.widgets.transcript import TranscriptView
from cctv.widgets.transcript.rows import TIME_COLUMN

from conftest import FIXTURES

STREAM = FIXTURES / "captures" / "stream"
PROJECT = FIXTURES / "captures" / "projects" / "-home-ada-src-demo"
SUBAGENT_SESSION = PROJECT / "d7acffbd-7cff-4056-82e8-4364dc8df14a.jsonl"
EDIT = FIXTURES / "public" / "claude-code-log" / "edit_tool.jsonl"


@pytest.fixture
def utc(monkeypatch: pytest.MonkeyPatch):
    """Local time is UTC for the test (times on screen are local)."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def app_for(path: Path) -> CctvApp:
    return CctvApp(None, feed=load_path(path), clock=None)


def view_of(app: CctvApp) -> TranscriptView:
    return app.screen.query_one(TranscriptView)


def rows(view: TranscriptView) -> list[str]:
    return [view.render_line(y).text.rstrip() for y in range(view.scrollable_content_region.height)]


def status(app: CctvApp) -> str:
    return app.screen.query_one(StatusBar).text


async def settle(pilot) -> None:
    await pilot.pause()
    await pilot.pause(0.15)  # the panels redraw on a 0.1 s timer


def shown_items(view: TranscriptView) -> list:
    return [item for item in view.items if view.filter.accepts(item)]


# --- filters -------------------------------------------------------------------------------


def test_filter_values() -> None:
    f = ViewFilter().toggle_kind("hooks").toggle_kind("thinking")
    assert f.describe() == "hiding hooks, thinking"
    assert f.toggle_kind("hooks").describe() == "hiding thinking"
    assert ViewFilter(only_errors=True, only_tool="Bash").describe() == "only Bash · only errors"
    assert ViewFilter(only_errors=True).left_nothing("this session") == "No errors in this session."
    assert ViewFilter(only_tool="Task").left_nothing("this sub-agent") == "No Task calls in this sub-agent."
    assert ViewFilter(only_errors=True, hidden=frozenset({"hooks"})).left_nothing("this session") \
        == "No errors in this session outside the hidden hooks."
    assert ViewFilter(hidden=frozenset({"thinking", "hooks"})).left_nothing("this session") \
        == "Everything in this session is hidden (hooks, thinking)."
    assert not ViewFilter().active and ViewFilter().describe() == ""
    # f cycles the presets and comes back; a hand-made filter goes back to everything
    seen = [PRESETS[0][1]]
    for _ in PRESETS:
        seen.append(next_preset(seen[-1])[1])
    assert seen[-1] == PRESETS[0][1] and len(set(seen[:-1])) == len(PRESETS)
    assert next_preset(ViewFilter(only_tool="Read"))[1] == ViewFilter()
    assert parse_hide("hooks, thinking") == {"hooks", "thinking"}
    with pytest.raises(ValueError, match="unknown kind nope"):
        parse_hide("hooks,nope")
    with pytest.raises(ValueError):
        ViewFilter().toggle_kind("nope")


async def test_hiding_hooks_and_cycling_filters_on_a_real_session() -> None:
    app = app_for(STREAM / "07_hooks.jsonl")
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        view = view_of(app)
        assert any("⚓" in r for r in rows(view))
        assert "filter" not in status(app)

        # the palette's per-kind toggle
        from cctv.viewer.palette import _set_filter

        _set_filter(app, lambda f: f.toggle_kind("hooks"))
        await settle(pilot)
        screen = rows(view)
        assert not any("⚓" in r for r in screen)
        assert any("hello from bash" in r for r in screen)
        assert "filter: hiding hooks" in status(app)

        await pilot.press("F")  # everything again
        await settle(pilot)
        assert any("⚓" in r for r in rows(view)) and "filter" not in status(app)

        await pilot.press("f")  # quiet
        await settle(pilot)
        screen = rows(view)
        assert not any("⚓" in r or "[harness]" in r for r in screen)
        assert "hiding hooks, harness, thinking" in status(app)

        await pilot.press("f")  # only errors
        await settle(pilot)
        drawn = [r for r in rows(view) if r.strip()]
        errors = [item for item in view.items if is_error_item(item) and not item.hidden]
        assert errors and len(drawn) == len(errors)  # one row per error, nothing else
        assert "exit 2" in drawn[0]
        assert "filter: only errors" in status(app)
        # the cursor is on a shown item, and e / j / k never land on a hidden one
        await pilot.press("g", "j", "k", "e")
        assert view.cursor_item is not None and is_error_item(view.cursor_item)

        await pilot.press("f")  # back to everything
        await settle(pilot)
        assert "filter" not in status(app)


async def test_only_one_tool_and_the_status_bar_at_80x24() -> None:
    app = app_for(STREAM / "03_tools.jsonl")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        view = view_of(app)
        view.set_filter(ViewFilter(only_tool="Read"))
        await settle(pilot)
        shown = shown_items(view)
        assert shown and all(isinstance(i, ToolItem) and i.call.name == "Read" for i in shown)
        cards = [r for r in rows(view) if "● " in r]
        assert cards and all("Read" in r for r in cards)
        assert "only Read" in status(app) or "filtered" in status(app)
        assert len(status(app)) <= 80


NO_ERRORS = (FIXTURES / "public" / "claude-code-log" / "real_projects"
             / "-Users-dain-workspace-claude-code-log-sample" / "cbc0f75b-b36d-4efd-a7da-ac800ea30eb6.jsonl")
"""A real session with 25 items, Bash, Grep, MultiEdit and Read calls, and no error."""


async def test_a_filter_that_leaves_nothing_says_so_and_how_to_undo_it() -> None:
    """"Only errors" on a session without errors: the pane says there are none
    and which key shows everything again, in its middle, not a blank pane."""
    app = app_for(NO_ERRORS)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        view = view_of(app)
        assert not [i for i in view.items if is_error_item(i) and not i.hidden]
        await pilot.press("f", "f")  # quiet, then only errors
        await settle(pilot)
        drawn = [r.strip() for r in rows(view) if r.strip()]
        assert drawn == ["No errors in this session.", "F: show everything"]
        middle = view.scrollable_content_region.height // 2
        assert rows(view)[middle].strip() == "F: show everything"
        assert "filter: only errors" in status(app)
        await pilot.press("F")
        await settle(pilot)
        assert "No errors" not in "\n".join(rows(view)) and "filter" not in status(app)
        # one tool's calls, none of them failed
        view.set_filter(ViewFilter(only_tool="Bash", only_errors=True))
        await settle(pilot)
        assert [r.strip() for r in rows(view) if r.strip()] == [
            "No Bash call in this session failed.", "F: show everything"]
        await pilot.press("F")
        await settle(pilot)
        assert sum(bool(r.strip()) for r in rows(view)) > 10


def test_filter_change_is_one_pass_and_drawing_stays_visible_only(monkeypatch) -> None:
    """On a 100k-item session a filter change estimates each item once (O(items))
    and renders only what is on screen (O(visible))."""
    import cctv.widgets.transcript.lines as lines_module
    import cctv.widgets.transcript.rows as rows_module
    from cctv.reducer.fold import Session
    from cctv.reducer.state import HookRun, TextItem

    session = Session()
    items = session.agents[MAIN].items
    for i in range(100_000):
        if i % 3 == 0:
            hook = HookRun(f"h{i}", "PreToolUse", "PreToolUse", i + 1, None, status="done")
            item = HookItem(MAIN, i + 1, None, hook=hook)
        elif i % 3 == 1:
            item = NoticeItem(MAIN, i + 1, None, category="harness", text=f"notice {i}")
        else:
            item = TextItem(MAIN, i + 1, None, text=f"reply {i}", message_id=f"m{i}")
        item.index = i
        items.append(item)

    rendered: list[int] = []
    estimated: list[int] = []
    real_render, real_estimate = rows_module.render_item, lines_module.estimate_height

    def counting_render(item, *args):
        rendered.append(item.index)
        return real_render(item, *args)

    def counting_estimate(item, *args):
        estimated.append(item.index)
        return real_estimate(item, *args)

    from test_transcript import TranscriptApp

    async def run() -> None:
        app = TranscriptApp(session)
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.pause()
            view = app.query_one(TranscriptView)
            monkeypatch.setattr(rows_module, "render_item", counting_render)
            monkeypatch.setattr(lines_module, "estimate_height", counting_estimate)
            started = time.perf_counter()
            view.set_filter(ViewFilter(hidden=frozenset({"hooks", "harness"})))
            call = time.perf_counter() - started
            await pilot.pause()
            took = time.perf_counter() - started
            screen = rows(view)
            assert all(r.startswith(("▌ reply", "  reply")) or not r.strip() for r in screen)
            assert "reply 99998" in "\n".join(screen)
            # estimates: only shown items get one (hidden ones cost a filter call, no estimate)
            assert len(estimated) <= 100_000 // 3 + 10
            assert len(set(rendered)) <= 30
            rendered.clear()
            await pilot.press("g")
            await pilot.pause()
            assert next(r for r in rows(view) if r.strip()).endswith("reply 2")
            assert len(set(rendered)) <= 30
            print(f"filter change over 100k items: {call * 1000:.0f} ms, "
                  f"{took * 1000:.0f} ms with the redraw")

    asyncio.run(run())


# --- search ----------------------------------------------------------------------------


async def test_search_highlights_the_words_and_steps_rows_inside_an_item() -> None:
    app = app_for(STREAM / "03_tools.jsonl")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        view = view_of(app)
        count = view.search("todo")
        assert count >= 2
        # the Grep card's result has two TODO lines: n goes from one to the other
        grep = next(i for i, item in enumerate(view.items)
                    if isinstance(item, ToolItem) and item.call.name == "Grep")
        view.move_cursor(grep - 1)
        await pilot.press("n")
        await pilot.pause()
        assert view.cursor_index == grep
        rows_hit = view._match_rows(grep)
        assert len(rows_hit) >= 2 and view.match_row == rows_hit[0]
        await pilot.press("n")
        assert view.cursor_index == grep and view.match_row == rows_hit[1]
        await pilot.press("N")
        assert view.cursor_index == grep and view.match_row == rows_hit[0]

        # the words themselves are drawn highlighted, in the "current" style on the row n is on
        await pilot.pause()
        word = view.get_component_rich_style("transcript--match-word")
        current = view.get_component_rich_style("transcript--match-current")
        found = {"word": 0, "current": 0}
        for y in range(view.scrollable_content_region.height):
            for seg in view.render_line(y):
                if seg.text.lower() == "todo" and seg.style is not None and seg.style.reverse:
                    if seg.style.color == current.color:
                        found["current"] += 1
                    elif seg.style.color == word.color:
                        found["word"] += 1
        assert current.color != word.color
        assert found["current"] == 1 and found["word"] >= 3


async def test_n_expands_a_folded_item_whose_match_is_below_the_fold(tmp_path: Path) -> None:
    # a Bash call whose output has the word only on its 30th line: folded, the card shows 8
    import json

    lines = (STREAM / "03_tools.jsonl").read_text().splitlines()
    out = []
    for line in lines:
        frame = json.loads(line)
        result = frame.get("tool_use_result")
        if isinstance(result, dict) and "stdout" in result:
            result["stdout"] = "\n".join(f"line {n}" for n in range(29)) + "\nneedle here\n"
            for block in frame["message"]["content"]:
                if block.get("type") == "tool_result":
                    block["content"] = result["stdout"]
        out.append(json.dumps(frame))
    path = tmp_path / "needle.jsonl"
    path.write_text("\n".join(out) + "\n")
    app = app_for(path)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        view = view_of(app)
        assert view.search("needle") >= 1
        await pilot.pause()
        item = view.cursor_item
        assert item is not None and view.is_expanded(item)
        assert view.match_row is not None
        assert any("needle here" in r for r in rows(view))


# --- time -------------------------------------------------------------------------------


def test_item_times_from_rows_and_arrivals(utc) -> None:
    feed = load_path(STREAM / "07_hooks.jsonl")
    times = ItemTimes(feed)
    items = feed.session.agents[MAIN].items
    stamps = [times.of(item) for item in items]
    assert all(t is not None for t in stamps)
    assert stamps == sorted(stamps)  # a transcript's times only grow
    bash = next(i for i in items if isinstance(i, ToolItem))
    own = parse_timestamp(getattr(feed.entry_at(bash.line_no), "timestamp", None))
    assert own is None or times.of(bash) == own
    assert format_clock(times.of(bash)) == "14:00:11"
    # live: a row with no timestamp takes its arrival time
    arrivals = Arrivals()
    arrivals.record(1, 1000.0)
    arrivals.record(10, 2000.0)
    assert arrivals.at(5) == 1000.0 and arrivals.at(10) == 2000.0 and arrivals.at(0) is None
    # jump-to-time answers
    ref = parse_timestamp("2026-11-29T13:59:18Z")
    assert parse_clock("14:00", ref) == parse_timestamp("2026-11-29T14:00:00Z")
    assert parse_clock("14:00:15", ref) == parse_timestamp("2026-11-29T14:00:15Z")
    assert parse_clock("2026-11-29T14:00:15Z", None) == parse_timestamp("2026-11-29T14:00:15Z")
    assert parse_clock("25:00", ref) is None and parse_clock("soon", ref) is None


async def test_time_column_and_jump_to_time(utc) -> None:
    app = app_for(STREAM / "07_hooks.jsonl")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        view = view_of(app)
        await pilot.press("g", "T")
        await pilot.pause()
        screen = rows(view)
        first = screen[0]
        assert first[2:2 + TIME_COLUMN].strip() == "13:59:59" or \
            first[2:10].count(":") == 2
        assert any(r[2:10] == "14:00:11" and "Bash" in r for r in screen)
        # the body rows of a card leave the column blank
        body = next(r for r in screen if "$ echo hello" in r)
        assert body[2:2 + TIME_COLUMN].strip() == ""

        from cctv.viewer.palette import jump_to_time

        jump_to_time(app, "14:00:15")
        await pilot.pause()
        item = view.cursor_item
        assert item is not None and app.shown.item_time(item) >= parse_clock("14:00:15", app.shown.item_time(view.items[0]))
        earlier = [i for i in view.items[: view.cursor_index] if view.filter.accepts(i)]
        assert all(app.shown.item_time(i) < app.shown.item_time(item) for i in earlier)

        # the palette asks for the time
        from cctv.viewer.palette import ask_jump_to_time
        from cctv.viewer.screens.ask import AskScreen

        view.move_cursor(0)
        ask_jump_to_time(app)
        await pilot.pause()
        assert isinstance(app.screen, AskScreen)
        await pilot.press("ctrl+a", "ctrl+k", *"14:00:11", "enter")
        await pilot.pause()
        target = parse_clock("14:00:11", app.shown.item_time(view.items[0]))
        item = view.cursor_item
        assert format_clock(app.shown.item_time(item)) == "14:00:11"
        assert all(app.shown.item_time(i) < target for i in view.items[: view.cursor_index])

        await pilot.press("T")
        await pilot.pause()
        assert not view.show_times and rows(view)[0][2:10].count(":") < 2


async def test_live_items_take_the_time_they_arrived(tmp_path: Path, utc) -> None:
    """Stream-json frames mostly carry no timestamp: followed live, an item's time
    is when its line arrived."""
    import json

    from cctv.viewer.sources import FileTail

    lines = (STREAM / "11_multi_turn.jsonl").read_text().splitlines()
    first_turn = next(i for i, line in enumerate(lines) if json.loads(line)["type"] == "result")
    stripped = []
    for line in lines:
        frame = json.loads(line)
        frame.pop("timestamp", None)
        stripped.append(json.dumps(frame))
    path = tmp_path / "live.jsonl"
    path.write_text("\n".join(stripped[: first_turn + 1]) + "\n")
    now = [1_800_000_000.0]  # 2027-01-15T08:00:00Z
    app = CctvApp(FileTail(path), clock=lambda: now[0])
    async with app.run_test(size=(100, 30)) as pilot:
        deadline = asyncio.get_running_loop().time() + 8
        while not app.shown.live:
            assert asyncio.get_running_loop().time() < deadline
            await pilot.pause(0.05)
        history = list(app.shown.feed.session.agents[MAIN].items)
        now[0] += 90
        with open(path, "a") as fh:
            fh.write("\n".join(stripped[first_turn + 1:]) + "\n")
        while app.shown.feed.session.lines < len(lines):
            assert asyncio.get_running_loop().time() < deadline
            await pilot.pause(0.05)
        view = view_of(app)
        new = [i for i in app.shown.feed.session.agents[MAIN].items if i not in history]
        assert new and all(app.shown.item_time(i) == now[0] for i in new)
        assert all(app.shown.item_time(i) is None for i in history)  # read from the file: no time
        view.set_show_times(True)
        await pilot.pause()
        assert any(r[2:10] == "08:01:30" for r in rows(view))
        assert any(r[2:10] == "--:--:--" for r in rows(view)) or history[-1] not in view.items[-20:]


async def test_the_palette_toggles_a_kind_and_exports(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    app = app_for(STREAM / "07_hooks.jsonl")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"hide hooks")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await settle(pilot)
        assert view_of(app).filter.hidden == {"hooks"}
        assert "filter: hiding hooks" in status(app)
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"export the view")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await settle(pilot)
        await app.workers.wait_for_complete()
        files = list(tmp_path.glob("cctv-*.md"))
        assert len(files) == 1 and "*Filtered view: hiding hooks.*" in files[0].read_text()


# --- unwrapped bodies -----------------------------------------------------------------


async def test_long_lines_unwrap_and_scroll_sideways() -> None:
    app = app_for(EDIT)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        view = view_of(app)
        await pilot.press("g", "c", "enter")
        await pilot.pause()
        wrapped = rows(view)
        assert any(r.lstrip('▌ ') == '"_pygments_timings")' for r in wrapped)  # a wrapped tail
        await pilot.press("right")  # unwraps
        await pilot.pause()
        unwrapped = rows(view)
        long_row = next(r for r in unwrapped if '"_markdown_timings", "_pygments_timin' in r)
        assert long_row.endswith("›")
        assert not any(r.lstrip('▌ ') == '"_pygments_timings")' for r in unwrapped)
        await pilot.press("right", "right")
        await pilot.pause()
        moved = rows(view)
        assert moved[0] == unwrapped[0]  # the header stays put
        assert any(r.startswith("▌ ‹") and "_current_msg_uuid" in r for r in moved)
        await pilot.press("left", "left")
        await pilot.pause()
        assert rows(view) == unwrapped
        await pilot.press("w")
        await pilot.pause()
        assert [r for r in rows(view) if r][:12] == [r for r in wrapped if r][:12]


# --- tasks panel -------------------------------------------------------------------------


async def test_tasks_panel_takes_focus_and_opens_an_output_file(tmp_path: Path) -> None:
    from textual.widgets import OptionList

    from cctv.viewer.screens.output import OutputScreen

    output = tmp_path / "b0q8m16pb.output"
    output.write_bytes(b"tick 1\ntick 2\n\x1b]0;pwned\x07done\n")
    original = "/home/ada/tmp/claude-1001/-home-ada-src-demo/e321c1d0-19a4-4a0d-819a-a0cf937b8a13/tasks/b0q8m16pb.output"
    text = (STREAM / "06_background_bash.jsonl").read_text().replace(original, str(output))
    path = tmp_path / "bg.jsonl"
    path.write_text(text)
    app = app_for(path)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("tab")
        await settle(pilot)
        assert app.screen.show_tasks
        assert isinstance(app.focused, OptionList)
        ol = app.focused
        keys = [ol.get_option_at_index(i).id for i in range(ol.option_count)]
        target = keys.index("task:b0q8m16pb")
        while ol.highlighted != target:
            await pilot.press("down" if (ol.highlighted or 0) < target else "up")
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, OutputScreen)
        body = str(app.screen.query_one("#output-body").render())
        assert "tick 2" in body and "done" in body
        assert "\x1b" not in body and "\\x1b]0;pwned\\x07" in body
        await pilot.press("escape")
        await pilot.pause()
        # the other shell named no output file: enter says so
        other = keys.index("task:bx04gjnra")
        while ol.highlighted != other:
            await pilot.press("down" if (ol.highlighted or 0) < other else "up")
        await pilot.press("enter")
        await pilot.pause()
        assert not isinstance(app.screen, OutputScreen)
        assert any("no output file" in str(n.message) for n in app._notifications)
        await pilot.press("tab")  # back to the transcript
        assert isinstance(app.focused, TranscriptView)


async def test_tasks_panel_enter_opens_a_subagent() -> None:
    app = app_for(STREAM / "05_subagent.jsonl")
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("tab")
        await settle(pilot)
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen.agent_id == "toolu_01POmk2Upx4u34UIjZsjjwy3"


# --- raw view ------------------------------------------------------------------------


async def test_raw_view_steps_to_paired_frames_and_lines() -> None:
    from cctv.viewer.screens.raw import RawScreen

    app = app_for(STREAM / "06_background_bash.jsonl")
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        view = view_of(app)
        call = next(i for i, item in enumerate(view.items)
                    if isinstance(item, ToolItem) and item.call.background)
        view.move_cursor(call)
        await pilot.press("r")
        await pilot.pause()
        raw = app.screen
        assert isinstance(raw, RawScreen)
        assert raw.title_text.startswith("line 2 ") and "assistant" in raw.title_text
        visited = [raw.entry.kind_key]
        for _ in range(6):
            await pilot.press("right_square_bracket")
            visited.append(raw.entry.kind_key)
        # the call, its task frames and its result, in file order, then no further
        assert visited[:5] == ["assistant", "system/task_started", "user",
                               "system/task_updated", "system/task_notification"]
        assert visited[5] == visited[4]
        assert "paired frame 5 of 5" in str(raw.query_one("#raw-box").border_subtitle)
        await pilot.press("left_square_bracket")
        assert raw.entry.kind_key == "system/task_updated"
        line = raw.entry.line_no
        await pilot.press("n")
        assert raw.entry.line_no == line + 1
        await pilot.press("p", "p")
        assert raw.entry.line_no == line - 1
        assert f"line {line - 1} " in str(raw.query_one("#raw-box").border_title)


def test_a_calls_heartbeats_are_its_paired_frames() -> None:
    from cctv.reducer.frame_links import FrameLinks, FrameStepper

    feed = load_path(STREAM / "07_hooks.jsonl")
    call = next(c for c in feed.session.calls.values() if c.name == "Bash")
    links = FrameLinks(feed.entries)
    chain = links.chain_of_call(call.id)
    kinds = [feed.entries[n - 1].kind_key for n in chain]
    assert kinds[0] == "assistant" and kinds[-1] == "user"
    assert kinds.count("tool_progress") == call.hook_heartbeats + call.heartbeats >= 6
    assert chain == sorted(chain) and call.result_line_no in chain
    # stepping from the call reaches its result, past every heartbeat
    stepper = FrameStepper(feed.entries, links, feed.entry_at(call.line_no), chain)
    seen = [stepper.entry.line_no]
    while (entry := stepper.paired(1)) is not None:
        seen.append(entry.line_no)
    assert seen == chain and stepper.position == (len(chain), len(chain))
    # a hook's start and response pair up too
    hook = next(e for e in feed.entries if e.kind_key == "system/hook_started")
    assert [feed.entries[n - 1].kind_key for n in links.chain(hook)] == [
        "system/hook_started", "system/hook_response"]


# --- snapshots --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "path", "keys", "size", "theme"),
    [
        ("quiet_filter_80x24", STREAM / "07_hooks.jsonl", ["f"], (80, 24), "textual-dark"),
        ("time_column_light", STREAM / "07_hooks.jsonl", ["g", "T"], (80, 24), "textual-light"),
        ("only_errors_light", STREAM / "07_hooks.jsonl", ["f", "f"], (100, 24), "textual-light"),
    ],
)
def test_navigate_snapshots(snap_compare, utc, name: str, path: Path, keys: list[str],
                            size: tuple[int, int], theme: str) -> None:
    app = app_for(path)
    app.theme = theme
    assert snap_compare(app, press=keys, terminal_size=size)


def test_search_highlight_snapshot(snap_compare) -> None:
    app = app_for(STREAM / "03_tools.jsonl")
    app.theme = "textual-light"

    async def run_before(pilot) -> None:
        await pilot.pause()
        view_of(app).search("todo")
        await pilot.pause()

    assert snap_compare(app, run_before=run_before, terminal_size=(80, 24))
