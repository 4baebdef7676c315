"""No byte of the input acts on the terminal.

A hostile session is built from real recordings (both formats) by appending an
attack to every string a frame carries — model, cwd, tool and agent names, task
descriptions, commands, results, errors, hook output — and by putting it into the
folder and file names too. The real app is driven through every screen
(transcript with every item expanded, each sub-agent's drill-down, the tasks
panel, the raw view of each item, help, the command palette, the stderr screen
of ``cctv run``, notifications, the app title) and, at each step, the bytes
Textual would write to the terminal for the whole screen are scanned: apart from
Textual's own CSI sequences and http(s) hyperlinks, no control character may be
left, and the attack must be *shown* (``␛]0;PWNED``) rather than dropped.
Rich markup in the input (``[bold red]``, ``[link=…]``) must appear literally.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from cctv.reducer.safe import UNSAFE, visible
from cctv.reducer.state import MAIN, ToolItem
from cctv.viewer.app import CctvApp
from cctv.viewer.cli import main as cli_main
from cctv.viewer.screens.session import SessionScreen
from cctv.viewer.sources import CommandSource, FileTail
from cctv.widgets.transcript import TranscriptView

from conftest import FIXTURES, wait_for as _wait_for

STREAM = FIXTURES / "captures" / "stream"
PROJECT = FIXTURES / "captures" / "projects" / "-home-ada-src-demo"
SUBAGENT_SESSION = "d7acffbd-7cff-4056-82e8-4364dc8df14a"

MARKUP = "[bold red]MARKUP[/]"
LINK = "[link=file:///etc/passwd]LINK[/link]"
INVISIBLE = "zero\u200bwidth\u200djoin\ufeffbom\U000e0068\U000e0069"
"""A zero-width space and joiner, a BOM, and tag characters spelling hidden text."""
ATTACK = ("\x1b]0;PWNED-TITLE\x07\x1b]52;c;cHduZWQ=\x07\x1b[2J\x1b[31m\x9b1m\x07\x08\x7f"
          "\u202eevil\u202c\u2066x\u2069\r" + f" {MARKUP} {LINK} <b>html</b> {INVISIBLE}")
"""Title (OSC 0), clipboard (OSC 52), clear screen, colour, a C1 CSI, bell, DEL,
bidi override and isolate, a lone CR, Rich markup and a link, HTML, and
invisible format characters."""
INVISIBLE_SHOWN = "zero\\u200bwidth\\u200djoin\\ufeffbom\\U000e0068\\U000e0069"

DIR_MARKUP = "[bold red]DIR [link=file:passwd]LINK"
HOSTILE_DIR = f"{DIR_MARKUP} \x1b]0;DIRTITLE\x07 dir\u200b"
"""A folder name (no "/" can be in one): markup, a link, a title sequence, a zero-width space."""
HOSTILE_STEM = "\x1b]2;FILETITLE\x07[bold]file\u2060"

# what must never change: identities and the words the fold keys on
_KEEP = {"type", "subtype", "role", "status", "state", "stop_reason", "timestamp", "version",
         "uuid", "parentUuid", "leafUuid", "logicalParentUuid", "sessionId", "session_id",
         "id", "requestId", "promptId", "userType", "isSidechain", "operation", "level",
         "hookEvent", "hook_event", "event", "media_type", "encoding", "outcome",
         "terminal_reason", "permissionMode", "entrypoint", "trigger", "origin"}
_KEEP_NAMES = {"Agent", "Task"}  # a sub-agent's call must stay one, to be opened


def hostile(value, key: str = ""):
    """``value`` (decoded JSON) with :data:`ATTACK` appended to each string a
    viewer would show."""
    if isinstance(value, dict):
        return {k: hostile(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [hostile(v, key) for v in value]
    if not isinstance(value, str) or key in _KEEP or key.endswith(("_id", "Id", "ID")):
        return value
    if key == "name" and value in _KEEP_NAMES:
        return value
    return value + ATTACK


def hostile_lines(path: Path) -> bytes:
    out = []
    for raw in path.read_bytes().splitlines():
        try:
            frame = json.loads(raw)
        except ValueError:
            out.append(raw)
            continue
        out.append(json.dumps(hostile(frame)).encode())
    # and a line that is not JSON at all, and one of a kind nobody knows
    out.append(b"not json \x1b]0;MALFORMED\x07 \xc2\x9b")
    out.append(json.dumps({"type": "brand_new" + ATTACK, "x": ATTACK}).encode())
    return b"\n".join(out) + b"\n"


def hostile_stream(tmp_path: Path, name: str) -> Path:
    folder = tmp_path / HOSTILE_DIR
    folder.mkdir(exist_ok=True)
    path = folder / f"{HOSTILE_STEM}-{name}.jsonl"
    path.write_bytes(hostile_lines(STREAM / f"{name}.jsonl"))
    return path


def hostile_on_disk(tmp_path: Path) -> Path:
    folder = tmp_path / HOSTILE_DIR
    folder.mkdir(exist_ok=True)
    stem = SUBAGENT_SESSION + HOSTILE_STEM
    (folder / f"{stem}.jsonl").write_bytes(hostile_lines(PROJECT / f"{SUBAGENT_SESSION}.jsonl"))
    sub = folder / stem / "subagents"
    sub.mkdir(parents=True)
    for f in (PROJECT / SUBAGENT_SESSION / "subagents").iterdir():
        if f.suffix == ".jsonl":
            (sub / f.name).write_bytes(hostile_lines(f))
        else:
            shutil.copy(f, sub / f.name)
    return folder / f"{stem}.jsonl"


# --- what leaves the app ------------------------------------------------------------------

_CSI = re.compile(r"\x1b\[[0-9;:?<>=]*[ -/]*[@-~]")
_OSC8 = re.compile(r"\x1b\]8;[^;\x1b\x07]*;([^\x1b\x07]*)\x1b\\")


def terminal_output(app: CctvApp) -> str:
    """What Textual writes to the terminal to draw the whole current screen."""
    return app.screen._compositor.render_update(full=True).render_segments(app.console)


def checked(out: str) -> str:
    """The printable text of ``out`` after Textual's own sequences, asserting that
    nothing else in it can act on a terminal."""
    for url in _OSC8.findall(out):
        assert url == "" or url.startswith(("http://", "https://")), f"a link to {url!r}"
    text = _CSI.sub("", _OSC8.sub("", out))
    bad = sorted({f"U+{ord(c):04X}" for c in UNSAFE.findall(text)})
    assert not bad, f"control characters reach the terminal: {bad}"
    assert "\t" not in text
    return text


class Recorder:
    """Every screen drawn during a test, checked as it is taken."""

    def __init__(self, app: CctvApp) -> None:
        self.app = app
        self.shots: dict[str, str] = {}

    def take(self, what: str) -> str:
        text = checked(terminal_output(self.app))
        self.shots[what] = text
        return text

    @property
    def all(self) -> str:
        return "\n".join(self.shots.values())


async def wait_for(pilot, condition: Callable[[], bool], timeout: float = 10.0) -> None:
    """:func:`conftest.wait_for`, with this file's longer default."""
    await _wait_for(pilot, condition, timeout)


async def walk_every_screen(app: CctvApp, pilot, rec: Recorder) -> None:
    """Transcript (every item expanded, page by page), drill-downs, tasks panel,
    raw views, help and the command palette, each recorded."""
    await pilot.pause(0.2)
    rec.take("transcript")
    view = app.screen.query_one(TranscriptView)
    for item in list(view.items):
        if not view.is_expanded(item):
            view.toggle_expanded(item)
    await pilot.press("g")
    for page in range(40):
        await pilot.pause()
        rec.take(f"transcript page {page}")
        before = view.scroll_y
        await pilot.press("pagedown")
        if view.scroll_y == before:
            break
    # every item's raw frame
    items = [i for i, item in enumerate(view.items) if not item.hidden]
    for index in items[:60]:
        view.move_cursor(index)
        await pilot.press("r")
        await pilot.pause()
        if app.screen is not None and type(app.screen).__name__ == "RawScreen":
            rec.take(f"raw {index}")
            await pilot.press("escape")
            await pilot.pause()
    # each sub-agent's transcript
    for agent_id in [a for a in app.shown.feed.session.agents if a != MAIN]:
        app.open_agent(agent_id)
        await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen)
                       and app.screen.agent_id == agent_id)
        await pilot.pause(0.1)
        sub = app.screen.query_one(TranscriptView)
        for item in list(sub.items):
            sub.toggle_expanded(item)
        await pilot.pause()
        rec.take(f"agent {agent_id}")
        await pilot.press("escape")
        await pilot.pause()
    await pilot.press("t")
    await pilot.pause(0.3)
    rec.take("tasks panel")
    app.screen.query_one("#tasks").focus()
    await pilot.press("down", "down")
    await pilot.pause()
    rec.take("tasks panel focused")
    app.screen.query_one(TranscriptView).focus()
    await pilot.press("question_mark")
    await pilot.pause()
    rec.take("help")
    await pilot.press("escape")
    await pilot.press("ctrl+p")
    await pilot.pause(0.3)
    rec.take("palette")
    await pilot.press(*"sub")
    await pilot.pause(0.5)
    rec.take("palette search")
    await pilot.press("escape")
    await pilot.pause()
    app.title = "title " + ATTACK
    app.sub_title = "sub " + ATTACK
    assert UNSAFE.search(app.title) is None and UNSAFE.search(app.sub_title) is None
    assert "␛]0;PWNED-TITLE" in app.title and MARKUP in app.title


def assert_shown(rec: Recorder) -> None:
    """The attack is drawn as visible text, markup literal, no text dropped."""
    text = rec.all
    assert "␛]0;PWNED-TITLE␇" in text
    assert "␛]52;c;cHduZWQ=␇" in text
    assert "\\u202eevil" in text
    assert MARKUP in text and LINK in text
    assert "<b>html</b>" in text  # not taken for HTML and dropped
    assert INVISIBLE_SHOWN in text  # no invisible character left to hide words


@pytest.mark.parametrize("name", ["05_subagent", "06_background_bash", "07_hooks", "03_tools",
                                  "10_compact_manual"])
async def test_hostile_stream_json_session_reaches_no_terminal(tmp_path: Path, name: str) -> None:
    path = hostile_stream(tmp_path, name)
    intro = f"Following the most recent session: {path}"  # what `cctv tail` says
    app = CctvApp(FileTail(path, follow=False), clock=None, intro=intro)
    async with app.run_test(size=(200, 50), notifications=True) as pilot:
        await wait_for(pilot, lambda: app.shown.ended is not None)
        await pilot.pause(0.3)
        rec = Recorder(app)
        first = rec.take("start")
        # the notification and the status bar show the folder and file names literally
        assert "[bold red]DIR" in first and "␛]0;DIRTITLE␇" in first
        await walk_every_screen(app, pilot, rec)
        assert_shown(rec)
        assert "PWNED" in rec.shots["tasks panel"] or name not in ("05_subagent",
                                                                    "06_background_bash")


async def test_hostile_on_disk_session_and_its_subagent(tmp_path: Path) -> None:
    path = hostile_on_disk(tmp_path)
    app = CctvApp(FileTail(path, follow=False), clock=None,
                  intro=f"Following the most recent session: {path}")
    async with app.run_test(size=(200, 50), notifications=True) as pilot:
        session = app.shown.feed.session
        await wait_for(pilot, lambda: app.shown.ended is not None and any(
            a.id != MAIN and a.items for a in session.agents.values()))
        rec = Recorder(app)
        rec.take("start")
        await walk_every_screen(app, pilot, rec)
        assert_shown(rec)
        assert any(k.startswith("agent ") and "PWNED" in v for k, v in rec.shots.items())


ATTACK_SCRIPT = textwrap.dedent("""
    import sys
    attack = sys.argv[2]
    sys.stderr.write("stderr " + attack + "\\n")
    sys.stderr.write("\\x1b]52;c;c3RkZXJy\\x07 clipboard from stderr\\n")
    sys.stderr.flush()
    sys.stdout.buffer.write(open(sys.argv[1], "rb").read())
    sys.stdout.flush()
    sys.exit(3)
""")


async def test_hostile_command_stderr_and_exit_notice(tmp_path: Path) -> None:
    script = tmp_path / "emit.py"
    script.write_text(ATTACK_SCRIPT)
    frames = hostile_stream(tmp_path, "05_subagent")
    app = CctvApp(CommandSource([sys.executable, str(script), str(frames), ATTACK]), clock=None)
    async with app.run_test(size=(200, 50), notifications=True) as pilot:
        await wait_for(pilot, lambda: app.shown.ended is not None and len(app.shown.stderr) >= 2)
        rec = Recorder(app)
        rec.take("run")
        await pilot.press("s")
        await pilot.pause(0.3)
        assert type(app.screen).__name__ == "StderrScreen"
        text = rec.take("stderr")
        assert "stderr ␛]0;PWNED-TITLE␇" in text and "␛]52;c;c3RkZXJy␇" in text
        assert MARKUP in text


def test_the_sanitiser_shows_what_it_replaces() -> None:
    shown = visible("a\x1b]0;t\x07b\x9bc\u202ed\r\ne\tf\x7f")
    assert shown == "a␛]0;t␇b\\x9bc\\u202ed\ne   f␡"
    assert visible("one\ntwo", oneline=True) == "one two"
    assert visible("plain") == "plain"


@pytest.mark.parametrize(("text", "shown"), [
    ("pay\u200bpal", "pay\\u200bpal"),  # zero-width space
    ("ad\u200dmin", "ad\\u200dmin"),  # a joiner between Latin letters joins nothing
    ("\u200d", "\\u200d"),
    ("word\u2060joiner\u2063", "word\\u2060joiner\\u2063"),  # word joiner, invisible separator
    ("\ufeffbom", "\\ufeffbom"),
    ("soft\u00adhyphen", "soft\\xadhyphen"),
    ("ok\U000e0069\U000e0067\U000e006e", "ok\\U000e0069\\U000e0067\\U000e006e"),  # hidden text
    ("\u180emongolian\ufff9note", "\\u180emongolian\\ufff9note"),
    # what scripts and emoji need is kept
    ("\U0001f468\u200d\U0001f469\u200d\U0001f467", "\U0001f468\u200d\U0001f469\u200d\U0001f467"),
    ("\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645", "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"),
    ("\u0915\u094d\u200d\u0937", "\u0915\u094d\u200d\u0937"),
    ("\U0001f3f4\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f",
     "\U0001f3f4\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f"),
])
def test_invisible_format_characters_are_shown(text: str, shown: str) -> None:
    """Every character of Unicode's format category (Cf) is shown as its escape,
    so no name or title can look like another or hide words; joiners a script or
    an emoji needs, and a flag's tags, are kept."""
    from cctv.reducer.safe import escaped, is_safe

    assert visible(text) == visible(text, oneline=True) == shown
    assert escaped(text) == shown
    assert is_safe(text) == (shown == text)


def test_every_format_character_is_in_the_sanitiser() -> None:
    """The sanitiser's list of format characters is Unicode's (as this Python knows it)."""
    import unicodedata

    for code in range(0x110000):
        if unicodedata.category(chr(code)) == "Cf":
            assert visible(f"a{chr(code)}b") != f"a{chr(code)}b", f"U+{code:04X}"


def test_cards_draw_a_hostile_tool_name_and_ansi_output_safely() -> None:
    from rich.console import Console

    from cctv.reducer.fold import Session
    from cctv.reducer.state import ToolCall
    from cctv.widgets.cards import Palette, RenderContext, render_item

    call = ToolCall("t1", "Evil" + ATTACK, {"x": ATTACK}, MAIN, 0, 1, status="done",
                    result="\x1b[31mred\x1b[0m \x1b]8;;file:///etc/passwd\x1b\\click\x1b]8;;\x1b\\")
    ctx = RenderContext(Session(), Console(width=120), Palette())
    for expanded in (False, True):
        strips = render_item(ToolItem(MAIN, 1, 0, call=call), 100, expanded, ctx)
        for strip in strips:
            for seg in strip:
                assert UNSAFE.search(seg.text) is None, seg.text
                assert seg.style is None or not seg.style.link, seg.style
        assert "␛]0;PWNED-TITLE␇" in "".join(s.text for s in strips)


@pytest.mark.parametrize("command", ["summary", "check"])
def test_headless_text_output_shows_control_bytes(capsys, tmp_path: Path, command: str) -> None:
    path = hostile_stream(tmp_path, "05_subagent")
    cli_main([command, str(path)])
    out, err = capsys.readouterr()
    assert UNSAFE.search(out) is None and UNSAFE.search(err) is None
    assert "␛" in out
    if command == "summary":
        assert "␛]0;PWNED-TITLE␇" in out  # the model name, the title


# --- the screens main gained: the browser, replay, a task's output file --------------------


async def test_hostile_projects_tree_in_the_browser(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A projects folder with a hostile folder name, file name, cwd, branch and
    title: the list, the grouped list, the preview, the full-text hits and the
    opened session show it all as text."""
    from textual.widgets import OptionList

    from cctv.viewer.app import BrowseOptions
    from cctv.viewer.paths import demo_path
    from cctv.viewer.screens.browse import BrowseScreen

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cfg"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    projects = tmp_path / "cfg" / "projects"
    projects.mkdir(parents=True)
    hostile_on_disk(projects)
    app = CctvApp(None, clock=None, browse=BrowseOptions(projects, examples=[demo_path()]))
    async with app.run_test(size=(200, 50), notifications=True) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, BrowseScreen)
                       and app.screen.refreshed and bool(app.screen.rows), timeout=60)
        await pilot.pause(0.2)
        screen = app.screen
        row = screen.rows[0]
        assert ATTACK.strip() in row.project and ATTACK.strip() in (row.git_branch or "")
        rec = Recorder(app)
        listed = rec.take("browser")
        assert "␛]0;PWNED-TITLE␇" in listed  # the preview: title, project, branch
        assert "[bold red]DIR" in listed and "␛]0;DIRTITLE␇" in listed  # the file's folder
        assert "dir\\u200b" in listed
        await pilot.press("g")
        await pilot.pause(0.2)
        rec.take("browser grouped")
        await pilot.press("g")  # back to the plain list (a group header opens nothing)
        await pilot.pause(0.1)
        await pilot.press("slash", *"evil")
        await wait_for(pilot, lambda: screen.hits_for == "evil")
        await pilot.pause(0.2)
        assert screen.query_one("#hits", OptionList).option_count
        hits = rec.take("browser hits")
        assert "\\u202eevil" in hits
        await pilot.press("escape")
        screen.query_one("#sessions").focus()
        await pilot.pause()
        await pilot.press("enter")
        # (the file was written just now: the browser opens it live, following)
        await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen)
                       and bool(app.shown.feed.session.turns), timeout=30)
        await pilot.pause(0.2)
        rec.take("opened from the browser")
        assert_shown(rec)


async def test_hostile_replay_inspector_and_timeline(tmp_path: Path) -> None:
    """Every frame of a hostile recording in ``cctv replay``: the inspector's raw
    frame and change descriptions, the timeline and the bar."""
    from cctv.viewer.replay.app import ReplayApp
    from cctv.viewer.replay.recording import load_recording

    path = hostile_stream(tmp_path, "05_subagent")
    recording = load_recording(path)
    replay = recording.replay(interval=4)
    list(replay.build_checkpoints())
    app = ReplayApp(recording, replay=replay, start=1, build_checkpoints=False,
                    label=path.name)
    async with app.run_test(size=(200, 50), notifications=True) as pilot:
        await pilot.pause(0.2)
        rec = Recorder(app)
        for position in range(1, len(replay) + 1):
            app.go_to(position)
            await pilot.pause()
            rec.take(f"replay frame {position}")
        text = rec.all
        assert "␛]0;PWNED-TITLE␇" in text and MARKUP in text and LINK in text
        assert "\\x1b]0;MALFORMED\\x07" in text  # the line that is not JSON, its bytes escaped
        app.go_to(len(replay) // 2)
        await pilot.press("right", "left")
        await pilot.pause()
        rec.take("replay stepped")


async def test_hostile_task_output_file(tmp_path: Path) -> None:
    """A task's output file with escapes in its bytes, its name and its title."""
    from cctv.viewer.screens.output import OutputScreen

    folder = tmp_path / HOSTILE_DIR
    folder.mkdir()
    output = folder / f"{HOSTILE_STEM}.output"
    output.write_bytes(b"tick 1\n" + ATTACK.encode() + b"\n\xff\xfe raw bytes\n")
    app = CctvApp(FileTail(hostile_stream(tmp_path, "06_background_bash"), follow=False),
                  clock=None)
    async with app.run_test(size=(200, 50), notifications=True) as pilot:
        await wait_for(pilot, lambda: app.shown.ended is not None)
        app.push_screen(OutputScreen(str(output), "shell · " + ATTACK))
        await pilot.pause(0.3)
        rec = Recorder(app)
        text = rec.take("output file")
        assert type(app.screen).__name__ == "OutputScreen"
        assert "tick 1" in text and MARKUP in text and "[bold red]DIR" in text
        await pilot.press("R")
        await pilot.pause()
        rec.take("output file reloaded")


def test_a_crlf_output_shows_its_lines_not_their_carriage_returns() -> None:
    """A CRLF line break is a line break (no ``␍`` at each line's end); a lone CR,
    which could overwrite what is shown, is still shown as ``␍``."""
    from rich.console import Console

    from cctv.reducer.fold import Session
    from cctv.reducer.state import ToolCall
    from cctv.widgets.cards import Palette, RenderContext, render_item

    ctx = RenderContext(Session(), Console(width=120), Palette())
    for result, rows in (("one\r\ntwo\r\n", ["one", "two"]), ("one\r\n", ["one"]),
                         ("10%\r20%", ["10%␍20%"])):
        call = ToolCall("t1", "Tool", {}, MAIN, 0, 1, status="done", result=result)
        for expanded in (False, True):
            drawn = [s.text.strip() for s in render_item(ToolItem(MAIN, 1, 0, call=call), 100,
                                                         expanded, ctx)]
            assert drawn[-len(rows):] == rows, drawn
