"""Tool cards: one object per tool kind, its row count matching its body, the
canonical tool built once per call, and the Grep and WebFetch cards on real
recordings."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.console import Console

import cctv.reducer.queries as queries
from cctv.reducer.fold import Session
from cctv.reducer.state import MAIN, ToolCall, ToolItem
from cctv.reducer.tools import Raw
from cctv.viewer.loader import load_path
from cctv.widgets.cards import Palette, RenderContext, estimate_height, render_item
from cctv.widgets.cards.base import EXPAND_ROWS
from cctv.widgets.cards.card import CARDS, ToolCard, card_for, register
from conftest import FIXTURES

PUBLIC = FIXTURES / "public" / "claude-code-log" / "real_projects"
GREP_SESSION = PUBLIC / "-Users-dain-workspace-danieldemmel-me-next" / \
    "9e953218-585f-4692-89df-9e0747a31c68.jsonl"
CONSOLE = Console(width=200, color_system="truecolor")


def _recordings() -> list[Path]:
    return sorted(p for p in FIXTURES.rglob("*.jsonl") if "subagents" not in p.parts)


def _calls(path: Path, name: str):
    session = load_path(path).session
    for agent in session.agents.values():
        for item in agent.items:
            if isinstance(item, ToolItem) and item.call.name == name:
                yield session, item


def drawn(item, session: Session, width: int = 100, expanded: bool = False) -> list[str]:
    ctx = RenderContext(session, CONSOLE, Palette())
    return [s.text.rstrip() for s in render_item(item, width, expanded, ctx)]


def _first_with(name: str, predicate=lambda item: True) -> tuple[Session, ToolItem]:
    for path in _recordings():
        for session, item in _calls(path, name):
            if predicate(item):
                return session, item
    raise AssertionError(f"no {name} call in the fixtures")


def test_collapsed_estimates_match_the_drawn_cards_on_every_recording() -> None:
    """The row count each card gives is what its body draws, for every tool card
    in every vendored recording; the Edit count runs no diff, so it is an upper
    bound the view corrects once the card is drawn."""
    checked = bounded = 0
    kinds: set[str] = set()
    for path in _recordings():
        session = load_path(path).session
        ctx = RenderContext(session, CONSOLE, Palette())
        for agent in session.agents.values():
            for item in agent.items:
                if not isinstance(item, ToolItem):
                    continue
                kind = type(card_for(item.call, queries.canonical_tool(item.call))).__name__
                kinds.add(kind)
                for width in (40, 100):
                    rendered = len(render_item(item, width, False, ctx))
                    estimate = estimate_height(item, width, False, session)
                    if kind == "EditCard":
                        assert rendered <= estimate <= rendered + 8, (path, item.call.name)
                        bounded += estimate != rendered
                    else:
                        assert estimate == rendered, (path, item.call.name)
                    checked += 1
    assert checked > 1000 and bounded < checked // 50
    assert {"BashCard", "EditCard", "ReadCard", "WriteCard", "TodoCard", "AgentCard",
            "GenericCard", "GrepCard", "WebFetchCard"} <= kinds


def test_the_canonical_tool_is_built_once_per_call(monkeypatch: pytest.MonkeyPatch) -> None:
    session, item = _first_with("Edit")
    item.call.tool = None
    built = []
    real = queries.tool_from_use
    monkeypatch.setattr(queries, "tool_from_use", lambda n, i: built.append(n) or real(n, i))
    for expanded in (False, True, False):
        drawn(item, session, expanded=expanded)
        estimate_height(item, 100, expanded, session)
    assert built == ["Edit"]


def test_an_edit_estimate_runs_no_diff(monkeypatch: pytest.MonkeyPatch) -> None:
    session, item = _first_with("Edit")
    import difflib

    def no_diff(*args, **kwargs):
        raise AssertionError("the estimate ran a diff")

    monkeypatch.setattr(difflib, "SequenceMatcher", no_diff)
    assert estimate_height(item, 100, False, session) >= 2
    assert estimate_height(item, 100, True, session) >= 2


def test_a_giant_edit_is_shown_as_its_changed_block_without_a_full_diff() -> None:
    at = EXPAND_ROWS * 3 // 4  # on the first page
    old = "\n".join(f"line {i}" for i in range(5000))
    new = old.replace(f"line {at}\n", f"line {at} changed\n")
    call = ToolCall("t1", "Edit", {"file_path": "a.txt", "old_string": old, "new_string": new},
                    MAIN, 0, 1, status="done")
    rows = drawn(ToolItem(MAIN, 1, 0, call=call), Session(), expanded=True)
    assert f"  - line {at}" in rows and f"  + line {at} changed" in rows
    assert len(rows) == 1 + EXPAND_ROWS + 1  # a page, then how much more
    # 5,000 kept + 1 replaced = 5,001 rows
    assert rows[-1].strip().startswith(f"… {5001 - EXPAND_ROWS:,} more lines")


def test_grep_card_shows_pattern_place_and_matches() -> None:
    session, item = next(_calls(GREP_SESSION, "Grep"))
    rows = drawn(item, session)
    assert rows[0].startswith("● Grep  /rewrites/ in /Users/dain/workspace/danieldemmel.me-next/next.config.js")
    assert rows[1].strip().startswith("-n · ")
    assert len(rows) == estimate_height(item, 100, False, session)


def test_grep_card_lists_files_in_files_mode() -> None:
    session, item = _first_with(
        "Grep", lambda it: (r := queries.structured_result(it.call, _grep_result())) is not None
        and r.mode == "files_with_matches" and len(r.filenames) > 1)
    rows = drawn(item, session, expanded=True)
    result = queries.structured_result(item.call, _grep_result())
    assert f"{len(result.filenames)} files" in rows[1]
    assert rows[2].strip() == result.filenames[0]


def _grep_result():
    from cctv.widgets.cards.tools.grep import GrepResult

    return GrepResult


def test_webfetch_card_shows_url_question_status_and_answer() -> None:
    from cctv.widgets.cards.tools.webfetch import FetchResult

    session, item = _first_with(
        "WebFetch", lambda it: queries.structured_result(it.call, FetchResult) is not None)
    url = item.call.input["url"]
    rows = drawn(item, session, width=160)
    assert rows[0].startswith(f"● WebFetch  {url}"[:150])
    assert rows[1].strip().startswith("? ")
    result = queries.structured_result(item.call, FetchResult)
    assert rows[2].strip().startswith(f"{result.code} {result.codeText}")
    assert result.result.split("\n")[0][:60] in rows[3]


def test_a_new_tool_card_is_one_registered_class() -> None:
    @register
    class ShoutCard(ToolCard):
        names = frozenset({"Shout"})

        def summary(self, call, tool):
            return call.name, str(call.input.get("word", "")).upper()

        def body(self, call, tool, body, width, expanded, ctx):
            body.add("!" * 3)

        def rows(self, call, tool, width, expanded, session):
            return 1

    try:
        call = ToolCall("t2", "Shout", {"word": "hi"}, MAIN, 0, 1, status="done")
        item = ToolItem(MAIN, 1, 0, call=call)
        assert isinstance(queries.canonical_tool(call), Raw)
        assert drawn(item, Session()) [:2] == ["● Shout  HI" + " " * (100 - 12) + "✓", "  !!!"]
        assert estimate_height(item, 100, False, Session()) == 2
    finally:
        CARDS[:] = [c for c in CARDS if not isinstance(c, ShoutCard)]
