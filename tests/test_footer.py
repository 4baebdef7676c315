"""The footer at the widths people use: the browser's, a session's and a
replay's footer show whole key labels only (none cut under the palette key,
as ``- Sl▏^p palette`` was), help and quit among them."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.app import App
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

from cctv.viewer.app import BrowseOptions, CctvApp
from cctv.viewer.loader import load_path
from cctv.viewer.paths import demo_path
from cctv.viewer.replay.app import ReplayApp
from cctv.viewer.replay.recording import load_recording
from cctv.viewer.screens.browse import BrowseScreen

from conftest import FIXTURES, wait_for
from test_index import build_tree, isolated  # noqa: F401 - autouse fixture

WIDTHS = (80, 100, 120, 160)
WORKTREES = (FIXTURES / "public" / "claude-code-log" / "real_projects" / "-experiments-worktrees"
             / "ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl")
"""A real session with sub-agents: its screen has the most keys of a session's."""


def footer_row(app: App) -> str:
    """The screen's last row as drawn (the footer), up to the palette key."""
    row = app.screen._compositor.render_strips()[-1].text
    assert "▏^p palette" in row
    return row.partition("▏")[0].rstrip()


def labels(app: App) -> list[str]:
    """Every label the footer could show (``key description``), shown or not."""
    footer = app.screen.query_one(Footer)
    return [f"{k.key_display} {k.description}".strip() for k in footer.query(FooterKey)
            if not k.has_class("-command-palette")]


def assert_whole(app: App, width: int) -> None:
    footer = app.screen.query_one(Footer)
    row = footer_row(app)
    every = labels(app)
    assert any(row.endswith(label) for label in every), (width, row)
    assert "q Quit" in row and "? Help" in row, (width, row)
    palette = next(k for k in footer.query(FooterKey) if k.has_class("-command-palette"))
    for key in footer.query(FooterKey):
        if key.display and key is not palette:
            assert key.region.right <= palette.region.x, (width, key.description)
            assert f"{key.key_display} {key.description}" in row, (width, key.description)
        elif key is not palette:
            assert f"{key.key_display} {key.description}" not in row, (width, key.description)


@pytest.mark.parametrize("width", WIDTHS)
async def test_the_browsers_footer_shows_whole_keys(tmp_path: Path, width: int) -> None:
    app = CctvApp(None, clock=None, browse=BrowseOptions(build_tree(tmp_path, captures=False),
                                                         examples=[demo_path()]))
    async with app.run_test(size=(width, 24)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, BrowseScreen) and app.screen.refreshed,
                       timeout=60)
        await pilot.pause()
        assert_whole(app, width)


@pytest.mark.parametrize("width", WIDTHS)
async def test_a_sessions_footer_shows_whole_keys(width: int) -> None:
    app = CctvApp(None, feed=load_path(WORKTREES), clock=None)
    async with app.run_test(size=(width, 24)) as pilot:
        await pilot.pause()
        assert_whole(app, width)


@pytest.mark.parametrize("width", WIDTHS)
async def test_a_replays_footer_shows_whole_keys(width: int) -> None:
    """The replay's keys (play, step, speed, inspector…) do not fit at 80 to
    120 columns: those that do not are left out whole."""
    recording = load_recording(WORKTREES)
    app = ReplayApp(recording, replay=recording.replay(), start=1, label=WORKTREES.name)
    async with app.run_test(size=(width, 24)) as pilot:
        await pilot.pause()
        assert_whole(app, width)
        if width < 140:  # (the test means something: keys were left out)
            assert not all(k.display for k in app.screen.query(FooterKey))
