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
        cells = [str(cell) for cell in table.get_column("project")]
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


# --------------------------------------------------------------------------- special files


def _cctv(*words: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """The installed cctv in a process of its own: a hang is a failed test, not a stuck suite."""
    return subprocess.run([sys.executable, "-m", "cctv.viewer.cli", *words], capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def special_tree(tmp_path: Path) -> tuple[Path, list[Path], list[Path]]:
    """A project with two sessions and, named ``*.jsonl`` beside them, a FIFO, links
    to ``/dev/zero`` and ``/dev/urandom`` and a socket; a sub-agent file that is a
    FIFO. Returns the projects folder, the sessions, the special files."""
    projects = tmp_path / "cfg" / "projects"
    folder = projects / "-home-ada-src-demo"
    folder.mkdir(parents=True)
    sessions = sorted(DEMO.glob("*.jsonl"))[:2]
    for source in sessions:
        shutil.copyfile(source, folder / source.name)
    fifo, zero, noise, sock = (folder / f"{name}.jsonl" for name in ("fifo", "zero", "noise", "sock"))
    os.mkfifo(fifo)
    zero.symlink_to("/dev/zero")
    noise.symlink_to("/dev/urandom")
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(sock))
    server.close()
    agents = folder / sessions[0].stem / "subagents"
    agents.mkdir(parents=True)
    os.mkfifo(agents / "agent-a1.jsonl")
    return projects, [folder / s.name for s in sessions], [fifo, zero, noise, sock,
                                                          agents / "agent-a1.jsonl"]


def test_special_files_named_jsonl_are_skipped_with_a_note(tmp_path: Path) -> None:
    """The fifth case: a FIFO hung ``sessions`` and ``search`` for ever, a link
    to /dev/zero grew to 9 GB in 15 s, /dev/urandom hung."""
    projects, sessions, special = special_tree(tmp_path)
    started = time.monotonic()
    res = _cctv("sessions", str(projects), "--json")
    assert res.returncode == 0, res.stderr
    assert sorted(r["path"] for r in json.loads(res.stdout)) == [str(p) for p in sessions]
    kinds = {"fifo": "FIFO", "zero": "device", "noise": "device", "sock": "socket",
             "agent-a1": "FIFO"}
    lines = res.stderr.splitlines()
    for path in special:
        assert f"cctv: {path}: a {kinds[path.stem]}, not a session file: skipped" in lines
    res = _cctv("search", "greet", str(projects))
    assert res.returncode == 0 and res.stdout
    assert time.monotonic() - started < 30


def test_a_file_that_becomes_a_fifo_after_the_listing_is_not_waited_on(tmp_path: Path) -> None:
    from cctv.viewer.index.scan import open_regular

    os.mkfifo(tmp_path / "s.jsonl")
    with pytest.raises(OSError, match="a FIFO, not a regular file"):
        open_regular(tmp_path / "s.jsonl")


async def test_the_browser_skips_special_files_says_so_once_and_quits(tmp_path: Path) -> None:
    projects, sessions, special = special_tree(tmp_path)
    app = CctvApp(None, clock=None, browse=BrowseOptions(projects))
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, BrowseScreen) and app.screen.refreshed,
                       timeout=60)
        assert sorted(r.path for r in app.screen.rows) == [str(p) for p in sessions]
        app.screen.refresh_index()
        # (its worker is exclusive: one may be cancelled, so wait, not wait_for_complete;
        # the folder's watcher runs as long as the browser)
        await wait_for(pilot, lambda: all(w.is_finished for w in app.workers if w.group != "watch"))
        await pilot.pause(0.2)
        [note] = [n for n in app._notifications if n.title == "Not listed"]
        assert note.message.count("not a session file: skipped") == 5
        await pilot.press("q")
    assert app.return_code == 0


async def test_a_fifo_named_on_the_command_line_is_read_as_a_pipe(tmp_path: Path) -> None:
    from cctv.reducer.state import MAIN
    from cctv.viewer.launch import FifoSource, build_source

    fifo = tmp_path / "frames"
    os.mkfifo(fifo)
    source = build_source([str(fifo)])
    assert isinstance(source, FifoSource)
    app = CctvApp(source, clock=None)
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.pause(0.3)  # no writer yet: the app runs meanwhile
        recording = FIXTURES / "captures" / "stream" / "07_hooks.jsonl"
        with open(fifo, "wb") as writer:
            writer.write(recording.read_bytes())
        await wait_for(pilot, lambda: app.shown is not None and app.shown.ended is not None)
        assert app.shown.feed.session.agents[MAIN].items
        assert app.shown.feed.session.lines == len(recording.read_bytes().splitlines())


async def test_q_quits_while_a_fifo_waits_for_its_writer(tmp_path: Path) -> None:
    from cctv.viewer.launch import build_source

    fifo = tmp_path / "frames"
    os.mkfifo(fifo)
    app = CctvApp(build_source([str(fifo)]), clock=None)
    try:
        async with app.run_test(size=(120, 30)) as pilot:
            await pilot.pause(0.2)
            started = time.monotonic()
            await pilot.press("q")
        assert time.monotonic() - started < 2
    finally:
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))  # the waiting open returns


@pytest.mark.parametrize("command", [[], ["summary"], ["check"], ["export", "--md"]])
def test_a_device_named_on_the_command_line_is_refused(command: list[str]) -> None:
    words = [*command[:1], "/dev/zero", *command[1:]]
    res = _cctv(*words, timeout=20)
    assert res.returncode == 2 and res.stderr == "cctv: /dev/zero: is a device, not a session file\n"


# --------------------------------------------------------------------------- unreadable folders


def test_a_folder_that_cannot_be_read_is_named_not_passed_over_in_silence(tmp_path: Path) -> None:
    projects, sessions, _ = special_tree(tmp_path)
    for path in projects.rglob("*"):
        if path.is_symlink() or path.is_socket() or path.is_fifo():
            path.unlink()
    locked = projects / "-locked"
    locked.mkdir()
    shutil.copyfile(sessions[0], locked / "x.jsonl")
    locked.chmod(0)
    try:
        command = without_root_powers([sys.executable, "-m", "cctv.viewer.cli", "sessions",
                                       str(projects), "--json"])
        res = subprocess.run(command, capture_output=True, text=True, timeout=60,
                             stdin=subprocess.DEVNULL)
    finally:
        locked.chmod(0o755)
    assert res.returncode == 0, res.stderr
    assert len(json.loads(res.stdout)) == len(sessions)
    assert res.stderr == f"cctv: {locked}: cannot be read (Permission denied): skipped\n"
