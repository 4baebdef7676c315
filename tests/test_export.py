"""Markdown export: ``cctv export PATH --md`` and the palette command, on real recordings.

What matters to a reader of the file: every prompt, reply, tool call and
result is in it (nothing cut), what a filter hides is left out, fences are
never closed early by the content, and no control byte of the input reaches
the file."""

from __future__ import annotations

import io
import re
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from cctv.reducer.export_md import export_markdown
from cctv.reducer.filters import ViewFilter
from cctv.reducer.item_time import ItemTimes
from cctv.reducer.state import MAIN, PromptItem, TextItem, ThinkingItem, ToolItem, Turn, TurnFooterItem
from cctv.reducer.turn_footer import turn_footer
from cctv.reducer.queries import bash_result, result_text
from cctv.viewer.cli import main
from cctv.viewer.loader import load_path
from cctv.widgets.cards import Palette, RenderContext, render_item

from conftest import FIXTURES, recordings

ROOT = Path(__file__).resolve().parents[1]
STREAM = FIXTURES / "captures" / "stream"
PROJECT = FIXTURES / "captures" / "projects" / "-home-ada-src-demo"
SUBAGENT_SESSION = PROJECT / "d7acffbd-7cff-4056-82e8-4364dc8df14a.jsonl"
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def _flat(text: str) -> str:
    """Words in order, with the quote markers and indentation Markdown adds removed."""
    return " ".join(re.sub(r"(?m)^(\s*>)+", " ", text).split())


def _contains_text(md: str, text: str) -> bool:
    """Every word of ``text`` appears in ``md``, in order (indentation and the
    quoting of a prompt aside; control characters as their escapes)."""
    escaped = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)
    return _flat(escaped.replace("&lt;", "<")) in _flat(md.replace("&lt;", "<"))  # as rendered


def _sessions() -> list[Path]:
    public = sorted((FIXTURES / "public").rglob("*.jsonl"))
    return [p for p in recordings() + public if "subagents" not in p.parts]


@pytest.mark.parametrize("path", _sessions(), ids=lambda p: str(p.relative_to(FIXTURES)))
def test_export_loses_no_text(path: Path) -> None:
    feed = load_path(path)
    md = export_markdown(feed.session, time_of=ItemTimes(feed).of)
    assert not _CONTROL.search(md.replace("\t", ""))
    for agent in feed.session.agents.values():
        for item in agent.items:
            if item.hidden:
                continue
            if isinstance(item, (PromptItem, TextItem)) and item.text.strip():
                assert _contains_text(md, item.text), (item.kind, item.line_no)
            elif isinstance(item, ThinkingItem) and item.text.strip():
                assert _contains_text(md, item.text), (item.kind, item.line_no)
            elif isinstance(item, ToolItem):
                assert f"**{item.call.name}**" in md
                bash = bash_result(item.call) if item.call.name == "Bash" else None
                texts = [bash.stdout, bash.stderr] if bash is not None else \
                    [result_text(item.call)]
                for text in texts:
                    if text.strip():
                        assert _contains_text(md, text), (item.call.name, item.line_no)


def test_export_of_a_session_with_a_subagent_nests_its_transcript() -> None:
    feed = load_path(SUBAGENT_SESSION)
    md = export_markdown(feed.session, time_of=ItemTimes(feed).of)
    assert md.startswith("# ")
    assert "## you · " in md and "Use a sub-agent to survey the project." in md
    assert "<details><summary>sub-agent general-purpose: Survey the demo project" in md
    sub = md[md.index("<details><summary>sub-agent"):]
    assert "**Bash** `ls -1`" in sub and "README.md" in sub and "**Read**" in sub


def test_fences_outlast_backticks_in_the_content() -> None:
    from cctv.reducer.export_md import _fence

    body = "text\n```\ninner fence\n```\nmore ````` five"
    fenced = _fence(body)
    ticks = fenced.split("\n", 1)[0]
    assert len(ticks) == 6 and fenced.endswith("\n" + ticks)
    assert body in fenced


def test_control_bytes_are_escaped(tmp_path: Path) -> None:
    import json

    lines = (STREAM / "01_simple_text.jsonl").read_text().splitlines()
    out = []
    for line in lines:
        frame = json.loads(line)
        if frame.get("type") == "assistant":
            for block in frame["message"]["content"]:
                if block.get("type") == "text":
                    block["text"] = "title \x1b]0;owned\x07 and clipboard \x1b]52;c;aGk=\x07 end"
        out.append(json.dumps(frame))
    path = tmp_path / "hostile.jsonl"
    path.write_text("\n".join(out) + "\n")
    md = export_markdown(load_path(path).session)
    assert "\x1b" not in md and "\x07" not in md
    assert "\\x1b]0;owned\\x07" in md


def test_html_in_a_reply_cannot_change_the_exports_structure(tmp_path: Path) -> None:
    """A reply holding ``</details><details open>`` closed the export's own
    block and opened another; HTML outside code is now written ``&lt;`` (it
    reads as written), and code keeps its text exactly."""
    import json

    reply = ("done </details><details open><summary>fake</summary> <script>alert(1)</script>\n"
             "keep `<b>inline</b>` and\n```html\n<div>fenced</div>\n```\nafter <i>x</i>")
    out = []
    for line in (STREAM / "01_simple_text.jsonl").read_text().splitlines():
        frame = json.loads(line)
        if frame.get("type") == "assistant":
            for block in frame["message"]["content"]:
                if block.get("type") == "text":
                    block["text"] = reply
            frame["message"]["content"].insert(0, {"type": "thinking", "thinking": reply,
                                                   "signature": "s"})
        out.append(json.dumps(frame))
    path = tmp_path / "html.jsonl"
    path.write_text("\n".join(out) + "\n")
    md = export_markdown(load_path(path).session)
    assert md.count("<details") == md.count("</details>") == 1  # the thinking block, only
    assert "done &lt;/details>&lt;details open>&lt;summary>fake&lt;/summary> " \
           "&lt;script>alert(1)&lt;/script>" in md
    assert "keep `<b>inline</b>` and" in md and "```html\n<div>fenced</div>\n```" in md
    assert "after &lt;i>x&lt;/i>" in md


def test_filters_leave_out_what_the_view_hides() -> None:
    feed = load_path(STREAM / "07_hooks.jsonl")
    full = export_markdown(feed.session)
    quiet = export_markdown(feed.session, view_filter=ViewFilter(hidden=frozenset({"hooks"})))
    assert "⚓ hook" in full and "⚓ hook" not in quiet
    assert "*Filtered view: hiding hooks.*" in quiet
    assert "hello from bash" in quiet
    errors = export_markdown(feed.session, view_filter=ViewFilter(only_errors=True))
    assert "exit 2" in errors and "**Bash**" not in errors


def test_cli_export_to_stdout_and_file(tmp_path: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    import contextlib

    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        assert main(["export", str(STREAM / "03_tools.jsonl"), "--md"]) == 0
    md = out.getvalue()
    assert "**Grep** `TODO`" in md and "notes.txt:2:- TODO: add a --name flag" in md

    target = tmp_path / "out.md"
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert main(["export", str(STREAM / "07_hooks.jsonl"), "--md", "-o", str(target),
                     "--hide", "hooks,thinking"]) == 0
    assert "wrote" in err.getvalue()
    text = target.read_text()
    assert "⚓ hook" not in text and "hiding hooks, thinking" in text

    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert main(["export", str(STREAM / "07_hooks.jsonl"), "--md", "--hide", "nope"]) == 2
    assert "unknown kind nope" in err.getvalue()
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert main(["export", str(tmp_path / "missing.jsonl"), "--md"]) == 2
    assert "no such file" in err.getvalue()


def test_cli_export_runs_as_a_command() -> None:
    res = subprocess.run([sys.executable, "-m", "cctv.viewer.cli", "export",
                          str(STREAM / "05_subagent.jsonl"), "--md", "--only-tool", "Agent"],
                         capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert res.returncode == 0, res.stderr
    # the filter holds inside the nested sub-agent transcript too, as in its view
    assert "**Agent**" in res.stdout and "**Bash**" not in res.stdout
    assert "sub-agent general-purpose: Survey the demo project" in res.stdout
    assert "*Filtered view: only Agent.*" in res.stdout


async def test_palette_export_writes_a_file_and_names_it(tmp_path: Path, monkeypatch) -> None:
    from cctv.viewer.app import CctvApp
    from cctv.viewer.palette import export_view
    from cctv.widgets.transcript import TranscriptView

    monkeypatch.chdir(tmp_path)
    app = CctvApp(None, feed=load_path(STREAM / "07_hooks.jsonl"), clock=None)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await pilot.press("f")  # quiet
        await pilot.pause()
        export_view(app, whole=False)
        await app.workers.wait_for_complete()
        await pilot.pause()
        files = sorted(tmp_path.glob("cctv-*.md"))
        assert len(files) == 1
        text = files[0].read_text()
        assert "hiding hooks, harness, thinking" in text and "⚓ hook" not in text
        notes = [str(n.message) for n in app._notifications]
        assert any(str(files[0]) in n and "filtered view" in n for n in notes)
        export_view(app, whole=True)  # never overwrites: a second file
        await app.workers.wait_for_complete()
        await pilot.pause()
        files = sorted(tmp_path.glob("cctv-*.md"))
        assert len(files) == 2
        assert any("⚓ hook" in f.read_text() for f in files)
        assert app.screen.query_one(TranscriptView).filter.active  # the view keeps its filter


def test_export_falls_back_to_the_cache_dir(tmp_path: Path, monkeypatch) -> None:
    from cctv.viewer.export import write_export

    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()  # the directory cctv was started in no longer exists
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    path = write_export("# hi\n", "cctv-x.md")
    assert path == tmp_path / "cache" / "cctv" / "exports" / "cctv-x.md"
    assert path.read_text() == "# hi\n"
    assert write_export("# again\n", "cctv-x.md").name == "cctv-x-2.md"


def test_a_turn_footer_has_the_same_figures_in_the_card_and_the_export() -> None:
    """The card and the export build a turn's footer with one function: the
    same number, time, cost, tokens and calls; the card adds the API's share of
    the time and counts "tools", the export counts "tool calls"."""
    feed = load_path(STREAM / "11_multi_turn.jsonl")
    session = feed.session
    ctx = RenderContext(session, Console(width=200), Palette())
    cards = [render_item(item, 120, False, ctx)[0].text.rstrip("─ ")
             for item in session.agents[MAIN].items if isinstance(item, TurnFooterItem)]
    assert cards == ["── turn 1 · 0.2s (api 0.1s) · $0.0108 · in 2.4k out 59 · 1 tool",
                     "── turn 2 · 0.2s (api 0.1s) · $0.0107 · in 2.4k out 56 · 1 tool"]
    md = export_markdown(session)
    assert [line for line in md.splitlines() if line.startswith("*turn ")] == [
        "*turn 1 · 0.2s · $0.0108 · in 2.4k out 59 · 1 tool call*",
        "*turn 2 · 0.2s · $0.0107 · in 2.4k out 56 · 1 tool call*"]


def test_a_turn_over_a_dollar_costs_the_same_in_every_view() -> None:
    """A turn's cost reads as every cost does (:func:`reducer.format.format_cost`):
    two decimals from a dollar up, in the card and the export alike."""
    turn = Turn(index=2, prompt="x", line_no=1, number=3, duration_ms=754_000, duration_api_ms=512_000,
                cost_usd=1.4913, tool_calls=12)
    assert turn_footer(turn) == ["turn 3", "12m34s (api 8m32s)", "$1.49", "12 tools"]
    assert turn_footer(turn, api_time=False, calls="tool call") == [
        "turn 3", "12m34s", "$1.49", "12 tool calls"]


REAL = FIXTURES / "public" / "claude-code-log" / "real_projects"
WRITING = [
    REAL / "-experiments-worktrees" / "ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl",  # Write, in sub-agents
    REAL / "-Users-dain-workspace-JSSoundRecorder" / "7acd37a8-2745-4b58-a8a9-46164b22ad9e.jsonl",  # Edit
    REAL / "-Users-dain-workspace-danieldemmel-me-next" / "f852ad25-1024-47da-964e-5eaae5bd6e6a.jsonl",  # MultiEdit
]


@pytest.mark.parametrize("path", WRITING, ids=lambda p: p.stem[:8])
def test_written_files_are_fenced_code_in_their_language_and_edits_diffs(path: Path) -> None:
    """A Write's content is a code fence in its file's language, line for line
    (not one JSON string full of ``\\n``); an Edit (each edit of a MultiEdit)
    is a diff fence, the old lines ``-`` and the new ``+``."""
    from cctv.reducer.export_md import _language

    session = load_path(path).session
    md = export_markdown(session)
    calls = [i.call for a in session.agents.values() for i in a.items if isinstance(i, ToolItem)]
    kinds = {c.name for c in calls}
    assert kinds & {"Write", "Edit", "MultiEdit"}
    lines = [line.strip() for line in md.splitlines()]  # (a sub-agent's is indented deeper)

    def fenced(lang: str, body: list[str]) -> bool:
        """``body`` right after a ``lang`` fence's opening line, line for line."""
        body = [line.strip() for line in body]
        return any(line.strip("`") == lang and line.startswith("```")
                   and lines[i + 1:i + 1 + len(body)] == body for i, line in enumerate(lines))

    checked = 0
    for call in calls:
        args = call.input if isinstance(call.input, dict) else {}
        if call.name == "Write":
            lang = _language(args["file_path"])
            name = args["file_path"].rsplit("/", 1)[-1]
            assert lang == (name.rsplit(".", 1)[1].lower() if "." in name.strip(".") else "")
            assert fenced(lang, args["content"].rstrip("\n").split("\n")), args["file_path"]
            checked += 1
        elif call.name in ("Edit", "MultiEdit"):
            edits = args["edits"] if call.name == "MultiEdit" else [args]
            for edit in edits:
                diff = [f"-{line}" for line in edit["old_string"].split("\n")] \
                    + [f"+{line}" for line in edit["new_string"].split("\n")]
                assert fenced("diff", diff), edit["old_string"][:60]
                checked += 1
    assert checked
    assert '"old_string": "' not in md and '"new_string": "' not in md


def test_hooks_say_command_or_output_and_images_their_count_and_type() -> None:
    """A hook the disk recorded by its command alone says ``command:``, not
    ``output:``; a prompt's images are a count and their media type (the
    heading once held their base64 data)."""
    ran = load_path(REAL / "-experiments-ideas" / "03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl").session
    md = export_markdown(ran)
    hooks = [h for h in ran.hooks.values() if h.status == "ran" and h.output]
    assert hooks and "command:\n\n" in md
    assert all(f"{h.output.splitlines()[0]}" in md for h in hooks)
    path = next(p for p in REAL.glob("*/*.jsonl") if p.stat().st_size and b'"type":"image"' in p.read_bytes())
    session = load_path(path).session
    prompts = [i for a in session.agents.values() for i in a.items
               if isinstance(i, PromptItem) and i.images]
    assert prompts
    md = export_markdown(session)
    for prompt in prompts:
        media = {s["media_type"] for s in prompt.images}
        assert f" · {len(prompt.images)} image{'s' if len(prompt.images) > 1 else ''} (" in md
        assert all(m in md for m in media)
    assert "base64" not in "\n".join(line for line in md.splitlines() if line.startswith("#"))
