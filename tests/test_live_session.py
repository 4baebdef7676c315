"""A followed source and its fold as one plain-Python object (viewer.live_session):
what the app's reader does with it, without the app."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import sys
import time
from pathlib import Path

from conftest import FIXTURES
from cctv.viewer.live_session import LiveSession
from cctv.viewer.sources import FileTail, Lines, Truncated, is_reset

HOOKS = FIXTURES / "captures" / "stream" / "07_hooks.jsonl"


async def _read(live: LiveSession) -> list[str]:
    """Take every event of the source as the app's reader does; the kinds seen."""
    assert live.source is not None
    seen: list[str] = []
    async with contextlib.aclosing(live.source.events()) as events:
        async for event in events:
            seen.append(type(event).__name__)
            if isinstance(event, Lines):
                live.fold(event.lines, live.lines_arrived(event.lines))
                live.source_state.output_seen(time.monotonic())
            else:
                live.take(event, time.monotonic())
    live.finished()
    return seen


async def test_a_file_read_to_its_end(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    shutil.copy(HOOKS, path)
    live = LiveSession(FileTail(path, follow=False), clock=None, goto_line=7)
    assert live.label == f"file {path}" and live.now() is None and not live.runs_command
    seen = await _read(live)
    assert seen[-2:] == ["HistoryRead", "EndOfInput"]
    lines = len(HOOKS.read_bytes().splitlines())
    assert live.session.lines == lines and live.feed.entry_at(1) is not None
    assert live.live and live.ended == "end of file" and live.loading is None
    assert not live.feed.keep_raw  # a regular file: the raw view reads the bytes back
    assert live.raw_store.with_raw(live.feed.entry_at(1)).raw == HOOKS.read_bytes().splitlines()[0]
    assert live.take_goto_line() == 7 and live.take_goto_line() is None
    assert await live.close() == 0


async def test_restarted_is_a_new_fold_of_the_same_source(tmp_path: Path) -> None:
    """A truncated file: the app replaces the session by ``restarted()``: a fold
    from nothing, while what the source said (its state, stderr) goes on."""
    path = tmp_path / "s.jsonl"
    shutil.copy(HOOKS, path)
    live = LiveSession(FileTail(path, follow=False), clock=lambda: 1000.0, goto_line=3)
    await _read(live)
    fresh = live.restarted()
    assert fresh.source is live.source and fresh.label == live.label
    assert fresh.source_state is live.source_state and fresh.stderr is live.stderr
    assert fresh.feed is not live.feed and fresh.session.lines == 0
    assert fresh.raw_store is not live.raw_store and fresh.arrivals is not live.arrivals
    assert fresh.live and fresh.ended is None and fresh.now() == 1000.0
    assert fresh.take_goto_line() == 3  # not reached yet when the file started over
    event = Truncated(0, continues=False)
    assert is_reset(event)
    effect = fresh.take(event, time.monotonic())
    assert effect.notice is not None and "truncated" in effect.notice[0]


async def test_a_loaded_feed_without_a_source() -> None:
    from cctv.viewer.loader import load_path

    live = LiveSession(None, feed=load_path(HOOKS), clock=None)
    assert live.label == "loaded file" and live.session.lines > 0
    assert await live.close() == 0 and await live.stop_command() is False


def test_the_shown_sessions_import_no_ui_library() -> None:
    """The live session and the replay controller are plain Python: the screens
    draw them, the app feeds them, and neither brings Textual in."""
    code = (
        "import sys\n"
        "import cctv.viewer.live_session, cctv.viewer.replay.controller\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich'))\n"
        "assert not bad, bad\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
