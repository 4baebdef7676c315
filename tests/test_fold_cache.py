"""Checkpoints of folded sessions in the cache (viewer/fold_cache.py).

A session reopened unchanged is restored from its checkpoint; one that grew
is restored and only its new bytes are folded; one written anew starts over.
Whatever way it came, the state is the one a cold fold of the file makes
(``state_graph``: the same values, the same sharing). A damaged entry, one
from another version of cctv, and one half-written are never used; the
least recently used entries go past the budget; nothing is written beside
the session. The size threshold is lowered so that the recordings count as big.
"""

from __future__ import annotations

import io
import os
import shutil
import threading
from pathlib import Path

import pytest

from cctv.reducer.export_md import export_markdown
from cctv.reducer.feed import Feed, read_file_lines
from cctv.reducer.summary import summarize
from cctv.viewer import fold_cache as C
from cctv.viewer.headless import check_file, run_summary
from cctv.viewer.loader import load_path
from cctv.viewer.storage import CacheArea

from conftest import FIXTURES, state_graph

STREAM = FIXTURES / "captures" / "stream" / "03_tools.jsonl"
PROJECT = FIXTURES / "captures" / "projects" / "-home-ada-src-demo"
TRANSCRIPT = "d7acffbd-7cff-4056-82e8-4364dc8df14a"


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    """The cache in ``tmp_path``; every session counts as big."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(C, "MIN_BYTES", 1)
    monkeypatch.setattr(C, "AREA", CacheArea("checkpoints", max_bytes=C.BUDGET,
                                             what="session checkpoints"))
    return tmp_path / "cache" / "cctv" / "checkpoints"


def _cold(path: Path) -> Feed:
    feed = Feed(keep_raw=False)
    for batch in read_file_lines(path):
        feed.feed(batch)
    return feed


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def _same(feed: Feed, path: Path) -> None:
    """``feed`` holds what a cold fold of ``path`` makes: state, lines, times."""
    cold = _cold(path)
    assert state_graph(feed.session) == state_graph(cold.session)
    assert [(e.line_no, e.offset) for e in feed.entries] == \
        [(e.line_no, e.offset) for e in cold.entries]
    assert list(feed.entries) == list(cold.entries)  # the restored lines read again
    assert feed.entries.tally() == cold.entries.tally()


def _copy(tmp_path: Path, lines: list[bytes], name: str = "s.jsonl") -> Path:
    path = tmp_path / "sessions" / name
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(b"".join(lines))
    return path


def test_reopen_unchanged_restores(tmp_path, cache):
    path = _copy(tmp_path, _lines(STREAM))
    first = C.open_feed(path)
    assert first.how == "folded"
    assert len(list(cache.iterdir())) == 1
    again = C.open_feed(path)
    assert (again.how, again.read_from) == ("restored", path.stat().st_size)
    assert again.feed.entries.unheld == len(again.feed.entries)  # nothing decoded again
    _same(again.feed, path)


def test_reopen_appended_folds_only_the_new_bytes(tmp_path):
    lines = _lines(STREAM)
    half = len(lines) // 2
    path = _copy(tmp_path, lines[:half])
    C.open_feed(path)
    with open(path, "ab") as fh:
        fh.write(b"".join(lines[half:]))
    again = C.open_feed(path)
    assert again.how == "appended"
    assert again.read_from == len(b"".join(lines[:half]))
    assert again.feed.entries.unheld == half
    _same(again.feed, path)
    # the appended fold was kept: the next open reads nothing
    assert C.open_feed(path).how == "restored"


def test_a_last_line_without_newline_is_folded_not_checkpointed(tmp_path):
    lines = _lines(STREAM)
    cut = lines[-1].rstrip(b"\n")
    path = _copy(tmp_path, lines[:-1] + [cut[: len(cut) // 2]])
    C.open_feed(path)
    with open(path, "ab") as fh:
        fh.write(cut[len(cut) // 2:] + b"\n")
    again = C.open_feed(path)
    assert again.how == "appended"
    _same(again.feed, path)


def test_rewritten_starts_over(tmp_path):
    lines = _lines(STREAM)
    path = _copy(tmp_path, lines)
    C.open_feed(path)
    other = _lines(FIXTURES / "captures" / "stream" / "07_hooks.jsonl")
    path.write_bytes(b"".join(other))  # same inode, other contents
    again = C.open_feed(path)
    assert again.how == "folded"
    _same(again.feed, path)


def test_written_again_in_place_at_the_same_size_starts_over(tmp_path):
    lines = _lines(STREAM)
    path = _copy(tmp_path, lines)
    C.open_feed(path)
    data = bytearray(path.read_bytes())
    middle = data.index(b'"type"', len(data) // 2)
    data[middle + 1:middle + 5] = b"TYPE"  # one frame becomes unknown; size, head and tail kept
    path.write_bytes(bytes(data))
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 1_000_000))
    again = C.open_feed(path)
    assert again.how == "folded"
    _same(again.feed, path)


def test_truncated_starts_over(tmp_path):
    lines = _lines(STREAM)
    path = _copy(tmp_path, lines)
    C.open_feed(path)
    path.write_bytes(b"".join(lines[:3]))
    assert C.open_feed(path).how == "folded"


@pytest.mark.parametrize("damage", ["garbage", "payload", "truncated", "empty"])
def test_a_damaged_entry_is_ignored_and_rebuilt(tmp_path, cache, damage):
    path = _copy(tmp_path, _lines(STREAM))
    C.open_feed(path)
    [entry] = list(cache.iterdir())
    data = entry.read_bytes()
    entry.write_bytes({"garbage": os.urandom(len(data)),
                       "payload": data[:-2000] + os.urandom(2000),
                       "truncated": data[: len(data) // 2],
                       "empty": b""}[damage])
    again = C.open_feed(path)
    assert again.how == "folded"
    _same(again.feed, path)
    assert C.open_feed(path).how == "restored"  # made anew


def test_an_entry_from_another_version_is_ignored_and_rebuilt(tmp_path, cache, monkeypatch):
    path = _copy(tmp_path, _lines(STREAM))
    monkeypatch.setattr(C, "_stamp", lambda: "an older cctv")
    C.open_feed(path)
    monkeypatch.undo()
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache.parent.parent))
    monkeypatch.setattr(C, "MIN_BYTES", 1)
    assert C.open_feed(path).how == "folded"
    assert C.open_feed(path).how == "restored"
    monkeypatch.setattr(C, "FORMAT", C.FORMAT + 1)  # an older layout
    assert C.open_feed(path).how == "folded"


def test_the_least_recently_used_entries_go_past_the_budget(tmp_path, cache, monkeypatch):
    paths = [_copy(tmp_path, _lines(STREAM), f"s{n}.jsonl") for n in range(3)]
    C.open_feed(paths[0])
    size = next(cache.iterdir()).stat().st_size
    monkeypatch.setattr(C, "AREA", CacheArea("checkpoints", max_bytes=int(size * 2.5)))
    C.open_feed(paths[1])
    os.utime(next(p for p in cache.iterdir()), (1, 1))  # s0's entry now the least recently used
    C.open_feed(paths[0])  # ...until it is used again: restored
    old = {p.name for p in cache.iterdir()}
    assert len(old) == 2
    C.open_feed(paths[2])
    assert len(list(cache.iterdir())) == 2
    assert C.open_feed(paths[0]).how == "restored"
    assert C.open_feed(paths[1]).how == "folded"  # the least recently used went


def test_opened_while_its_checkpoint_is_being_written(tmp_path, cache):
    path = _copy(tmp_path, _lines(STREAM))
    C.open_feed(path)
    # a half-written entry of another process sits beside it: never read
    (cache / f".{next(cache.iterdir()).name}.999.1.part").write_bytes(b"half")
    stop = threading.Event()

    def keep_writing() -> None:
        feed = _cold(path)
        end = path.stat().st_size
        while not stop.is_set():
            C.save_checkpoint(path, feed, end, len(feed.entries))

    writer = threading.Thread(target=keep_writing)
    writer.start()
    try:
        for _ in range(10):
            opened = C.open_feed(path, save=False)
            assert opened.how == "restored"
            _same(opened.feed, path)
    finally:
        stop.set()
        writer.join()


def test_transcript_with_sub_agents(tmp_path):
    """The checkpoint is of the main file: the sub-agent files are folded after
    it, as a cold read folds them."""
    project = tmp_path / "project"
    shutil.copytree(PROJECT / TRANSCRIPT, project / TRANSCRIPT)
    lines = _lines(PROJECT / f"{TRANSCRIPT}.jsonl")
    path = project / f"{TRANSCRIPT}.jsonl"
    path.write_bytes(b"".join(lines[:-2]))
    load_path(path, checkpoints=True)
    with open(path, "ab") as fh:
        fh.write(b"".join(lines[-2:]))
    assert C.open_feed(path, save=False).how == "appended"
    warm = load_path(path, checkpoints=True)
    assert state_graph(warm.session) == state_graph(load_path(path).session)


def test_summary_check_and_export_read_the_checkpoint(tmp_path, cache):
    path = _copy(tmp_path, _lines(STREAM))
    cold_md = export_markdown(load_path(path).session)
    cold_check = check_file(path)
    outs = []
    for _ in range(2):
        out = io.StringIO()
        assert run_summary(str(path), True, out, io.StringIO()) == 0
        outs.append(out.getvalue())
    assert outs[0] == outs[1]
    assert len(list(cache.iterdir())) == 1
    assert C.open_feed(path, save=False).how == "restored"
    assert check_file(path) == cold_check  # each line read again for its round trip
    warm = load_path(path, keep_raw=False, keep_entries=False, checkpoints=True)
    assert export_markdown(warm.session) == cold_md
    assert summarize(warm.session) == summarize(_cold(path).session)


def test_nothing_is_written_beside_the_session(tmp_path):
    path = _copy(tmp_path, _lines(STREAM))
    before = sorted(os.listdir(path.parent))
    C.open_feed(path)
    C.open_feed(path)
    assert sorted(os.listdir(path.parent)) == before


def test_cctv_cache_shows_and_clears(tmp_path, cache):
    for n in range(2):
        C.open_feed(_copy(tmp_path, _lines(STREAM), f"s{n}.jsonl"))
    out = io.StringIO()
    assert C.run_cache(False, out) == 0
    text = out.getvalue()
    assert "2 checkpoints" in text and text.count(".ckpt") == 2
    out = io.StringIO()
    assert C.run_cache(True, out) == 0
    assert out.getvalue().startswith("removed 2 checkpoints")
    assert list(cache.iterdir()) == []


def test_small_sessions_keep_no_checkpoint(tmp_path, cache, monkeypatch):
    monkeypatch.setattr(C, "MIN_BYTES", 1 << 20)
    path = _copy(tmp_path, _lines(STREAM))
    assert C.open_feed(path).how == "folded"
    assert not cache.exists() or list(cache.iterdir()) == []


# --- the viewer ---------------------------------------------------------------------------

FAST = dict(debounce_ms=20, poll_timeout_ms=200)


def _viewer_cold(path: Path) -> Feed:
    """The fold the viewer makes of ``path`` (one line per run of malformed lines)."""
    feed = Feed(keep_raw=False, keep_malformed_runs=False)
    for batch in read_file_lines(path):
        feed.feed(batch)
    return feed


async def _view(path: Path, follow: bool = True) -> tuple[int, list, str, list]:
    """Open ``path`` in the viewer until its history is in and its checkpoint
    written: (bytes restored, state, screen text, raw lines of the first items)."""
    from cctv.viewer.app import CctvApp
    from cctv.viewer.sources import FileTail

    from conftest import screen_text, wait_for

    app = CctvApp(FileTail(path, follow=follow, **FAST), clock=None)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.shown.live or app.shown.ended is not None)
        writer = app.checkpoint_writer
        await wait_for(pilot, lambda: writer is None or not writer.is_alive())
        await pilot.pause()
        live = app.shown
        raws = [live.raw_store.raw(live.feed.entry_at(n)) for n in (1, 2, 5)]
        return live.restored_to, state_graph(live.session), screen_text(app), raws


async def test_the_viewer_reopens_from_its_checkpoint(tmp_path, cache):
    lines = _lines(STREAM)
    half = len(lines) // 2
    path = _copy(tmp_path, lines[:half])
    restored, state, _text, _ = await _view(path)
    assert restored == 0
    assert [p.name.endswith("-view.ckpt") for p in cache.iterdir()] == [True]
    restored, state, text, raws = await _view(path)
    assert restored == path.stat().st_size  # unchanged: nothing read
    assert state == state_graph(_viewer_cold(path).session)
    assert raws == [lines[n - 1].rstrip(b"\n") for n in (1, 2, 5)]  # the raw view reads them back
    with open(path, "ab") as fh:
        fh.write(b"".join(lines[half:]))
    restored, state, text, _ = await _view(path)
    assert restored == len(b"".join(lines[:half]))  # appended: only the new bytes read
    assert state == state_graph(_viewer_cold(path).session)
    cold_path = _copy(tmp_path, lines, "cold.jsonl")
    C.MIN_BYTES = 1 << 40  # (monkeypatched: undone after the test) no checkpoint for this one
    assert (await _view(cold_path))[2] == text  # the screen shows the same


async def test_the_viewer_keeps_no_checkpoint_over_a_line_without_newline(tmp_path, cache):
    lines = _lines(STREAM)
    cut = lines[-1].rstrip(b"\n")
    path = _copy(tmp_path, lines[:-1] + [cut[:20]])
    await _view(path, follow=False)  # the last line is shown as it is: no checkpoint of it
    assert not cache.exists() or list(cache.iterdir()) == []
    path.write_bytes(b"".join(lines))
    await _view(path)
    with open(path, "ab") as fh:
        fh.write(lines[0])
    restored, state, _, _ = await _view(path)
    assert restored == len(b"".join(lines))
    assert state == state_graph(_viewer_cold(path).session)


# --- the index ----------------------------------------------------------------------------

REAL = FIXTURES / "public" / "claude-code-log" / "real_projects"
INDEXED = [REAL / "-experiments-worktrees" / "ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl",
           REAL / "-src-experiments-claude_p" / "29ccd257-68b1-427f-ae5f-6524b7cb6f20.jsonl",
           PROJECT / f"{TRANSCRIPT}.jsonl",
           STREAM]


@pytest.mark.parametrize("src", INDEXED, ids=lambda p: p.stem[:8])
def test_the_index_reads_an_appended_file_on_from_its_checkpoint(src, tmp_path, monkeypatch):
    from cctv.viewer.index import extract as E

    monkeypatch.setattr(E, "_READS", type(E._READS)())
    project = tmp_path / "project"
    project.mkdir()
    path = project / src.name
    if (src.parent / src.stem).is_dir():
        shutil.copytree(src.parent / src.stem, project / src.stem)
    lines = _lines(src)
    cut = 2 * len(lines) // 3
    path.write_bytes(b"".join(lines[:cut]))
    first = E.extract(str(path), str(project), path.stat().st_size, 0.0, 0, keep=True)
    assert first.lines == cut
    E._READS.pop(str(path)).checkpoint_writer.join()  # a forked child writes it
    with open(path, "ab") as fh:
        fh.write(b"".join(lines[cut:]))
    read = E.SessionRead.restored(path)  # a new process: nothing kept but the checkpoint
    assert read is not None and read.main.offset == first.indexed_bytes
    got = E.extract(str(path), str(project), path.stat().st_size, 0.0, first.lines)
    monkeypatch.setattr(C, "MIN_BYTES", 1 << 40)  # the same file read whole, no checkpoint
    fresh = E.extract(str(path), str(project), path.stat().st_size, 0.0, first.lines)
    assert got.row == fresh.row
    assert (got.indexed_bytes, got.lines, got.tail) == (fresh.indexed_bytes, fresh.lines, fresh.tail)
    assert got.texts == fresh.texts


async def test_a_checkpoint_read_ahead_is_taken_and_only_for_the_same_file(tmp_path, cache):
    """``cctv FILE`` starts reading the checkpoint before the app is built
    (load_early): the viewer takes that read, whose state is a cold fold's;
    a file written anew meanwhile (another inode, or shorter) is folded
    afresh, never shown with the old file's state."""
    lines = _lines(STREAM)
    path = _copy(tmp_path, lines)
    await _view(path)  # the checkpoint written
    C.load_early(path)
    assert os.fspath(path) in C._early
    restored, state, _text, _ = await _view(path)
    assert restored == path.stat().st_size and not C._early
    assert state == state_graph(_viewer_cold(path).session)
    # read ahead, then the file is replaced by a shorter one before the app asks
    C.load_early(path)
    C._early[os.fspath(path)][1].result()  # (the read ahead done)
    short = lines[: len(lines) // 2]
    replaced = _copy(tmp_path, short, "new.jsonl")
    os.replace(replaced, path)
    restored, state, _text, _ = await _view(path)
    assert restored == 0 and state == state_graph(_viewer_cold(path).session)
