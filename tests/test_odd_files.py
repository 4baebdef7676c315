"""Hostile files under ``projects/``: names that are not UTF-8, special files
named ``*.jsonl`` (FIFOs, devices, sockets, links to them) and folders that
cannot be read. Every session is still listed, searched and opened; odd bytes
are drawn as ``\\xff``; nothing hangs; what is skipped is said.

``XDG_CACHE_HOME``, ``CLAUDE_CONFIG_DIR`` and ``HOME`` are in ``tmp_path``.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from textual.widgets import DataTable

from cctv.viewer.app import BrowseOptions, CctvApp
from cctv.viewer.index import SessionIndex
from cctv.viewer.screens.browse import BrowseScreen
from cctv.viewer.screens.session import SessionScreen

from conftest import FIXTURES, wait_for
from disks import without_root_powers
from test_index import OLD, isolated, run_cli  # noqa: F401 - autouse fixture

DEMO = FIXTURES / "captures" / "projects" / "-home-ada-src-demo"
ODD_FOLDER = b"-home-caf\xe9"
"""A project folder named in Latin-1, as an old system or a copied disk has it."""
ODD_FILE = b"odd\xff\xfe.jsonl"
NAMELESS = b'{"type":"user","message":{"role":"user","content":"hello from nowhere"},"uuid":"u1"}\n'
"""A session that names neither its id nor its cwd: both come from its file's name."""


def odd_tree(tmp_path: Path) -> tuple[Path, list[bytes]]:
    """A projects folder whose names are not all UTF-8; and every session's path, as bytes."""
    projects = tmp_path / "cfg" / "projects"
    odd = os.path.join(os.fsencode(projects), ODD_FOLDER)
    plain = os.path.join(os.fsencode(projects), b"-plain")
    os.makedirs(odd)
    os.makedirs(plain)
    sources = sorted(p for p in DEMO.glob("*.jsonl"))[:3]
    paths = []
    for source in sources[:2]:
        paths.append(os.path.join(odd, source.name.encode()))
        shutil.copyfile(source, paths[-1])
    paths.append(os.path.join(plain, ODD_FILE))
    shutil.copyfile(sources[2], paths[-1])
    paths.append(os.path.join(odd, b"\xe9t\xe9.jsonl"))
    with open(paths[-1], "wb") as fh:
        fh.write(NAMELESS)
    for path in paths:
        os.utime(path, (OLD, OLD))  # not live: opened, read to its end
    return projects, sorted(paths)


# --------------------------------------------------------------------------- names


@pytest.mark.parametrize("no_index", [False, True])
def test_names_that_are_not_utf8_are_listed_and_round_trip(tmp_path: Path, capsys,
                                                           no_index: bool) -> None:
    """The issue's fourth case: ``UnicodeEncodeError: surrogates not allowed``,
    exit 1, even with ``--no-index``. ``--json`` writes each odd byte as
    ``\\udcXX`` (Python's ``surrogateescape``): ``os.fsencode`` gives the name back."""
    projects, paths = odd_tree(tmp_path)
    flag = ["--no-index"] if no_index else []
    code, out, err = run_cli(["sessions", "--json", *flag], capsys)
    assert code == 0 and err == ""
    rows = json.loads(out)
    assert sorted(os.fsencode(r["path"]) for r in rows) == paths
    nameless = next(r for r in rows if r["title"] == "hello from nowhere")
    assert os.fsencode(nameless["session_id"]) == b"\xe9t\xe9"
    assert os.fsencode(nameless["project"]) == ODD_FOLDER  # the folder's name: no cwd
    code, text, err = run_cli(["sessions", *flag], capsys)
    assert code == 0 and err == "" and len(text.splitlines()) == len(paths)
    assert "[\\xe9t\\xe9]" in text and "-home-caf\\xe9  hello from nowhere" in text
    text.encode("utf-8")  # nothing that cannot be written


def test_search_finds_and_names_files_whose_names_are_not_utf8(tmp_path: Path, capsys) -> None:
    projects, paths = odd_tree(tmp_path)
    code, out, _ = run_cli(["search", "nowhere", "--json"], capsys)
    [hit] = json.loads(out)
    assert code == 0 and os.fsencode(hit["path"]) == os.path.join(
        os.fsencode(projects), ODD_FOLDER, b"\xe9t\xe9.jsonl")
    code, text, _ = run_cli(["search", "nowhere"], capsys)
    assert text.startswith(f"{projects}/-home-caf\\xe9/\\xe9t\\xe9.jsonl:1: [user] ")


def test_the_index_keeps_odd_names_exactly(tmp_path: Path) -> None:
    projects, paths = odd_tree(tmp_path)
    index = SessionIndex(projects)
    index.refresh()
    index.close()
    again = SessionIndex(projects)  # read back from the file
    assert again.note is None
    assert sorted(os.fsencode(r.path) for r in again.rows()) == paths
    assert again.refresh().read == 0  # the stored names match the files': nothing read again


async def test_the_browser_lists_draws_and_opens_odd_names(tmp_path: Path) -> None:
    """One odd name hid every session (0 sessions)."""
    projects, paths = odd_tree(tmp_path)
    app = CctvApp(None, clock=None, browse=BrowseOptions(projects))
    async with app.run_test(size=(250, 40)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, BrowseScreen) and app.screen.refreshed,
                       timeout=60)
        screen = app.screen
        assert len(screen.rows) == len(paths)
        table = screen.query_one("#sessions", DataTable)
        cells = [str(table.get_row_at(i)[2]) for i in range(table.row_count)]
        assert "-home-caf\\xe9" in cells
        assert not [n for n in app._notifications if n.severity == "error"]
        row = next(r for r in screen.rows if r.title == "hello from nowhere")
        table.move_cursor(row=table.get_row_index(row.path))
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen))
        await wait_for(pilot, lambda: app.shown is not None and app.shown.ended is not None)
        await pilot.pause()
        text = screen_words(app)  # the status bar names the file
        assert "\\xe9t\\xe9.jsonl" in text and "hello from nowhere" in text


def screen_words(app: CctvApp) -> str:
    """What the screen shows, as plain text (from an SVG screenshot: all of it
    can be written out)."""
    svg = app.export_screenshot()
    svg.encode("utf-8")
    body = svg[svg.index("</style>"):]
    return html.unescape(re.sub(r"<[^>]+>", "", body)).replace("\xa0", " ")
