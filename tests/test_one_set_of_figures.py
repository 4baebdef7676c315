"""One session, one set of figures: every surface that shows a session's
figures gives the same ones, for every recording in the fixtures.

The surfaces: ``cctv summary --json``, the session index's row (``cctv
sessions --json``, the browser's columns and preview), the status bar's text,
the tasks panel, the turn footers and the Markdown export's header. The figures: turns,
prompts, tool calls, tokens in and out, cost, sub-agents, title and the final
state of a settled file. Add a surface, add it here."""

from __future__ import annotations

import io
import json
import os
import re
from pathlib import Path

import pytest

from cctv.reducer.export_md import export_markdown
from cctv.reducer.facts import call_duration
from cctv.reducer.costs import Cost, cost_text
from cctv.reducer.format import WORDS, compact_count, format_duration, plural, title_text
from cctv.reducer.state import TurnFooterItem
from cctv.reducer.turn_footer import turn_footer
from cctv.viewer.headless import run_summary
from cctv.viewer.index.extract import extract
from cctv.viewer.loader import load_path
from cctv.viewer.sources import FileTail
from cctv.widgets.status_bar import status_parts
from cctv.widgets.task_rows import task_rows
from conftest import FIXTURES, wait_for
from test_pairing_counts import sessions

README = Path(__file__).resolve().parent.parent / "README.md"


def _header(md: str) -> tuple[str, list[str]]:
    """The export's title and the facts of its first line after it."""
    lines = md.splitlines()
    assert lines[0].startswith("# ")
    return lines[0][2:], lines[2].split(" · ")


def _bar(session) -> list[str]:
    """The status bar's fields of a settled file, as text."""
    parts = status_parts(session, source="x.jsonl", following=False, settled=True)
    return [part.content.plain for part in sorted(parts, key=lambda p: p.order)]


_BAR_STATES = {"◇ idle": "idle", "■ ended": "ended"}


@pytest.mark.parametrize("path", sessions(), ids=lambda p: str(p.relative_to(FIXTURES)))
def test_every_surface_gives_the_same_figures(path: Path) -> None:
    out = io.StringIO()
    code = run_summary(str(path), True, out, io.StringIO())
    summary = json.loads(out.getvalue())
    assert code == (0 if summary["verdict"] is None else 1)
    session = load_path(path, keep_raw=False).session
    if summary["verdict"] is not None:
        pytest.skip("not a Claude Code session: no figures to compare")
    turns, prompts = summary["turns"], summary["prompts"]
    calls, subagents, cost = summary["tool_calls"]["total"], summary["subagents"], summary["cost_usd"]
    usage = summary["usage"]
    tokens_in = (usage["input_tokens"] + usage["cache_read_input_tokens"]
                 + usage["cache_creation_input_tokens"])
    tokens_out = usage["output_tokens"]

    # the index's row, read by the index's own reader
    stat = path.stat()
    row = extract(str(path), str(path.parent), stat.st_size, stat.st_mtime).row.as_json(0.0, 0.0)
    assert {k: row[k] for k in ("title", "status", "turns", "prompts", "tool_calls", "cost_usd",
                                "subagents", "input_tokens", "output_tokens")} == {
        "title": summary["title"], "status": summary["status"], "turns": turns,
        "prompts": prompts, "tool_calls": calls, "cost_usd": cost, "subagents": subagents,
        "input_tokens": usage["input_tokens"], "output_tokens": tokens_out}
    assert (row["cache_read_tokens"], row["cache_write_tokens"]) == (
        usage["cache_read_input_tokens"], usage["cache_creation_input_tokens"])

    # the status bar of the file, settled
    bar = _bar(session)
    assert plural(turns, WORDS["turns"]) in bar
    shown = cost_text(Cost(cost, summary["cost_source"]))  # ~ marks an estimate, – unknown
    assert shown in bar
    assert f"{WORDS['in']} {compact_count(tokens_in)} {WORDS['out']} {compact_count(tokens_out)}" in bar
    state = summary["status"]
    assert _BAR_STATES.get(bar[0], bar[0]) == state if state in ("idle", "ended") \
        else bar[0] not in _BAR_STATES

    # the tasks panel: the same tasks, each with the same status and duration
    rows = {(r.agent_id, r.task_id): (r.status, None if r.elapsed is None else round(r.elapsed, 3))
            for r in task_rows(session)}
    assert rows == {(t["agent_id"], t["task_id"]): (t["status"], t["duration_s"])
                    for t in summary["tasks"]}

    # the turn footers: at most one per model turn (a CLI that writes no turn's end
    # has none), numbered as the turns are counted
    footers = [turn_footer(item.turn_ref) for item in session.main.items
               if isinstance(item, TurnFooterItem) and not item.hidden]
    numbers = [int(parts[0].removeprefix("turn ")) for parts in footers]
    assert numbers == sorted(set(numbers)) and set(numbers) <= set(range(1, turns + 1))

    # the export's header
    title, facts = _header(export_markdown(session))
    assert title == title_text(summary["title"]) or summary["title"] is None or "\\" in title
    assert facts[facts.index(state):][:4] == [
        state, plural(turns, WORDS["turns"]), plural(prompts, WORDS["prompts"]),
        plural(calls, WORDS["tool_calls"])]
    assert (plural(subagents, WORDS["subagents"]) in facts) == bool(subagents)
    assert (cost is None) or shown in facts
    assert facts[-1] == (f"{WORDS['in']} {compact_count(tokens_in)}"
                         f" {WORDS['out']} {compact_count(tokens_out)} tokens")


def test_a_finished_sub_agent_took_as_long_in_the_panel_as_on_its_card() -> None:
    """The demo (CLI 2.1.328, stream-json) mid-session, frames stamped with arrival
    times as a live read stamps them: its sub-agent's call took 0.2 s (its card);
    the tasks panel said 9.0 s, the time between its task frames' arrivals (the
    issue's "8.9 s in the panel, 3.2 s on the card")."""
    from test_panels import demo_mid_session

    session = demo_mid_session().session
    (row,) = [r for r in task_rows(session) if r.agent_id is not None]
    call = session.calls[row.agent_id]
    assert row.status == "done" and row.elapsed is not None
    # the panel shows the CLI's own figure (215 ms), the card its call's (217 ms)
    assert format_duration(row.elapsed) == format_duration(call_duration(call)) == "0.2s"


# --- the final state of a settled file, however it was opened -------------------------------

IDEAS = (FIXTURES / "public/claude-code-log/real_projects/-experiments-ideas/"
         "03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl")  # ends with /exit
DONE = FIXTURES / "captures/projects/-home-ada-src-demo/8e4b2dbb-330b-4d03-a3ef-8b4c8ce07f1e.jsonl"


@pytest.mark.parametrize(("path", "state"), [(IDEAS, "■ ended"), (DONE, "◇ idle")])
async def test_a_finished_session_reads_the_same_from_the_browser_and_by_path(
        path: Path, state: str, tmp_path: Path) -> None:
    """The browser opens a session that is not live without following it (its
    read ends: it read '■ ended'); by path it is followed (it read '◇ idle', and
    idle also when the session ended with /exit)."""
    from cctv.viewer.app import CctvApp
    from cctv.widgets.status_bar import StatusBar

    copy = tmp_path / path.name
    copy.write_bytes(path.read_bytes())
    old = copy.stat().st_mtime - 3600  # written an hour ago: not live
    os.utime(copy, (old, old))
    seen = []
    for follow in (False, True):
        app = CctvApp(FileTail(copy, follow=follow), clock=None)
        async with app.run_test(size=(160, 30)) as pilot:
            await wait_for(pilot, lambda: app.shown.loading is None and app.shown.feed.session.lines)
            await pilot.pause(0.2)
            app.screen.refresh_panels()
            seen.append(app.screen.query_one(StatusBar).text.split(" │ ")[0])
    assert seen == [state, state]


# --- one place for each figure's meaning ------------------------------------------------------


def test_the_words_of_the_figures_are_the_readme_table_s() -> None:
    """Each word a screen labels a figure with is explained in the README's
    ``cctv summary --json`` table, under the key it labels."""
    text = README.read_text()
    table = text[text.index("## `cctv summary --json`"):text.index("## Screens")]
    rows = {m.group(1): m.group(2) for m in re.finditer(r"^\| `(\w+)`[^|]*\| (.*) \|$", table, re.M)}
    for key in ("turns", "prompts", "tool_calls", "subagents", "tasks"):
        assert key in rows, key
        assert f"“{WORDS[key]}”" in rows[key], (key, rows[key])
    usage = rows["usage"]
    for word in ("in", "out", "uncached", "cache read", "cache write"):
        assert f"“{WORDS[word]}”" in usage, word


def test_the_help_says_the_status_bar_s_words() -> None:
    """``?`` names the status bar's fields with the words the bar shows them with."""
    from cctv.reducer.fold import Session
    from cctv.viewer.screens.help import _legend

    legend = _legend().plain
    bar = " ".join(_bar(Session()))
    for word in (f"{WORDS['turns']}s", f"{WORDS['in']} ", f" {WORDS['out']}"):
        assert word in legend and word in bar, word
    for word in ("uncached", "cache read", "cache write"):
        assert WORDS[word] in legend
