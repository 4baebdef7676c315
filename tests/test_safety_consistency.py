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


# --- one of each: one truncation, one ~, one timestamp parser, one plural, one footer ---------

_ALL = [p for top in ("reducer", "widgets", "viewer") for p in (ROOT / top).rglob("*.py")]

_HOMES = {
    "clip": "reducer/format.py", "short_id": "reducer/format.py",
    "short_path": "reducer/format.py", "tilde": "reducer/format.py",
    "plural": "reducer/format.py", "parse_timestamp": "reducer/timestamps.py",
    "turn_footer": "reducer/turn_footer.py", "home": "widgets/home.py",
}
"""Each helper that exists once, and the one module that defines it."""


def _where(path: Path) -> str:
    return str(path.relative_to(ROOT))


def test_each_one_of_a_kind_helper_is_defined_in_its_one_module() -> None:
    pattern = re.compile(r"^\s*def (\w+)\(", re.M)
    for path in _ALL:
        for name in pattern.findall(path.read_text()):
            assert _HOMES.get(name, _where(path)) == _where(path), \
                f"{_where(path)} defines {name}(): use the one in {_HOMES[name]}"


_CUTS = re.compile(
    r"""\[[^\[\]]*:[^\[\]]*\](?:\.rstrip\(\))?\s*\+\s*f?["']…"""  # text[: width - 1] + "…"
    r"""|["']…["']\s*\+\s*\w+\s*\["""                                # "…" + text[-width:]
)
_PLURALS = re.compile(
    r"""["'](?:e?s)["']\s+if\s+[^"'\n]+?!=\s*1\s+else"""   # 's' if n != 1 else ''
    r"""|==\s*1\s+else\s+["'](?:e?s)["']"""                # '' if n == 1 else 's'
)


def test_text_is_cut_to_a_width_by_format_clip_alone() -> None:
    """No module but :mod:`reducer.format` slices text and adds ``…`` (a table
    cell cut to terminal cells is Rich's ``set_cell_size``, not a slice)."""
    assert _CUTS.search('return text if len(text) <= w else text[: w - 1] + "…"')
    assert _CUTS.search('return "…" + name[-(width - 1):]')
    for path in _ALL:
        if _where(path) == "reducer/format.py":
            continue
        found = _CUTS.search(_code(path))
        assert not found, f"{_where(path)} cuts text itself ({found.group()!r}): use format.clip"


def test_a_count_and_its_word_go_through_plural() -> None:
    assert _PLURALS.search("""f"{n} tool{'s' if n != 1 else ''}\"""")
    assert _PLURALS.search('f"{n} turn" + ("" if n == 1 else "s")')
    for path in _ALL:
        found = _PLURALS.search(_code(path))
        assert not found, f"{_where(path)} pluralises inline ({found.group()!r}): use format.plural"


def test_home_as_tilde_and_iso_timestamps_have_one_place_each() -> None:
    for path in _ALL:
        code, where = _code(path), _where(path)
        if where != "reducer/format.py":
            assert not re.search(r"""["']~["']\s*\+""", code), f"{where} writes ~ itself: use format.tilde"
        if where != "widgets/home.py":
            assert 'expanduser("~")' not in code and "environ.get(\"HOME\")" not in code, \
                f"{where} reads the home directory: use widgets.home.home"
        if where != "reducer/timestamps.py":
            assert "fromisoformat(" not in code and "strptime(" not in code, \
                f"{where} parses a timestamp: use timestamps.parse_timestamp"


def test_no_module_only_passes_another_on() -> None:
    """No re-export shim ("kept for older imports"): nothing star-imports."""
    for path in _ALL:
        assert not re.search(r"^\s*from \S+ import \*", path.read_text(), re.M), _where(path)


_SHARED_NAMES = {
    "__init__.py": "every package",
    "app.py": "viewer/: the live viewer and browser; viewer/replay/: the replay app",
    "lines.py": "reducer/: a source's raw lines; widgets/transcript/: the view's laid-out lines",
    "messages.py": "reducer/fold/: the fold's part for assistant and user messages; "
                   "viewer/: the Textual messages screens post to the app",
    "rows.py": "viewer/index/: the index's row structs; widgets/transcript/: a row's pieces",
    "session.py": "reducer/fold/: the Session its parts make; viewer/screens/: the session "
                  "screen, named as its sibling screens are",
}
"""The file names two modules share, and what each holds: no other name repeats."""


def test_no_two_modules_share_a_name_but_the_known_ones() -> None:
    seen: dict[str, list[str]] = {}
    for path in _ALL:
        seen.setdefault(path.name, []).append(_where(path))
    repeated = {name for name, where in seen.items() if len(where) > 1}
    assert repeated <= set(_SHARED_NAMES), {n: seen[n] for n in repeated - set(_SHARED_NAMES)}
