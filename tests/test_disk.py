"""cctv's own files on a disk that fails (viewer/storage.py): the index and the
cache survive a read-only or full disk, a lock, damage inside a valid SQLite
file and something foreign where the index should be, each with one line
saying what happened and what cctv does instead, and nothing lost.

Real file systems where the machine allows it (a read-only bind mount, a
tmpfs of a few KiB: see ``disks.py``), skipped with the reason elsewhere.
Every test runs with ``XDG_CACHE_HOME``, ``CLAUDE_CONFIG_DIR`` and ``HOME`` in
``tmp_path``.
"""

from __future__ import annotations

import json
import os
import sqlite3
import tempfile
from pathlib import Path

import pytest

from cctv.viewer.index import SessionIndex
from cctv.viewer.index.scan import scan
from cctv.viewer.index.store import index_file
from cctv.viewer.storage import CacheArea, DiskError, take_notes

from disks import fill, read_only, tmpfs
from test_index import build_tree, run_cli, sessions_in


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cfg"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "cache").mkdir()


@pytest.fixture
def projects(tmp_path: Path) -> Path:
    return build_tree(tmp_path)


def _listing(capsys: pytest.CaptureFixture[str], *words: str) -> tuple[list[dict], list[str]]:
    """``cctv sessions --json`` (or the words given): its rows and its stderr lines."""
    code, out, err = run_cli(["sessions", "--json", *words], capsys)
    assert code == 0, err
    return json.loads(out), err.splitlines()


def _fresh(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> list[dict]:
    """The rows with nothing in the way: an index of its own, in memory."""
    rows, _ = _listing(capsys, "--no-index")
    return rows


def _strip_live(rows: list[dict]) -> list[dict]:
    return sorted((dict(r, live=None) for r in rows), key=lambda r: r["path"])


# --------------------------------------------------------------------------- read-only


def test_a_read_only_cache_with_an_index_reads_it_into_memory(
        projects: Path, tmp_path: Path, capsys) -> None:
    """The issue's first case: an existing ~/.cache/cctv on a read-only mount
    (``store._remove`` died with EROFS). The index there is read into memory
    and refreshed there: one line, every session, search works."""
    expected = _fresh(tmp_path, capsys)
    _listing(capsys)  # the index, written while the disk could be written
    changed = projects / "-home-ada-src-demo" / "d7acffbd-7cff-4056-82e8-4364dc8df14a.jsonl"
    with read_only(tmp_path / "cache"):
        os.utime(changed, None)  # one session changed since: read again, in memory
        rows, err = _listing(capsys)
        assert _strip_live(rows) == _strip_live(expected)
        assert len(err) == 1 and "read-only file system" in err[0]
        assert "read from it and kept in memory for this run" in err[0]
        code, out, err = run_cli(["search", "Pydanctic", "--json"], capsys)
        assert code == 0 and json.loads(out) and "Traceback" not in err


def test_a_read_only_cache_folder_keeps_the_index_in_memory(tmp_path: Path, projects: Path,
                                                             capsys) -> None:
    with tmpfs(tmp_path / "cache", read_only=True):
        rows, err = _listing(capsys)
        assert len(rows) == len(sessions_in(projects))
        assert err == [f"cctv: {tmp_path / 'cache' / 'cctv'} is on a read-only file system:"
                       " the index is kept in memory for this run"]
        code, out, _ = run_cli(["search", "Pydanctic"], capsys)
        assert code == 0 and "Pydanctic".lower() in out.lower()


# --------------------------------------------------------------------------- full


def test_a_full_cache_disk_keeps_what_the_index_holds_in_memory(
        tmp_path: Path, projects: Path, capsys) -> None:
    """The second case: ``database or disk is full`` was a traceback. The
    refresh goes on in memory, from what the file had."""
    expected = _fresh(tmp_path, capsys)
    with tmpfs(tmp_path / "cache", size="96k"):
        rows, err = _listing(capsys)
        assert _strip_live(rows) == _strip_live(expected)
        assert len(err) == 1 and "is on a full disk" in err[0], err
        assert "the index is read from it and kept in memory for this run" in err[0]
        code, out, err = run_cli(["search", "pytest", "--json"], capsys)
        assert code == 0 and json.loads(out) and err == ""  # told once in this process


async def test_the_browser_on_a_full_disk_lists_everything_and_says_so_once(
        tmp_path: Path, projects: Path) -> None:
    """It repeated the same toast every refresh and stayed at "5 sessions …
    indexing…"; now one notification, and the whole list."""
    from cctv.viewer.app import BrowseOptions, CctvApp
    from conftest import wait_for

    with tmpfs(tmp_path / "cache", size="96k"):
        app = CctvApp(None, browse=BrowseOptions(projects, use_index=True))
        async with app.run_test(size=(140, 40)) as pilot:
            screen = app.screen
            await wait_for(pilot, lambda: screen.refreshed, timeout=60)
            assert len(screen.rows) == len(sessions_in(projects))
            screen.refresh_index()  # another refresh: nothing more to say
            # (its worker is exclusive: one may be cancelled, so wait, not wait_for_complete;
            # the folder's watcher runs as long as the browser)
            await wait_for(pilot, lambda: all(w.is_finished for w in app.workers
                                              if w.group != "watch"))
            await pilot.pause(0.2)
            messages = [n.message for n in app._notifications]
            assert len(messages) == 1 and "full disk" in messages[0], messages


def test_a_full_area_makes_room_from_its_own_oldest_entries(tmp_path: Path) -> None:
    area = CacheArea("images", what="images")
    with tmpfs(tmp_path / "cache", size="64k"):
        first = area.put("old.png", b"o" * 20_000)
        fill(tmp_path / "cache")
        newer = area.put("new.png", b"n" * 8_000)  # the disk is full: the old entry goes
        assert newer.read_bytes() == b"n" * 8_000 and not first.exists()
        assert take_notes() == []  # nothing to tell: it is where it belongs


# --------------------------------------------------------------------------- temporary folder


def test_cache_files_go_to_a_temporary_folder_when_the_cache_is_read_only(tmp_path: Path) -> None:
    from cctv.viewer.crash import write_crash_log
    from cctv.viewer.external import write_cache_file

    with tmpfs(tmp_path / "cache", read_only=True):
        path = write_cache_file("some text\n", "line3-tool")
        assert path.read_text() == "some text\n"
        assert path.is_relative_to(tempfile.gettempdir())
        log = write_crash_log(RuntimeError("boom \udcff"))  # a name that is not UTF-8 too
        assert log is not None and "RuntimeError: boom \\udcff" in log.read_text()
        notes = [str(n) for n in take_notes()]
        assert len(notes) == 2 and all("read-only file system" in n for n in notes)
        assert "files for the pager and editor go to" in notes[0]
        assert "crash logs go to" in notes[1]
        write_cache_file("more\n", "line4-tool")
        assert take_notes() == []  # said once


def test_a_write_no_folder_takes_is_one_line(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp-ro"))
    (tmp_path / "cache" / "cctv").write_bytes(b"")  # a file where the cache folder should be
    with tmpfs(tmp_path / "tmp-ro", read_only=True):
        import cctv.viewer.storage as storage

        monkeypatch.setattr(storage, "_TEMP", None)
        with pytest.raises(DiskError) as caught:
            CacheArea("view", what="files for the pager").put("x.txt", b"x")
    assert "files for the pager cannot be saved" in str(caught.value.note)


def test_an_area_keeps_its_budget_least_recently_used_first(tmp_path: Path) -> None:
    area = CacheArea("checkpoints", max_bytes=3_000, what="checkpoints")
    for n in range(3):
        area.put(f"e{n}", bytes(1_000))
        os.utime(area.folder / f"e{n}", (1_000 + n, 1_000 + n))
    assert area.get("e0") == bytes(1_000)  # used now: the newest
    area.put("e3", bytes(1_000))
    assert [e.name for e in area.entries()] == ["e3", "e0", "e2"]
    assert area.usage() == (3, 3_000)
    assert area.clear() == 3_000 and area.entries() == []


# --------------------------------------------------------------------------- damage


def _indexed(projects: Path) -> Path:
    index = SessionIndex(projects)
    index.refresh()
    index.close()
    return index_file(projects)


def _reopened(projects: Path) -> tuple[SessionIndex, list[str]]:
    """The index opened again, as ``cctv sessions`` does: refreshed, its rows read."""
    index = SessionIndex(projects)
    index.refresh()
    assert len(index.rows()) == len(sessions_in(projects))
    assert index.search("Pydanctic")
    return index, [str(n) for n in take_notes()]


def _damage(path: Path, *statements: str) -> None:
    db = sqlite3.connect(path)
    for statement in statements:
        db.execute(statement)
    db.commit()
    db.close()


def test_a_row_that_fails_to_decode_rebuilds_the_index(projects: Path) -> None:
    target = _indexed(projects)
    _damage(target, "UPDATE sessions SET row = x'c1c1c1' WHERE id = 3")
    index, notes = _reopened(projects)
    assert len(notes) == 1 and "a session row failed to decode" in notes[0] and "rebuilt" in notes[0]
    assert index.store.path == target  # on disk again


def test_a_table_replaced_at_the_same_version_rebuilds_the_index(projects: Path) -> None:
    target = _indexed(projects)
    _damage(target, "DROP TABLE sessions", "CREATE TABLE sessions (id INTEGER PRIMARY KEY, x TEXT)")
    index, notes = _reopened(projects)
    assert notes == [f"index {target} is damaged (its tables are not the ones cctv makes): the index is rebuilt"]


def test_a_dropped_full_text_table_rebuilds_the_index(projects: Path, capsys) -> None:
    """``search`` said "no hits" in silence."""
    target = _indexed(projects)
    _damage(target, "DROP TABLE texts")
    code, out, err = run_cli(["search", "Pydanctic", "--json"], capsys)
    assert code == 0 and json.loads(out)
    assert "its tables are not the ones cctv makes" in err and "rebuilt" in err


@pytest.mark.parametrize("kind", ["directory", "fifo", "wal-directory"])
def test_something_else_where_the_index_should_be_is_moved_aside(projects: Path,
                                                                 kind: str) -> None:
    target = index_file(projects)
    target.parent.mkdir(parents=True)
    if kind == "directory":
        (target / "inside").mkdir(parents=True)
        odd = target
    elif kind == "fifo":
        os.mkfifo(target)
        odd = target
    else:
        _indexed(projects)
        odd = target.with_name(target.name + "-wal")
        odd.unlink(missing_ok=True)
        odd.mkdir()
    index, notes = _reopened(projects)
    assert index.store.path == target and target.is_file()
    [note] = notes
    assert note.startswith(f"index {odd} was a ") and "moved to" in note and "rebuilt" in note
    [aside] = [p for p in target.parent.iterdir() if ".moved-" in p.name]
    assert aside.name.startswith(odd.name)
    if kind == "directory":
        assert (aside / "inside").is_dir()  # what was there is kept


def test_a_locked_index_says_so_once(projects: Path, monkeypatch) -> None:
    monkeypatch.setattr("cctv.viewer.index.store._BUSY_MS", 50)
    first = SessionIndex(projects)
    first.refresh()
    (projects / "-home-ada-src-demo" / "d7acffbd-7cff-4056-82e8-4364dc8df14a.jsonl").unlink()
    first.store.db.execute("BEGIN EXCLUSIVE")  # another cctv, stuck mid-write
    try:
        for _ in range(2):
            second = SessionIndex(projects)
            second.refresh()
            assert len(second.rows()) == len(sessions_in(projects))
        notes = [str(n) for n in take_notes()]
        assert len(notes) == 1 and "is locked by another process" in notes[0]
    finally:
        first.store.db.execute("ROLLBACK")


def test_a_full_text_index_that_finds_nothing_is_rebuilt(projects: Path) -> None:
    """FTS5 with a damaged structure answers every search with nothing, and no
    error: opening looks for one stored text by one of its words."""
    target = _indexed(projects)
    _damage(target, "UPDATE texts_data SET block = x'0000ffff' WHERE id > 1")
    index, notes = _reopened(projects)
    assert notes == [f"index {target} is damaged (its full-text index does not find what it"
                     " holds): the index is rebuilt"]


def test_a_search_alone_finds_a_damaged_row_among_its_hits(projects: Path, capsys) -> None:
    """``cctv search`` decodes only its hits' rows: one that fails is found
    then, the index rebuilt and the files read again before it answers."""
    target = _indexed(projects)
    path = os.fsencode(projects / "-Users-dain-workspace-claude-code-log-sample"
                       / "b45ad5d8-81fb-4bcb-baba-19d9f503d731.jsonl")
    _damage(target, f"UPDATE sessions SET row = x'c1c1' WHERE path = x'{path.hex()}'")
    code, out, err = run_cli(["search", "Pydanctic", "--json"], capsys)
    assert code == 0 and [h["line"] for h in json.loads(out)] == [4]
    assert "a session row failed to decode" in err and err.endswith("the index is rebuilt\n")


def test_a_state_of_the_wrong_type_is_read_again(projects: Path) -> None:
    """Where a file's read stopped, damaged into a value of another type: the
    file is read again whole, its row written anew; nothing raises."""
    target = _indexed(projects)
    _damage(target, "UPDATE sessions SET indexed_bytes = 'x', lines = 2.5, tail = 7, size = 'big'",
            "UPDATE sessions SET path = 12 WHERE id = 2")
    index, notes = _reopened(projects)
    assert len(notes) == 1 and "a session's file name is not a name" in notes[0]
    index.close()
    _damage(target, "UPDATE sessions SET indexed_bytes = 'x', lines = 2.5, tail = 7, size = 'big'")
    again = SessionIndex(projects)
    assert again.refresh().read == len(scan(projects))
    assert again.refresh().read == 0
