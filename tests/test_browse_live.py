"""The browser's live rows: real recordings written into the tree while the
browser runs, the row's state read from the screen after each write (from file
events, within 2 s), the header's counts, the live view, one notification per
change to needing you, and the row agreeing with ``cctv sessions --live --json``."""

from __future__ import annotations

import io
import json
import time
from pathlib import Path

import pytest
from textual.widgets import DataTable, Static

from cctv.reducer.live_state import APPROVAL_AFTER_S, HORIZON_S
from cctv.viewer.index.listing import run_sessions
from cctv.viewer.screens.browse import BrowseScreen
from cctv.viewer.screens.session import SessionScreen

from conftest import wait_for
from test_browse import browser, ready, table_rows
from test_index import build_tree, isolated  # noqa: F401 - autouse fixture
from test_sessions_live import INTERACTIVE, PERMISSION, TOOLS, Writer

EVENT_S = 2.0
"""A row says a file's change within this long."""


@pytest.fixture
def projects(tmp_path: Path) -> Path:
    root = build_tree(tmp_path, real=False)  # old sessions: none live
    return root


def cell(app, path: Path) -> str:
    table = app.screen.query_one("#sessions", DataTable)
    return str(table.get_row(str(path))[0]) if str(path) in table.rows else ""


def json_state(projects: Path, path: Path, capsys) -> tuple[str, str]:
    """What ``cctv sessions --live --json`` says of ``path`` now (its own
    streams: the app holds ``sys.stdout`` while it runs)."""
    out, err = io.StringIO(), io.StringIO()
    assert run_sessions(str(projects), True, True, out, err, live_within=HORIZON_S) == 0, err.getvalue()
    rows = {r["path"]: r for r in json.loads(out.getvalue())}
    row = rows[str(path)]
    return row["state"], row["activity"]


WORDS = {"working": "working", "needs_you": "needs you", "needs_approval": "needs approval"}


async def test_a_row_follows_its_file_step_by_step(projects: Path, capsys) -> None:
    app = browser(projects)
    bells: list[None] = []
    app.bell = lambda: bells.append(None)  # type: ignore[method-assign]
    async with app.run_test(size=(160, 40)) as pilot:
        screen = await ready(pilot)
        await pilot.pause(0.3)  # the folder is watched
        w = Writer(projects, TOOLS)
        steps = [
            (b'"type":"user"', "◐ working · 0s"),  # the model is asked
            (b'"command":"python3 test_utils.py', "◐ working · Bash "),
        ]
        for needle, expected in steps:
            w.through(needle)
            written = time.monotonic()
            await wait_for(pilot, lambda: cell(app, w.path).startswith(expected), timeout=10)
            assert time.monotonic() - written < EVENT_S + 1  # (a loaded machine: some slack)
            kind, activity = json_state(projects, w.path, capsys)
            assert cell(app, w.path).startswith(f"{'◐' if kind == 'working' else '?'} {WORDS[kind]}")
        # nothing more written: the quiet call may be a prompt
        await wait_for(pilot, lambda: cell(app, w.path).startswith("? needs approval · Bash? "),
                       timeout=APPROVAL_AFTER_S + 5)
        assert json_state(projects, w.path, capsys) == ("needs_approval", "waiting on Bash (approval?)")
        where = screen.query_one("#where", Static)
        assert "1 live · 1 needs you" in str(where.render())
        w.upto(len(w.lines))
        await wait_for(pilot, lambda: cell(app, w.path).startswith("◆ needs you"), timeout=10)
        assert json_state(projects, w.path, capsys)[0] == "needs_you"
        await pilot.pause(0.5)
        titles = [n.title for n in app._notifications]
        assert titles.count("needs approval") == 1 and titles.count("needs you") == 1
        assert len(bells) == 2


async def test_the_live_view_lists_only_live_sessions_attention_first(projects: Path) -> None:
    done = Writer(projects, INTERACTIVE)
    done.upto(len(done.lines))
    working = Writer(projects, TOOLS, "working.jsonl")
    working.through(b'"command":"python3 test_utils.py')
    asking = Writer(projects, PERMISSION, "asking.jsonl")
    asking.through(b'"subtype":"can_use_tool"')
    app = browser(projects)
    async with app.run_test(size=(160, 40)) as pilot:
        screen = await ready(pilot)
        assert len(table_rows(app)) > 3
        await pilot.press("l")
        assert table_rows(app) == [str(asking.path), str(done.path), str(working.path)]
        assert cell(app, asking.path).startswith("? needs approval · Write ")
        assert "3 live · 2 need you" in str(screen.query_one("#where", Static).render())
        # enter opens the session followed, at its end
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen))
        assert app.shown.source.follow and app.shown.source.path == asking.path
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, BrowseScreen))
        await pilot.press("l")
        assert len(table_rows(app)) > 3


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_live_rows_state_column_fits_beside_the_title(projects: Path, size) -> None:
    """With live rows the state column widens to its words, the title keeps
    its least width, and nothing runs off to the right, at any width."""
    from cctv.viewer.screens.browse_columns import TITLE_MIN

    done = Writer(projects, INTERACTIVE)
    done.upto(len(done.lines))
    app = browser(projects)
    async with app.run_test(size=size) as pilot:
        screen = await ready(pilot)
        await pilot.pause(0.2)
        assert cell(app, done.path).startswith("◆ needs you · ")
        table = screen.query_one("#sessions", DataTable)
        widths = dict((c.key, w) for c, w in screen.fitted.shown)
        assert widths["title"] >= TITLE_MIN
        assert widths["live"] >= len("◆ needs you · 0s") or size[0] < 100
        assert table.virtual_size.width <= table.size.width
        await pilot.press("p")  # the preview hidden: room for the whole state
        await pilot.pause(0.2)
        widths = dict((c.key, w) for c, w in screen.fitted.shown)
        assert widths["live"] >= len("◆ needs you · 0s") and widths["title"] >= TITLE_MIN
        assert table.virtual_size.width <= table.size.width
        await pilot.press("p")  # sorted by a column of the user's choosing: it is shown,
        screen.sort_by("size")  # the state's words giving way if need be
        await pilot.pause(0.2)
        widths = dict((c.key, w) for c, w in screen.fitted.shown)
        assert "size" in widths and widths["live"] >= 1 and widths["title"] >= TITLE_MIN
        assert table.virtual_size.width <= table.size.width
