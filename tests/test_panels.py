"""The status bar, the tasks panel, the raw view and the help screen, fed by
real recordings vendored in ``tests/fixtures`` (and the bundled demo, which is
stitched byte for byte from those recordings)."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
from textual.app import App, ComposeResult
from textual.containers import Horizontal
from textual.widgets import Footer, Static

from cctv.reducer.decode import decode_line
from cctv.reducer.feed import Feed, read_file_lines
from cctv.reducer.format import compact_count, format_cost, format_duration, human_bytes, short_path, tilde
from cctv.reducer.pretty import escape_bytes, pretty_json, raw_view
from cctv.reducer.fold import Session
from cctv.viewer.loader import load_path
from cctv.viewer.screens.help import HelpScreen
from cctv.viewer.screens.raw import RawScreen
from cctv.widgets.status_bar import StatusBar
from cctv.widgets.tasks_panel import TasksPanel, render_row, task_rows
from conftest import FIXTURES

ROOT = Path(__file__).resolve().parents[1]
REF = FIXTURES
DEMO = ROOT / "viewer" / "demo" / "demo_session.jsonl"
STREAM = REF / "captures" / "stream"
FORGE = REF / "forge" / "2.1.220"

T0 = 1_800_000_000.0
"""Fixed wall clock for folds with arrival times, so elapsed times are deterministic."""



def fold_until(path: Path, line_no: int | None = None, *, clocked: bool = False) -> Feed:
    """The feed after lines ``1..line_no`` of ``path`` (all when None), as a live
    reader would have folded them; ``clocked`` stamps line n as arriving at
    ``T0 + n`` seconds."""
    feed = Feed()
    for batch in read_file_lines(path):
        for line in batch:
            if line_no is not None and line.line_no > line_no:
                return feed
            feed.feed([line], received_at=T0 + line.line_no if clocked else None)
    return feed


def line_of(path: Path, predicate) -> int:
    """The number of the first line whose decoded JSON satisfies ``predicate``."""
    for n, raw in enumerate(path.read_bytes().splitlines(), 1):
        if predicate(msgspec.json.decode(raw)):
            return n
    raise AssertionError(f"no such line in {path.name}")


# --- test apps ----------------------------------------------------------------------------


class PanelsApp(App[None]):
    """A stand-in for the session screen: a transcript placeholder, the tasks
    panel (beside it, as the app has it, or full width), the status bar, a footer."""

    CSS = """
    #body { height: 1fr; }
    #transcript { width: 1fr; height: 1fr; padding: 1 2; color: $text-muted; }
    .side TasksPanel { width: 40%; min-width: 34; max-width: 64; height: 1fr;
                       border-left: vkey $foreground 20%; }
    .full TasksPanel { width: 1fr; height: 1fr; }
    .full #transcript { display: none; }
    """

    def __init__(self, session: Session, *, side: bool = True, now: float | None = None,
                 source: str = "/home/ada/src/demo/session.jsonl", following: bool = True,
                 ended: str | None = None, loading: tuple[int, int] | None = None,
                 theme: str | None = None) -> None:
        super().__init__()
        self.session = session
        self.side = side
        self.now = now
        self.source = source
        self.following = following
        self.ended = ended
        self.loading = loading
        self.opened: list[str] = []
        if theme:
            self.theme = theme

    def compose(self) -> ComposeResult:
        with Horizontal(id="body", classes="side" if self.side else "full"):
            yield Static("(transcript)", id="transcript")
            yield TasksPanel(id="tasks")
        yield StatusBar(id="status")
        yield Footer()

    def on_mount(self) -> None:
        self.refresh_panels()
        self.query_one(TasksPanel).focus()

    def refresh_panels(self) -> None:
        self.query_one(StatusBar).update_state(
            self.session, source=self.source, following=self.following, ended=self.ended,
            now=self.now, loading=self.loading)
        self.query_one(TasksPanel).update_state(self.session, now=self.now)

    def on_tasks_panel_open_agent(self, message: TasksPanel.OpenAgent) -> None:
        assert message.control is self.query_one(TasksPanel)
        self.opened.append(message.agent_id)


class ScreenApp(App[None]):
    """Pushes one screen over an empty base."""

    def __init__(self, make_screen, theme: str | None = None) -> None:
        super().__init__()
        self.make_screen = make_screen
        self.copied: list[str] = []
        if theme:
            self.theme = theme

    def compose(self) -> ComposeResult:
        yield Static("base screen")

    def on_mount(self) -> None:
        self.push_screen(self.make_screen())

    def copy_to_clipboard(self, text: str) -> None:
        self.copied.append(text)


def demo_mid_session() -> Feed:
    """The demo at the moment the background shell runs beside a foreground Bash
    (turn 3), its sub-agent already done; arrival times stamped."""
    return fold_until(DEMO, 41, clocked=True)


DEMO_NOW = T0 + 47.5
HELP_ROWS = [
    ("j / ↓", "Next row", "Move"), ("k / ↑", "Previous row", "Move"),
    ("g / G", "First / last row (G follows)", "Move"),
    ("enter", "Expand, or open a sub-agent", "Transcript"), ("/", "Search", "Transcript"),
    ("t", "Tasks panel", "Panels"), ("r", "Raw JSON of this line", "Panels"),
    ("?", "This help", "App"), ("q", "Quit", "App"),
]


# --- pure formatting ------------------------------------------------------------------------


def test_number_formats():
    assert [compact_count(n) for n in (0, 999, 1000, 1234, 12_345, 123_456, 1_000_000,
                                       1_234_567)] == [
        "0", "999", "1k", "1.2k", "12.3k", "123k", "1M", "1.2M"]
    assert format_cost(0.02134) == "$0.0213" and format_cost(1.4886) == "$1.49"
    assert [format_duration(s) for s in (0.42, 12.7, 245, 3725)] == [
        "0.4s", "12s", "4m05s", "1h02m"]
    assert human_bytes(812) == "812 B" and human_bytes(3 << 20) == "3.0 MiB"
    assert short_path("/home/ada/src/demo/s.jsonl", 40, "/home/ada") == "~/src/demo/s.jsonl"
    cut = short_path("/home/ada/src/a/very/long/directory/name/session-1234.jsonl", 30)
    assert len(cut) == 30 and cut.endswith("…/session-1234.jsonl")


def test_home_as_tilde_only_under_a_real_home():
    """``~`` stands for the home directory and paths under it, not for a
    neighbour sharing its prefix; a home of ``/`` is no home (every absolute
    path would read ``~/…``)."""
    assert tilde("/home/ada", "/home/ada") == "~"
    assert tilde("/home/ada/src/x.jsonl", "/home/ada/") == "~/src/x.jsonl"
    assert tilde("/home/adam/x", "/home/ada") == "/home/adam/x"
    assert tilde("/etc/hosts", "/") == "/etc/hosts"
    assert short_path("/etc/hosts", 40, "/") == "/etc/hosts"


def test_pretty_keeps_values_byte_for_byte():
    raw = b'{"a":"caf\\u00e9 \xc3\xa9","n":1.50,"l":[1,{}]}'
    text = pretty_json(raw)
    assert text.splitlines()[1] == '  "a": "caf\\u00e9 é",'
    assert '"n": 1.50' in text
    assert msgspec.json.decode(text) == msgspec.json.decode(raw)


def test_raw_view_of_bad_lines_never_raises():
    view = raw_view(b'{"type": "assistant", "message": {', reason="JSON is malformed")
    assert not view.is_json and view.notes == ("malformed: JSON is malformed",)
    binary = raw_view(b"\xff\xfe\x1b[31m not json")
    assert not binary.is_json and binary.text == "\\xff\\xfe\\x1b[31m not json"
    assert any("UTF-8" in n for n in binary.notes)
    assert escape_bytes(b"a\x00b\x7f") == "a\\x00b\\x7f"
    assert raw_view(b"   ").text == "(empty line)"


def test_raw_view_truncates_huge_lines():
    big = msgspec.json.encode({"type": "user", "blob": ["x" * 100] * 300_000})  # ~31 MB
    view = raw_view(big)
    assert view.is_json and view.truncated and len(view.text) <= 200_000
    assert view.text.startswith('{\n  "type": "user",')
    assert "truncated" in view.notes[0]


# --- status bar -------------------------------------------------------------------------------


async def test_status_bar_shows_model_cost_turns_context_follow():
    session = load_path(STREAM / "06_background_bash.jsonl").session
    app = PanelsApp(session, source="/tmp/06_background_bash.jsonl")
    async with app.run_test(size=(160, 24)) as pilot:
        await pilot.pause()
        text = app.query_one(StatusBar).text
        assert "opus-5-5" in text
        assert "◇ idle" in text
        assert "1 turn " in text
        assert "$0.0172" in text
        assert "in 3.6k out 140" in text
        assert "ctx 1.2k/1M 0%" in text  # contextWindow from the result's modelUsage
        assert "▶ follow" in text
        assert "06_background_bash.jsonl" in text
        app.following, app.ended = False, "exited 3"
        app.refresh_panels()
        text = app.query_one(StatusBar).text
        assert "‖ paused (G to follow)" in text and "■ ended · exited 3" in text


async def test_status_bar_activity_thinking_running_loading():
    thinking = fold_until(STREAM / "04_thinking.jsonl",
                          line_of(STREAM / "04_thinking.jsonl",
                                  lambda d: d.get("subtype") == "thinking_tokens")).session
    assert thinking.activity.text == "thinking"
    app = PanelsApp(thinking, source="stdin", loading=(35_200_000, 100_012_133))
    async with app.run_test(size=(120, 24)) as pilot:
        await pilot.pause()
        text = app.query_one(StatusBar).text
        assert f"✻ thinking · {thinking.live_thinking_tokens} tok" in text
        assert "reading 35 of 100 MB ███▌░░░░░░" in text and "stdin" in text
        app.session = demo_mid_session().session
        app.loading = None
        app.refresh_panels()
        text = app.query_one(StatusBar).text
        assert "◐ running Bash" in text and "reading" not in text


async def test_status_bar_fits_80_columns_by_dropping_low_priority_parts():
    session = load_path(FORGE / "workflow.jsonl").session
    app = PanelsApp(session, source="cmd: claude -p 'run the workflow' --output-format "
                    "stream-json --verbose", following=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        bar = app.query_one(StatusBar)
        text = bar.text
        assert len(text) <= 78  # one line inside the bar's padding
        for must in ("◇ idle", "$1.49", "‖ paused (G to follow)", "opus-5[1m]"):
            assert must in text
        await pilot.resize_terminal(44, 24)
        await pilot.pause()
        narrow = bar.text
        assert len(narrow) <= 42 and "idle" in narrow and "paused" in narrow


# --- tasks panel ------------------------------------------------------------------------------


def test_task_rows_running_first_with_kinds_and_statuses():
    feed = fold_until(FORGE / "backgrounded_bash_alive_at_result.jsonl",
                      line_of(FORGE / "backgrounded_bash_alive_at_result.jsonl",
                              lambda d: d.get("type") == "result"))
    [row] = task_rows(feed.session)
    assert (row.kind, row.status, row.description) == ("shell", "running",
                                                       "Sleep 30 seconds then echo")
    rows = task_rows(demo_mid_session().session, now=DEMO_NOW)
    assert [(r.kind, r.status) for r in rows] == [
        ("shell", "running"), ("agent", "done")]
    shell, agent = rows
    # live: from the line that first listed it (background_tasks_changed, line 37)
    assert shell.elapsed == pytest.approx(DEMO_NOW - (T0 + 37))
    assert agent.agent_id and agent.subagent_type == "general-purpose"
    assert (agent.last_tool, agent.tokens, agent.tool_uses) == ("Read", 1234, 2)
    step = line_of(STREAM / "05_subagent.jsonl",
                   lambda d: d.get("description") == "Reading utils.py")
    [running_agent] = task_rows(fold_until(STREAM / "05_subagent.jsonl", step).session)
    assert (running_agent.status, running_agent.activity) == ("running", "Reading utils.py")
    assert "⋯ Reading utils.py" in render_row(running_agent, 60).plain
    full = task_rows(load_path(FORGE / "stop_task.jsonl").session)
    assert [(r.kind, r.status, r.state) for r in full] == [
        ("agent", "interrupted", "stopped")]
    monitor = task_rows(load_path(FORGE / "monitor_persistent_stream.jsonl").session)
    assert [r.kind for r in monitor] == ["monitor"]
    [workflow] = task_rows(load_path(FORGE / "workflow.jsonl").session)
    assert workflow.kind == "workflow" and [p.label for p in workflow.phases] == [
        "phase 1 · Run", "ping", "pong"]


async def test_tasks_panel_lists_running_first_and_updates_in_place():
    path = DEMO
    feed = Feed()
    lines = [ln for batch in read_file_lines(path) for ln in batch]
    feed.feed(lines[:41], received_at=T0)
    app = PanelsApp(feed.session, side=False, now=T0 + 5)
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.pause()
        panel = app.query_one(TasksPanel)
        ol = panel.option_list
        ids = [o.id for o in ol.options]
        assert ids == ["hdr:running", "task:b0q8m16pb", "hdr:finished",
                       "agent:toolu_01POmk2Upx4u34UIjZsjjwy3"]
        shell = str(ol.get_option("task:b0q8m16pb").prompt)
        assert shell.startswith("◐ shell") and "Run a short job in the background" in shell
        agent = str(ol.get_option("agent:toolu_01POmk2Upx4u34UIjZsjjwy3").prompt)
        assert agent.startswith("✓ agent") and "general-purpose" in agent
        assert "Read" in agent and "1.2k tok · 2 tools" in agent and "output " in agent
        # the user moves to the sub-agent row; later frames must not move them
        await pilot.press("down")
        assert ol.highlighted_option.id == "agent:toolu_01POmk2Upx4u34UIjZsjjwy3"
        # the background shell completes: the panel hears of it through the change records
        panel.note_changes(feed.session, feed.feed(lines[41:46], received_at=T0 + 9))
        app.now = T0 + 10
        app.refresh_panels()
        await pilot.pause()
        assert [o.id for o in ol.options] == [
            "hdr:finished", "agent:toolu_01POmk2Upx4u34UIjZsjjwy3", "task:b0q8m16pb",
            "task:bx04gjnra"]
        assert ol.highlighted_option.id == "agent:toolu_01POmk2Upx4u34UIjZsjjwy3"
        assert str(ol.get_option("task:b0q8m16pb").prompt).startswith("✓ shell")
        # a clock tick with nothing new replaces prompts, keeps the highlight
        app.now = T0 + 20
        app.refresh_panels()
        await pilot.pause()
        assert ol.highlighted_option.id == "agent:toolu_01POmk2Upx4u34UIjZsjjwy3"


async def test_tasks_panel_enter_on_sub_agent_posts_open_agent():
    session = load_path(STREAM / "05_subagent.jsonl").session
    app = PanelsApp(session)
    async with app.run_test(size=(100, 24)) as pilot:
        await pilot.pause()
        ol = app.query_one(TasksPanel).option_list
        assert ol.highlighted_option.id == "agent:toolu_01POmk2Upx4u34UIjZsjjwy3"
        prompt = str(ol.highlighted_option.prompt)
        assert "Survey the demo project" in prompt and "agent · general-purpose · Read" in prompt
        await pilot.press("enter")
        await pilot.pause()
        assert app.opened == ["toolu_01POmk2Upx4u34UIjZsjjwy3"]


async def test_tasks_panel_empty_and_toggle():
    session = load_path(STREAM / "01_simple_text.jsonl").session
    app = PanelsApp(session)
    async with app.run_test(size=(100, 24)) as pilot:
        await pilot.pause()
        panel = app.query_one(TasksPanel)
        assert [o.id for o in panel.option_list.options] == ["empty"]
        assert panel.toggle() is False and not panel.display
        assert panel.toggle() is True and panel.display


# --- raw view ---------------------------------------------------------------------------------


async def test_raw_screen_pretty_json_line_number_and_copy():
    feed = load_path(STREAM / "05_subagent.jsonl")
    entry = feed.entry_at(4)
    app = ScreenApp(lambda: RawScreen(entry, "05_subagent.jsonl"))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, RawScreen)
        assert screen.title_text == (
            f"line 4 · offset {entry.offset:,} · system/task_started · "
            f"{human_bytes(len(entry.raw))}")
        body = str(screen.query_one("#raw-body", Static).content)
        assert body == pretty_json(entry.raw)
        assert '  "subtype": "task_started",' in body
        await pilot.press("y")
        await pilot.pause()
        assert app.copied == [entry.raw.decode()]
        assert any(f"copied {len(entry.raw)} bytes" in str(n.message)
                   for n in app._notifications)
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, RawScreen)


async def test_raw_screen_malformed_and_non_utf8_lines():
    bad = decode_line(b'{"type":"assistant","message":{"content":[\xff\xfe', 7, 1234)
    assert bad.kind == "malformed"
    app = ScreenApp(lambda: RawScreen(bad))
    async with app.run_test(size=(90, 20)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert screen.title_text.startswith("line 7 · offset 1,234 · malformed · ")
        notes = str(screen.query_one("#raw-notes", Static).content)
        assert "malformed:" in notes and "UTF-8" in notes
        body = str(screen.query_one("#raw-body", Static).content)
        assert body == '{"type":"assistant","message":{"content":[\\xff\\xfe'
        await pilot.press("c")
        assert app.copied == [bad.raw.decode("utf-8", "replace")]
        await pilot.press("q")
        assert not isinstance(app.screen, RawScreen)


async def test_raw_screen_huge_line_is_truncated_but_copied_whole():
    raw = msgspec.json.encode({"type": "user", "message": {"role": "user",
                                                           "content": "x" * (12 << 20)}})
    entry = decode_line(raw, 1, 0)
    app = ScreenApp(lambda: RawScreen(entry))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        notes = str(app.screen.query_one("#raw-notes", Static).content)
        assert "truncated" in notes
        await pilot.press("y")
        assert len(app.copied[0]) == len(raw)


# --- help ----------------------------------------------------------------------------------------


async def test_help_lists_bindings_by_group_and_legend():
    app = ScreenApp(lambda: HelpScreen(HELP_ROWS))
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.pause()
        keys = str(app.screen.query_one("#help-keys", Static).content)
        for key, description, group in HELP_ROWS:
            assert group in keys and description in keys and key in keys
        assert keys.index("Move") < keys.index("Transcript") < keys.index("Panels")
        legend = str(app.screen.query_one("#help-legend", Static).content)
        for glyph in "○◐✓✗⊘⏸⚓✻⚠":
            assert glyph in legend
        await pilot.press("question_mark")
        assert not isinstance(app.screen, HelpScreen)


def test_help_rows_from_bindings():
    from textual.binding import Binding

    rows = HelpScreen.rows_from_bindings([
        Binding("t", "tasks", "Tasks panel"), Binding("j", "down", "", show=False),
        Binding("slash", "search", "Search", key_display="/",
                group=Binding.Group(description="Find")),
    ], group="Session")
    assert rows == [("t", "Tasks panel", "Session"), ("/", "Search", "Find")]


# --- snapshots -----------------------------------------------------------------------------------


def test_snapshot_panels_wide(snap_compare):
    app = PanelsApp(demo_mid_session().session, side=False, now=DEMO_NOW,
                    source="/home/ada/src/demo/demo_session.jsonl")
    assert snap_compare(app, terminal_size=(120, 36))


def test_snapshot_panels_side_80x24(snap_compare):
    app = PanelsApp(load_path(STREAM / "05_subagent.jsonl").session, side=True,
                    source="/home/ada/src/demo/05_subagent.jsonl", following=False,
                    ended="exited 0", now=T0)
    assert snap_compare(app, terminal_size=(80, 24))


def test_snapshot_panels_workflow_light(snap_compare):
    app = PanelsApp(load_path(FORGE / "workflow.jsonl").session, side=False, now=T0,
                    source="cmd: claude -p … --output-format stream-json",
                    loading=(3, 4), theme="textual-light")
    assert snap_compare(app, terminal_size=(120, 36))


def test_snapshot_raw_screen(snap_compare):
    entry = load_path(STREAM / "05_subagent.jsonl").entry_at(13)
    assert snap_compare(ScreenApp(lambda: RawScreen(entry, "05_subagent.jsonl")),
                        terminal_size=(100, 30))


def test_snapshot_raw_screen_malformed_light(snap_compare):
    bad = decode_line(b'{"type":"user","message":{"content":"half a line\xff\x1b[31m', 12, 9876)
    assert snap_compare(ScreenApp(lambda: RawScreen(bad, "broken.jsonl"), theme="textual-light"),
                        terminal_size=(80, 24))


def test_snapshot_help(snap_compare):
    assert snap_compare(ScreenApp(lambda: HelpScreen(HELP_ROWS)), terminal_size=(100, 36))


PREVIEWS = {  # for looking at the screens by hand (see tests' SVGs for the real thing)
    "wide": (lambda: PanelsApp(demo_mid_session().session, side=False, now=DEMO_NOW),
             (120, 36), None),
    "side80": (lambda: PanelsApp(load_path(STREAM / "05_subagent.jsonl").session,
                                 following=False, ended="exited 0", now=T0), (80, 24), None),
    "workflow_light": (lambda: PanelsApp(load_path(FORGE / "workflow.jsonl").session,
                                         side=False, now=T0, loading=(3, 4),
                                         theme="textual-light"), (120, 36), None),
    "raw": (lambda: ScreenApp(lambda: RawScreen(
        load_path(STREAM / "05_subagent.jsonl").entry_at(13), "05_subagent.jsonl")),
        (100, 30), None),
    "help": (lambda: ScreenApp(lambda: HelpScreen(HELP_ROWS)), (100, 36), None),
}
