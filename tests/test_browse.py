"""The session browser, driven like a user over projects trees built from the
real recordings: the list, grouping, sorting, narrowing, full-text hits,
opening (at a hit), coming back, the preview and the empty state.

``XDG_CACHE_HOME``, ``CLAUDE_CONFIG_DIR`` and ``HOME`` are in ``tmp_path``
(autouse fixture from ``test_index``): nothing real is read or written.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.widgets import DataTable, Input, OptionList, Static
from textual.widgets.data_table import ColumnKey

from cctv.reducer.format import format_cost, title_text
from cctv.reducer.state import MAIN, ToolItem
from cctv.viewer.app import BrowseOptions, CctvApp
from cctv.viewer.paths import demo_path
from cctv.viewer.index import SessionRow
from cctv.viewer.screens.browse import BrowseScreen, narrow, word_score
from cctv.viewer.screens.session import SessionScreen
from cctv.widgets.cards import margin_top
from cctv.widgets.safe_text import visible
from cctv.widgets.transcript import TranscriptView

from conftest import wait_for as _wait_for
from test_index import build_tree, isolated, tree_state  # noqa: F401 - autouse fixture

PYDANTIC = "b45ad5d8-81fb-4bcb-baba-19d9f503d731"


async def wait_for(pilot, condition: Callable[[], bool], timeout: float = 60.0) -> None:
    """:func:`conftest.wait_for`, with this file's longer default."""
    await _wait_for(pilot, condition, timeout)


def browser(root: Path) -> CctvApp:
    return CctvApp(None, clock=None, browse=BrowseOptions(root, examples=[demo_path()]))


def screen_of(app: CctvApp) -> BrowseScreen:
    screen = app.screen
    assert isinstance(screen, BrowseScreen)
    return screen


def table_rows(app: CctvApp) -> list[str]:
    """The keys of the table's rows, top to bottom (paths, or ``group:…``)."""
    table = app.screen.query_one("#sessions", DataTable)
    return [table.coordinate_to_cell_key((i, 0)).row_key.value for i in range(table.row_count)]


async def ready(pilot) -> BrowseScreen:
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, BrowseScreen)
                   and pilot.app.screen.refreshed)
    await pilot.pause()
    return screen_of(pilot.app)


@pytest.fixture(autouse=True)
def home_is_tmp(isolated: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``HOME`` is ``tmp_path`` itself, so the tree shows as ``~/cfg/projects``
    whatever the temporary folder is called (stable snapshots)."""
    monkeypatch.setenv("HOME", str(tmp_path))


@pytest.fixture
def projects(tmp_path: Path) -> Path:
    return build_tree(tmp_path)


def session_files(projects: Path) -> list[Path]:
    """The tree's sessions: its files but sub-agents' and the empty ones."""
    return sorted(p for p in projects.glob("*/*.jsonl")
                  if not p.name.startswith("agent-") and p.stat().st_size)


async def test_the_list_shows_every_session_newest_first(projects: Path) -> None:
    app = browser(projects)
    async with app.run_test(size=(160, 40)) as pilot:
        screen = await ready(pilot)
        keys = table_rows(app)
        assert sorted(keys) == sorted(str(p) for p in session_files(projects))
        stamps = [screen._by_path[k].last_activity or "" for k in keys]
        assert stamps == sorted(stamps, reverse=True)
        where = str(screen.query_one("#where", Static).render())
        assert f"{len(keys)} sessions under" in where and "sorted by last activity" in where
        assert where.endswith(" · 17 empty files skipped")  # 0-byte files are no sessions


async def test_grouping_and_sorting(projects: Path) -> None:
    app = browser(projects)
    async with app.run_test(size=(160, 40)) as pilot:
        screen = await ready(pilot)
        await pilot.press("g")
        keys = table_rows(app)
        groups = [k for k in keys if k.startswith("group:")]
        assert len(groups) == len({r.project for r in screen.rows})
        # under each header only that project's sessions
        current = None
        for key in keys:
            if key.startswith("group:"):
                current = key.removeprefix("group:")
            else:
                assert screen._by_path[key].project == current
        await pilot.press("g")
        screen.sort_by("tools")
        await pilot.pause()
        counts = [screen._by_path[k].tool_calls for k in table_rows(app)]
        assert counts == sorted(counts, reverse=True)
        await pilot.press("S")
        counts = [screen._by_path[k].tool_calls for k in table_rows(app)]
        assert counts == sorted(counts)
        await pilot.press("s")  # the next column: duration
        assert screen.sort_key == "duration"
        # a header click sorts by that column
        table = screen.query_one("#sessions", DataTable)
        table.post_message(DataTable.HeaderSelected(table, ColumnKey("title"), 1,
                                                    table.columns[ColumnKey("title")].label))
        await pilot.pause()
        titles = [title_text(screen._by_path[k].title).lower() for k in table_rows(app)]
        assert screen.sort_key == "title" and titles == sorted(titles)


def shown_columns(app: CctvApp) -> list[str]:
    table = app.screen.query_one("#sessions", DataTable)
    return [str(key.value) for key in table.columns]


@pytest.mark.parametrize(("size", "preview", "must", "hidden"), [
    ((160, 48), True, ["title", "last", "cost", "model"], ["branch", "size", "started"]),
    ((80, 24), False, ["title", "last", "cost"], ["size", "started"]),
    ((80, 24), True, ["title", "last"], ["cost", "size"]),
])
async def test_the_columns_that_matter_fit_the_width(projects: Path, size, preview, must,
                                                     hidden) -> None:
    """The columns shown are the ones the width holds, from the top of the
    priority order; none runs off the right (no sideways scrolling needed);
    the header names what is hidden."""
    app = browser(projects)
    async with app.run_test(size=size) as pilot:
        screen = await ready(pilot)
        if not preview:
            await pilot.press("p")
        await pilot.pause(0.2)
        table = screen.query_one("#sessions", DataTable)
        shown = shown_columns(app)
        assert shown[:2] == ["live", "title"] and set(must) <= set(shown), shown
        assert not set(hidden) & set(shown), shown
        assert table.virtual_size.width <= table.size.width  # nothing off to the right
        assert table.fixed_columns == 2
        where = str(screen.query_one("#where", Static).render())
        assert " hidden" in where and screen.fitted.hidden and len(where) <= size[0] - 2
        if "(" in where:  # the hint, where the width has room for it
            assert ("p: hide the preview" in where) == preview


async def test_sorting_by_a_hidden_column_brings_it_into_view(projects: Path) -> None:
    app = browser(projects)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await ready(pilot)
        await pilot.press("p")
        await pilot.pause(0.2)
        assert "size" not in shown_columns(app)
        screen.sort_by("size")
        await pilot.pause(0.2)
        shown = shown_columns(app)
        assert "size" in shown and shown[:3] == ["live", "title", "last"]
        table = screen.query_one("#sessions", DataTable)
        assert table.virtual_size.width <= table.size.width
        where = str(screen.query_one("#where", Static).render())
        assert "sorted by size" in where and "size" not in {c.key for c in screen.fitted.hidden}
        # the preview back: the list is narrower, the sorted column still shown
        await pilot.press("p")
        await pilot.pause(0.2)
        assert "size" in shown_columns(app)
        assert table.virtual_size.width <= table.size.width


async def test_the_palette_on_the_browser_offers_its_commands_not_a_session_s(
        projects: Path) -> None:
    from textual.command import CommandList, CommandPalette

    app = browser(projects)
    async with app.run_test(size=(160, 40)) as pilot:
        screen = await ready(pilot)

        async def offered(query: str) -> list[str]:
            await pilot.press("ctrl+p")
            await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette))
            await pilot.press(*query)
            await pilot.pause(0.3)
            found = app.screen.query_one(CommandList)
            return [visible(str(found.get_option_at_index(i).prompt), oneline=True)
                    for i in range(found.option_count)]

        toggles = await offered("toggle")
        assert any(t.startswith("Toggle the preview") for t in toggles)
        assert not any("tasks" in t or "time column" in t for t in toggles), toggles
        await pilot.press("escape")
        await pilot.pause()
        assert any(t.startswith("Group by project") for t in await offered("group by"))
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.screen is screen and screen.grouped)
        assert any(k.startswith("group:") for k in table_rows(app))


async def test_typing_narrows_at_once_and_text_hits_follow(projects: Path) -> None:
    app = browser(projects)
    async with app.run_test(size=(160, 40)) as pilot:
        screen = await ready(pilot)
        total = len(table_rows(app))
        await pilot.press("slash", *"pydanctic")
        keys = table_rows(app)  # the narrowing is synchronous
        assert 0 < len(keys) < total and PYDANTIC in keys[0]
        await wait_for(pilot, lambda: screen.hits_for == "pydanctic")
        hits = screen.query_one("#hits", OptionList)
        assert hits.display and hits.option_count == len(screen.hits)
        assert all("pydanctic" in h.plain.lower() for h in screen.hits)
        assert screen.last_search_s is not None and screen.last_search_s < 0.5
        # a word in no title or project: no sessions, only text hits
        await pilot.press(*["backspace"] * 9, *"greet")
        await wait_for(pilot, lambda: screen.hits_for == "greet")
        assert any("greet" in h.plain.lower() for h in screen.hits)
        await pilot.press("escape")
        assert screen.query_one("#search", Input).value == ""
        assert len(table_rows(app)) == total and not screen.hits


async def test_enter_opens_a_session_and_escape_comes_back_with_search_kept(projects: Path) -> None:
    app = browser(projects)
    async with app.run_test(size=(160, 40)) as pilot:
        screen = await ready(pilot)
        await pilot.press("slash", *"pydanctic", "enter")  # enter: to the results
        table = screen.query_one("#sessions", DataTable)
        assert table.has_focus
        chosen = screen.selected_row
        assert chosen is not None and chosen.session_id == PYDANTIC
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen)
                       and bool(app.shown.feed.session.turns) and app.shown.ended is not None)
        assert app.shown.feed.session.title == chosen.title
        assert len(app.shown.feed.session.calls) == chosen.tool_calls
        assert app.shown.source is not None and not app.shown.source.follow  # not live
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, BrowseScreen))
        assert app.screen is screen
        assert screen.query_one("#search", Input).value == "pydanctic"
        assert screen.selected_row is not None and screen.selected_row.path == chosen.path


async def test_enter_on_a_hit_opens_the_session_at_that_message(projects: Path) -> None:
    app = browser(projects)
    async with app.run_test(size=(160, 40)) as pilot:
        screen = await ready(pilot)
        await pilot.press("slash", *"ruff format")
        await wait_for(pilot, lambda: screen.hits_for == "ruff format")
        hit = screen.hits[0]
        hits = screen.query_one("#hits", OptionList)
        hits.focus()
        hits.highlighted = 0
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen) and app.shown.ended is not None)
        await pilot.pause(0.2)
        view = app.screen.query_one(TranscriptView)
        item = view.cursor_item
        assert item is not None and item.line_no == hit.line
        assert app.shown.source.path == Path(hit.session_path) == Path(hit.file)


async def test_enter_on_a_sub_agents_hit_opens_that_sub_agent_at_that_message(
        tmp_path: Path) -> None:
    """"grounding" is only in a sub-agent's reply, in its own file: the hit
    opens the session, then that sub-agent's screen with that reply selected."""
    projects = build_tree(tmp_path, captures=False)
    app = browser(projects)
    async with app.run_test(size=(160, 40)) as pilot:
        screen = await ready(pilot)
        await pilot.press("slash", *"grounding")
        await wait_for(pilot, lambda: screen.hits_for == "grounding")
        [hit] = screen.hits
        assert hit.agent is not None and "/subagents/" in hit.file
        # no title holds the word: the list says so, enter goes to the hits, the first selected
        assert "No title or project holds “grounding”" in str(screen.query_one("#empty").render())
        assert not screen.query_one("#sessions").display
        await pilot.press("enter")
        assert screen.query_one("#hits", OptionList).highlighted == 0
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen)
                       and app.screen.agent_id == hit.agent)
        await pilot.pause(0.2)
        item = app.screen.query_one(TranscriptView).cursor_item
        assert item is not None and item.agent == hit.agent and item.line_no == hit.line
        assert "grounding" in item.text.lower()
        assert "grounding" in Path(hit.file).read_text().splitlines()[hit.line - 1].lower()
        # back to the main transcript: the Agent card that started that sub-agent, selected and on screen
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.agent_id == MAIN)
        await pilot.pause(0.2)
        view = app.screen.query_one(TranscriptView)
        card = view.cursor_item
        assert isinstance(card, ToolItem) and card.call.subagent == hit.agent, card
        assert card.index > 0 and view.cursor_index == card.index
        top = round(view.scroll_y)
        first_row = view._index.start(card.index) + margin_top(card)  # its header, past its margin
        assert 0 < top <= first_row < top + view.size.height


def hits_title(screen: BrowseScreen) -> str:
    return str(screen.query_one("#hits", OptionList).border_title)


async def test_role_in_the_search_box_limits_the_hits_to_that_role(tmp_path: Path) -> None:
    """``role:tool_result`` beside the words: only the hits of tool output (the
    index's own role search, as ``cctv search --role``), the box's title saying
    so; the titles narrow by the words alone; ``ctrl+r`` cycles the role."""
    app = browser(build_tree(tmp_path, captures=False))
    async with app.run_test(size=(120, 30)) as pilot:
        screen = await ready(pilot)
        await pilot.press("slash", *"pytest")
        await wait_for(pilot, lambda: screen.hits_for == "pytest")
        every = screen.index.hit_count("pytest")
        assert {h.role for h in screen.hits} > {"tool_result"}
        await pilot.press(*" role:tool_result")
        await wait_for(pilot, lambda: screen.hits_for == "pytest role:tool_result")
        expected = screen.index.hit_count("pytest", "tool_result")
        assert 0 < expected < every and len(screen.hits) == expected
        assert {h.role for h in screen.hits} == {"tool_result"}
        assert hits_title(screen) == f"{expected} text matches · role: tool_result"
        assert "No title or project holds “pytest”" in str(screen.query_one("#empty").render())
        assert all("[tool_result]" in str(o.prompt) for o in screen.query_one("#hits", OptionList).options)

        # ctrl+r: the next role, written in the box; after the last one, every role again
        search = screen.query_one("#search", Input)
        search.value = "pytest "
        await wait_for(pilot, lambda: screen.hits_for == "pytest ")
        await pilot.press("ctrl+r")
        assert search.value == "pytest role:user "
        await wait_for(pilot, lambda: screen.hits_for == search.value)
        assert {h.role for h in screen.hits} <= {"user"} and "role: user" in hits_title(screen)
        await pilot.press(*["ctrl+r"] * 7)
        assert search.value == "pytest role:compaction "
        await pilot.press("ctrl+r")
        assert search.value == "pytest "
        await wait_for(pilot, lambda: screen.hits_for == "pytest ")
        assert len(screen.hits) == min(every, 500) and "role" not in hits_title(screen)

        # a role's start names it; one naming several, or none, is asked about
        search.value = "role:tool_r pytest"
        await wait_for(pilot, lambda: screen.hits_for == search.value)
        assert len(screen.hits) == expected
        search.value = "role:tool pytest"
        await wait_for(pilot, lambda: screen.hits_for == search.value)
        assert not screen.hits and hits_title(screen) == "role:tool — tool_use or tool_result?"
        search.value = "role:hook"
        await wait_for(pilot, lambda: screen.hits_for == search.value)
        assert hits_title(screen) == "type words to search · role: hook"
        assert len(table_rows(app)) == len(session_files(screen.root))  # no words: every title
        search.value = "zzqxnotaword role:hook"
        await wait_for(pilot, lambda: screen.hits_for == search.value)
        assert str(screen.query_one("#empty").render()) == "No matches for “zzqxnotaword” in hook texts."


async def test_an_id_shared_by_two_project_folders_lists_both_to_pick_from(tmp_path: Path) -> None:
    """``cctv browse ID`` (the id in the search box): the sessions of that id
    first, the note above naming each one's project folder in the list's
    order; each opens (its own file), escape comes back to the list."""
    projects = build_tree(tmp_path, real=False)
    sid = "d7acffbd-7cff-4056-82e8-4364dc8df14a"
    [original] = projects.glob(f"*/{sid}.jsonl")
    copy = projects / "-home-ada-src-other" / original.name
    copy.parent.mkdir()
    shutil.copyfile(original, copy)
    app = CctvApp(None, clock=None, browse=BrowseOptions(projects, search=sid[:8]))
    async with app.run_test(size=(120, 30)) as pilot:
        screen = await ready(pilot)
        await wait_for(pilot, lambda: screen.hits_for == sid[:8])
        assert screen.query_one("#search", Input).value == sid[:8]
        keys = table_rows(app)
        assert sorted(keys[:2]) == sorted([str(original), str(copy)])
        note = str(screen.query_one("#empty", Static).render()).splitlines()
        assert note == [f"2 sessions have the id {sid}; their project folders, in the list's order:",
                        *(f"· {Path(k).parent.name}" for k in keys[:2])]
        for row in (0, 1):
            screen.query_one("#sessions", DataTable).move_cursor(row=row)
            await pilot.press("enter")
            await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen))
            assert app.shown.source.path == Path(keys[row])
            await pilot.press("escape")
            await wait_for(pilot, lambda: app.screen is screen)
        # the whole id, or one naming a single session: no note
        screen.query_one("#search", Input).value = sid
        await pilot.pause()
        assert table_rows(app)[:2] == keys[:2] and screen.query_one("#empty").display
        screen.query_one("#search", Input).value = "142bb34b"
        await pilot.pause()
        assert Path(table_rows(app)[0]).name.startswith("142bb34b")
        assert not screen.query_one("#empty").display


async def test_a_search_nothing_holds_says_no_matches(projects: Path) -> None:
    app = browser(projects)
    async with app.run_test(size=(120, 30)) as pilot:
        screen = await ready(pilot)
        await pilot.press("slash", *"zzqxnotaword")
        await wait_for(pilot, lambda: screen.hits_for == "zzqxnotaword")
        assert str(screen.query_one("#empty").render()) == "No matches for “zzqxnotaword”."
        assert not screen.hits and not screen.query_one("#hits").display
        await pilot.press("escape")
        assert not screen.query_one("#empty").display and table_rows(app)


async def test_the_preview_shows_the_selected_session(projects: Path) -> None:
    app = browser(projects)
    async with app.run_test(size=(160, 40)) as pilot:
        screen = await ready(pilot)
        await pilot.press("slash", *"pydanctic", "enter")
        text = str(screen.query_one("#preview-text", Static).render())
        row = screen.selected_row
        assert row.first_prompt and " ".join(row.first_prompt.split())[:40] in " ".join(text.split())
        assert "Last reply" in text and f"{row.tool_calls} tool calls" in text
        await pilot.press("escape", "slash", *"hello bash", "enter")
        text = " ".join(str(screen.query_one("#preview-text", Static).render()).split())
        assert screen.selected_row.title.startswith("Say hello with bash.")
        assert "1 prompt · 1 tool call · " in text  # one of each, not "1 prompts"
        await pilot.press("p")
        assert not screen.query_one("#preview").display


async def test_an_empty_folder_says_where_it_looked_and_offers_the_examples(tmp_path: Path) -> None:
    empty = tmp_path / "cfg" / "projects"
    empty.mkdir(parents=True)
    app = browser(empty)
    async with app.run_test(size=(120, 30)) as pilot:
        screen = await ready(pilot)
        note = str(screen.query_one("#empty", Static).render())
        assert "No sessions under ~/cfg/projects" in note
        assert table_rows(app) == [str(demo_path())]
        table = screen.query_one("#sessions", DataTable)
        assert str(table.get_row_at(0)[1]).startswith("example: ")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen)
                       and bool(app.shown.feed.session.turns))


async def test_a_folder_not_there_yet_is_waited_for_quietly(tmp_path: Path, monkeypatch) -> None:
    """A new user's first run: no ``projects`` folder at all. The examples
    are offered with no warning about watching it; once the CLI makes it and
    saves a session, the session is listed."""
    from cctv.viewer.screens import browse as browse_module

    monkeypatch.setattr(browse_module, "REFRESH_EVERY_S", 0.2)
    missing = tmp_path / "cfg" / "projects"
    app = browser(missing)
    async with app.run_test(size=(120, 30)) as pilot:
        await ready(pilot)
        await pilot.pause(0.5)
        assert table_rows(app) == [str(demo_path())]
        assert not [n for n in app._notifications if "watch" in n.message]
        session = missing / "-home-ada-src-demo" / "s.jsonl"
        session.parent.mkdir(parents=True)
        shutil.copyfile(session_files(build_tree(tmp_path / "src", real=False))[0], session)
        await wait_for(pilot, lambda: str(session) in table_rows(app), timeout=10)
        assert not [n for n in app._notifications if "watch" in n.message]


async def test_browsing_never_writes_into_the_projects_folder(projects: Path) -> None:
    before = tree_state(projects.parent)
    app = browser(projects)
    async with app.run_test(size=(160, 40)) as pilot:
        screen = await ready(pilot)
        await pilot.press("slash", *"survey", "enter", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen) and app.shown.ended is not None)
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, BrowseScreen))
        screen.refresh_index()
        await pilot.pause(0.5)
    assert tree_state(projects.parent) == before


async def test_a_session_written_to_just_now_is_live_and_followed(projects: Path) -> None:
    live = session_files(projects)[0]
    live.touch()
    app = browser(projects)
    async with app.run_test(size=(160, 40)) as pilot:
        screen = await ready(pilot)
        table = screen.query_one("#sessions", DataTable)
        assert str(table.get_row(str(live))[0]).startswith("◆ needs you · ")
        others = [k for k in table_rows(app) if k != str(live)]
        assert all(str(table.get_row(k)[0]) == " " for k in others)
        table.move_cursor(row=table.get_row_index(str(live)))
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen))
        assert app.shown.source.follow


# --------------------------------------------------------------------------- snapshots


@pytest.mark.parametrize(
    ("name", "keys", "size", "theme"),
    [
        ("list", [], (160, 40), "textual-dark"),
        ("list_80x24_light", [], (80, 24), "textual-light"),
        ("grouped", ["g"], (160, 40), "textual-dark"),
        # (search is asserted by the pilot tests above: its picture depended on when the
        # debounced full-text worker landed, and differed run to run under load)
        ("empty", [], (120, 30), "textual-dark"),
        # the columns a width holds, with the preview and without (list: 160 with it)
        ("cols_80_no_preview", ["p"], (80, 24), "textual-dark"),
        ("cols_120", [], (120, 30), "textual-dark"),
        ("cols_120_no_preview", ["p"], (120, 30), "textual-dark"),
        ("cols_160_no_preview", ["p"], (160, 40), "textual-dark"),
    ],
)
def test_snapshots(snap_compare, tmp_path: Path, name: str, keys: list[str],
                   size: tuple[int, int], theme: str) -> None:
    if name == "empty":
        root = tmp_path / "cfg" / "projects"
        root.mkdir(parents=True)
        # the preview names the example's path: one that is the same from a checkout
        # and from an installed package, so the picture is too
        example = Path(tempfile.gettempdir()) / "cctv-snapshot-example" / "demo_session.jsonl"
        example.parent.mkdir(exist_ok=True)
        shutil.copyfile(demo_path(), example)
        app = CctvApp(None, clock=None, browse=BrowseOptions(root, examples=[example]))
    else:
        root = build_tree(tmp_path)
        app = browser(root)
    app.theme = theme

    async def settle(pilot) -> None:
        await ready(pilot)
        app.screen.query_one("#search", Input).cursor_blink = False  # a stable picture
        if keys:
            await pilot.press(*keys)
        if name == "search":
            await wait_for(pilot, lambda: screen_of(app).hits_for == "pytest")
        await pilot.pause(0.3)

    assert snap_compare(app, run_before=settle, terminal_size=size)


def test_bare_cctv_and_cctv_browse_open_the_browser(tmp_path: Path, monkeypatch) -> None:
    """``cctv`` on a terminal opens the browser over ``$CLAUDE_CONFIG_DIR/projects``;
    ``cctv browse DIR`` over DIR; ``cctv tail`` still follows the newest session."""
    from cctv.viewer import launch as launch_module
    from cctv.viewer.cli import main
    from cctv.viewer.sources import FileTail

    opened: list[tuple[str | None, bool]] = []
    monkeypatch.setattr(launch_module, "launch_browser",
                        lambda directory=None, *, use_index=True, search="":
                        opened.append((directory, use_index)) or 0)
    monkeypatch.setattr("sys.stdin.isatty", lambda: True, raising=False)
    assert main([]) == 0
    assert main(["browse", str(tmp_path), "--no-index"]) == 0
    assert opened == [(None, True), (str(tmp_path), False)]
    projects = build_tree(tmp_path)
    newest = session_files(projects)[-1]
    newest.touch()
    source = launch_module.build_source(["tail"])
    assert isinstance(source, FileTail) and source.follow and source.path == newest.resolve()


async def test_a_long_list_shows_its_first_rows_at_once_then_fills_in(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from cctv.viewer.screens import browse as browse_module

    monkeypatch.setattr(browse_module, "FILL_CHUNK", 300)  # a few chunks, of fewer files
    folder = tmp_path / "cfg" / "projects" / "-home-ada-src-demo"
    folder.mkdir(parents=True)
    source = (build_tree(tmp_path / "src") / "-home-ada-src-demo"
              / "e321c1d0-19a4-4a0d-819a-a0cf937b8a13.jsonl").read_bytes()
    count = browse_module.FILL_FIRST + 2 * browse_module.FILL_CHUNK + 7
    for i in range(count):
        path = folder / f"{i:08d}-0000-4000-8000-000000000000.jsonl"
        path.write_bytes(source)
        os.utime(path, (1_700_000_000 + i, 1_700_000_000 + i))
    app = browser(folder.parent)
    async with app.run_test(size=(120, 30)) as pilot:
        screen = await ready(pilot)
        table = screen.query_one("#sessions", DataTable)
        await wait_for(pilot, lambda: table.row_count == count)
        table.move_cursor(row=count - 3)
        chosen = screen.selected_row
        screen.sort_by("size")  # a rebuild keeps a selection far down the list
        assert table.row_count >= browse_module.FILL_FIRST
        assert screen.selected_row is not None and screen.selected_row.path == chosen.path
        await wait_for(pilot, lambda: table.row_count == count)
        await pilot.press("slash", *"demo")  # every one matches: the first rows at once
        assert browse_module.FILL_FIRST <= table.row_count <= count
        await wait_for(pilot, lambda: table.row_count == count)


@pytest.mark.parametrize("text", [
    "short", "a title that is much longer than the column", "日本語のタイトルがここにあります",
    "emoji 🎉🎉🎉 party time", "ctrl \x1b[31m red \x07 bell", "", "x" * 48, "x" * 49,
    "é combining e\u0301 accents", "tab\there", "[bold]not markup[/bold]"])
def test_a_cell_draws_as_the_rich_text_it_stands_for(text: str) -> None:
    """The table's cells are one segment each, cut to the column with an ellipsis:
    drawn at any width, the same as a Rich ``Text`` of the same safe text (wide
    characters, control characters and markup-like text included)."""
    from rich.console import Console
    from rich.text import Text

    from cctv.viewer.screens.browse import Cell

    console = Console(width=80, force_terminal=True, color_system=None)

    def drawn(renderable: object, width: int) -> list[str]:
        options = console.options.update_dimensions(width, 1).update(no_wrap=True)
        return ["".join(s.text for s in line)
                for line in console.render_lines(renderable, options, pad=True)]

    cell = Cell(text)
    assert str(cell) == visible(text, oneline=True)
    for width in (1, 2, 5, 10, 16, 48):
        expected = Text(visible(text, oneline=True), no_wrap=True, overflow="ellipsis")
        assert drawn(cell, width) == drawn(expected, width), width


# --- narrowing by title and project ---------------------------------------------------


def _row(title: str, project: str = "/home/ada/src/demo") -> SessionRow:
    return SessionRow(session_id=title[:8], path=f"/p/{title[:8]}.jsonl", project=project,
                      project_dir="p", title=title, first_prompt=title, git_branch=None,
                      started=None, last_activity=None, duration_s=None, status="idle", turns=1,
                      prompts=1, tool_calls=0, cost_usd=None, input_tokens=0, output_tokens=0,
                      cache_read_tokens=0, cache_write_tokens=0, model=None, bytes=0, subagents=0)


LONG = ("Hey Claude, I'd like your help with refactoring the timeline filtering so that we "
        "hide the group instead of all items that belong to a group as that would also "
        "collapse the row in the timeline. Find the TODO: hide vis-group comment")


def test_every_word_must_match_a_title_or_project() -> None:
    rows = [_row(LONG), _row("Fix the lint errors"), _row("Add a cache", "/src/timeline-app")]
    assert [r.title for r in narrow(rows, "refactor timeline")] == [LONG]
    assert [r.title for r in narrow(rows, "timeline")] == [LONG, "Add a cache"]
    assert narrow(rows, "lint cache") == []
    assert narrow(rows, "  ") == rows


def test_letters_in_order_match_within_a_short_span_only() -> None:
    rows = [_row(LONG), _row("Run the refactor script")]
    # an abbreviation matches both; the word itself ranks a title holding it at a word start first
    assert {r.title for r in narrow(rows, "rfctr")} == {LONG, "Run the refactor script"}
    assert [r.title for r in narrow(rows, "refactor script")] == ["Run the refactor script"]
    # "grounding"'s letters are all in LONG, in order, but scattered over it: no match
    assert narrow(rows, "grounding") == []
    assert word_score("rfctr", "refactoring") > 0 and word_score("grounding", LONG.casefold()) == 0


def test_a_word_start_ranks_above_the_middle_of_a_word() -> None:
    rows = [_row("Prefix handling"), _row("Fix handling")]
    assert [r.title for r in narrow(rows, "fix")] == ["Fix handling", "Prefix handling"]


def test_narrowing_is_linear_in_the_title() -> None:
    """Textual's fuzzy matcher tried every way to pick the letters: a two-word
    query over three long titles took 0.2 s, over 2,000 sessions minutes. Counted
    in calls of str.find, not timed: each word costs at most a few per letter."""
    calls = 0
    real_find = str.find

    class Counting(str):
        def find(self, *args):  # type: ignore[override]
            nonlocal calls
            calls += 1
            return real_find(self, *args)

    word_score("refactor", Counting(LONG.casefold()))
    word_score("tmln", Counting(LONG.casefold()))
    assert calls < 20 * len(LONG) // 10


async def test_the_preview_draws_the_context_per_turn_and_the_header_the_listed_total(
        projects: Path) -> None:
    app = browser(projects)
    async with app.run_test(size=(160, 40)) as pilot:
        screen = await ready(pilot)
        where = str(screen.query_one("#where", Static).render())
        listed = [r for r in screen.shown if r.cost_usd is not None]
        assert f"~{format_cost(sum(r.cost_usd for r in listed))} in all" in where
        # a session compacted once: its preview marks the turn after it
        await pilot.press("slash", *"summarize the readme", "enter")
        row = screen.selected_row
        assert row.session_id == "aafe1787-82bf-4f68-ae98-84dbe071fd7f"
        assert row.compacted == [False, True] and row.context == [1200, 1200]
        text = str(screen.query_one("#preview-text", Static).render())
        assert "context per turn · peak 1.2k of 1M (0%) · ▲ 1 compaction" in text
        assert "\n██\n ▲\n" in text
        where = str(screen.query_one("#where", Static).render())
        shown = [r for r in screen.shown if r.cost_usd is not None]
        assert all(r.cost_source == "recorded" for r in shown)
        assert f" {format_cost(sum(r.cost_usd for r in shown))} in all" in where and "~$" not in where
