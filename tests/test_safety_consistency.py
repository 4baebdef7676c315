"""Nothing repeated, nothing contradicting: one glyph and one word per status, one
set of formatters, a denial said once.

On real recordings: a stopped sub-agent reads the same on its card, in the tasks
panel and in help's legend; a permission denial shows its reason once, on the
call; a duration or a token count is spelled the same in every view. And the
source keeps it so: no module but :mod:`widgets.status_glyphs` spells a status
glyph, none but :mod:`reducer.format` defines a number formatter.
"""

from __future__ import annotations

import re
from pathlib import Path

from rich.console import Console

from cctv.reducer.format import compact_count, format_duration
from cctv.reducer.fold import Session
from cctv.reducer.state import MAIN, NoticeItem, ToolCall, ToolItem
from cctv.widgets.cards import Palette, RenderContext, render_item
from cctv.widgets.status_bar import status_parts
from cctv.widgets.status_glyphs import LEGEND, STATUSES, normalise
from cctv.widgets.tasks_panel import render_row, task_rows

from conftest import FIXTURES, fold_file

FORGE = FIXTURES / "forge" / "2.1.220"
ROOT = Path(__file__).resolve().parent.parent


def rows(item, session: Session, expanded: bool = False, width: int = 120) -> list[str]:
    ctx = RenderContext(session, Console(width=200), Palette())
    return [s.text.rstrip() for s in render_item(item, width, expanded, ctx)]


def test_a_stopped_subagent_reads_the_same_everywhere() -> None:
    # forge stop_task.jsonl: the task is "killed" (task_updated), then "stopped" (notification)
    session = fold_file(FORGE / "stop_task.jsonl").session
    card = next(i for i in session.main.items if isinstance(i, ToolItem) and i.call.subagent)
    drawn = "\n".join(rows(card, session))
    interrupted = STATUSES["interrupted"]
    assert f"{interrupted.glyph} {interrupted.word}" in drawn.splitlines()[0]
    assert f"{interrupted.glyph} {interrupted.word} · " in drawn  # the sub-agent line
    assert "⊘" not in drawn and "stopped" not in drawn.split("·")[0]
    row = next(r for r in task_rows(session) if r.agent_id == card.call.subagent)
    assert row.status == "interrupted"
    assert render_row(row, 120).plain.startswith(interrupted.glyph + " ")
    assert (interrupted.glyph, "interrupted (or stopped, killed, cancelled)") in \
        [(g, m) for g, m, _ in LEGEND]


def test_every_raw_status_word_has_one_of_six_statuses() -> None:
    for raw in ("pending", "queued", "running", "in_progress", "completed", "success", "done",
                "failed", "error", "denied", "killed", "stopped", "cancelled", "interrupted"):
        assert normalise(raw) in STATUSES
    glyphs = [s.glyph for s in STATUSES.values()]
    words = [s.word for s in STATUSES.values()]
    assert len(set(glyphs)) == len(glyphs) and len(set(words)) == len(words)
    legend = [g for g, _m, _s in LEGEND]
    assert len(set(legend)) == len(legend), "one meaning per glyph in the legend"


def test_a_permission_denial_is_shown_once_on_its_call_with_the_reason() -> None:
    reason = "forge-conformance denies in the scenario harness"
    for name in ("permission_deny.jsonl", "permission_deny.stdin.jsonl"):
        path = FORGE / name
        session = fold_file(path).session
        if not any(isinstance(i, ToolItem) and i.call.status == "denied"
                   for i in session.main.items):
            continue
        for expanded in (False, True):
            screen = [line for item in session.main.items
                      for line in rows(item, session, expanded)]
            text = "\n".join(screen)
            cards = [i for i in session.main.items
                     if isinstance(i, ToolItem) and i.call.status == "denied"]
            assert len(cards) == 1
            card_text = "\n".join(rows(cards[0], session, expanded))
            assert card_text.count(reason) == 1, card_text
            assert card_text.splitlines()[0].endswith("⊘ denied")
            assert f"⊘ {reason}" in card_text
            assert "[permission denied]" not in text
            assert not any(isinstance(i, NoticeItem) and i.category == "permission denied"
                           for i in session.main.items)


def test_a_duration_and_a_count_read_the_same_in_card_panel_and_status_bar() -> None:
    session = fold_file(FIXTURES / "captures" / "stream" / "06_background_bash.jsonl").session
    call = ToolCall("toolu_x", "Bash", {"command": "make"}, MAIN, 0, 1, status="running",
                    elapsed=12.4)
    card = rows(ToolItem(MAIN, 1, 0, call=call), session)[0]
    assert card.endswith(f"◐ running {format_duration(12.4)}") and format_duration(12.4) == "12s"
    row = next(iter(task_rows(session)))
    panel = render_row(row, 120).plain
    if row.elapsed is not None:
        assert format_duration(row.elapsed) in panel
    bar = " ".join(p.content.plain for p in status_parts(session, source="x", following=True))
    tokens_in = (session.usage.input_tokens + session.usage.cache_creation_input_tokens
                 + session.usage.cache_read_input_tokens)
    assert f"in {compact_count(tokens_in)}" in bar
    footer = next(i for i in session.main.items if i.kind == "turn_footer")
    assert f"in {compact_count(tokens_in)}" in rows(footer, session)[0]


# --- the source keeps it so -----------------------------------------------------------------

_SOURCES = [p for top in ("widgets", "viewer") for p in (ROOT / top).rglob("*.py")]


def _code(path: Path) -> str:
    """The module without its docstrings and comments (examples there may show glyphs)."""
    text = path.read_text()
    text = re.sub(r'"""[\s\S]*?"""', "", text)
    return re.sub(r"#.*", "", text)


def test_status_glyphs_are_spelled_in_one_module() -> None:
    glyphs = [s.glyph for s in STATUSES.values()] + ["⚓", "✻"]
    for path in _SOURCES:
        if path.name == "status_glyphs.py":
            continue
        code = _code(path)
        found = [g for g in glyphs if g in code]
        assert not found, f"{path.relative_to(ROOT)} spells {found}: take them from status_glyphs"


def test_number_and_duration_formatters_are_defined_in_one_module() -> None:
    pattern = re.compile(r"^def (fmt_\w+|format_duration|compact_count|format_cost|human_bytes)",
                         re.M)
    for top in ("widgets", "viewer", "reducer"):
        for path in (ROOT / top).rglob("*.py"):
            if path.name == "format.py":
                continue
            assert not pattern.search(path.read_text()), path.relative_to(ROOT)
