"""A replay seek shows what a fresh open at that frame shows: the transcript
(rebound, not rebuilt: heights, rendered rows and what a seek back cut off are
kept; items never seen are estimated after the screen is drawn), the status
bar, the tasks panel, the replay bar, the inspector and the timeline."""

from __future__ import annotations

import random
import threading
from pathlib import Path

import pytest
from textual import events
from textual.widgets import Static

import cctv.viewer.replay.controller as replay_controller
import cctv.widgets.transcript.line_index as line_index
import cctv.widgets.transcript.rows as transcript_rows
from cctv.reducer.replay import player
from conftest import FIXTURES, screen_text, wait_for
from cctv.viewer.replay.app import ReplayApp
from cctv.viewer.replay.recording import load_recording
from cctv.widgets.status_bar import StatusBar
from cctv.widgets.tasks_panel import TasksPanel
from cctv.widgets.timeline import ReplayTimeline
from cctv.widgets.transcript import TranscriptView
from cctv.widgets.transcript.fenwick import Fenwick

STREAM = FIXTURES / "captures" / "stream"
PROJECT = FIXTURES / "captures" / "projects" / "-home-ada-src-demo"
SUBAGENT_SESSION = PROJECT / "d7acffbd-7cff-4056-82e8-4364dc8df14a.jsonl"
SIZE = (120, 36)


def _app(path: Path, start: int = 1) -> ReplayApp:
    rec = load_recording(path)
    replay = rec.replay(interval=4)
    list(replay.build_checkpoints())
    return ReplayApp(rec, replay=replay, start=start, build_checkpoints=False, label=path.name)


def _screen(app: ReplayApp) -> dict[str, object]:
    """Everything the replay screen says, as text (the scroll bar's thumb left
    out: off-screen heights are estimates, kept exact where they were drawn)."""
    screen = app.screen
    timeline = screen.query_one(ReplayTimeline)
    tasks = screen.query_one(TasksPanel)
    options = tasks.option_list
    return {
        "transcript": screen_text(app),
        "cursor": screen.query_one(TranscriptView).cursor_index,
        "status": screen.query_one(StatusBar).text,
        "tasks": [str(options.get_option_at_index(i).prompt)
                  for i in range(options.option_count)],
        "tasks title": str(screen.query_one("#tasks-title", Static).content),
        **{name: str(screen.query_one(f"#{name}", Static).content)
           for name in ("replay-bar", "inspector-head", "inspector-changes", "inspector-raw")},
        "timeline": [timeline.render_line(y).text for y in range(2)],
    }


async def _fresh_screen(path: Path, position: int) -> dict[str, object]:
    app = _app(path, start=position)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("t")
        await pilot.pause()
        return _screen(app)


_FRESH: dict[tuple[Path, int], dict[str, object]] = {}
"""Fresh screens already seen, by recording and frame (with the app's own
settings: every way of seeing a recording is held to the same screens)."""


async def _fresh_screens(path: Path, positions: list[int]) -> dict[int, dict[str, object]]:
    for position in positions:
        if (path, position) not in _FRESH:
            _FRESH[path, position] = await _fresh_screen(path, position)
    return {position: _FRESH[path, position] for position in positions}


def _targets(n: int) -> list[int]:
    """Seeks of every kind: to the end, back (restores), a step back, forward
    past what was seen (restores), forward by folding, home, the end again."""
    return [n, max(1, n // 3), max(1, n // 3) - 1 or 1, n - 1, 2 * n // 3, 2 * n // 3 + 2,
            1, n]


_RECORDINGS = [STREAM / "07_hooks.jsonl", STREAM / "10_compact_manual.jsonl", SUBAGENT_SESSION]
_WAYS = [(path, eager, False, f"estimated-{'at-once' if eager else 'later'}-{path.name}")
         for eager in (True, False) for path in _RECORDINGS]
_WAYS.append((SUBAGENT_SESSION, False, True, f"folded-on-and-rebound-{SUBAGENT_SESSION.name}"))
"""How each recording is seen: items estimated and compared with the ones
known at once, or later (after the first screen); and every
seek forward folded on and rebound, on the recording with sub-agents and a
task (the tasks panel's records are what that way can lose)."""


@pytest.mark.parametrize(("path", "eager", "fold_on"), [way[:3] for way in _WAYS],
                         ids=[way[3] for way in _WAYS])
async def test_a_seek_shows_what_a_fresh_open_at_that_frame_shows(
        path: Path, eager: bool, fold_on: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    n = len(load_recording(path).frames)
    fresh = await _fresh_screens(path, [min(max(t, 0), n) for t in _targets(n)])  # unpatched
    if not eager:  # every item never seen starts at the mean height, and only the
        # last few and those around the cursor are compared with the ones known
        monkeypatch.setattr(line_index, "EAGER_ESTIMATES", 0)
        monkeypatch.setattr(line_index, "EAGER_COMPARE", 4)
    app = _app(path)
    if fold_on:  # every seek forward folds on, and the transcript compares itself again
        monkeypatch.setattr(player, "REPORTED_FOLD", 1)
        app.shown.replay._restore_rate = 1.0
        monkeypatch.setattr(replay_controller, "LONG_SEEK_S", float("inf"))  # (restores look long)
    seen: list[tuple[int, dict[str, object]]] = []
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("t")
        await pilot.pause()
        view = app.screen.query_one(TranscriptView)
        for target in _targets(len(app.shown.replay)):
            app.go_to(target)
            await pilot.pause()
            first = _screen(app)  # the first screen after the seek
            await wait_for(pilot, lambda: not view._index.pending and not view._estimating)
            assert _screen(app) == first  # the estimates made later move nothing on screen
            assert view.virtual_size.height == view._index.total == sum(view._index.heights)
            assert view._index.items == app.shown.replay.session.main.items
            # every height is for the item now there: measured on screen, or estimated
            assert view._index.keys == [item.version for item in view._index.items]
            assert all(height == view._index.estimate(item)
                       for item, height, measured
                       in zip(view._index.items, view._index.heights, view._index.measured) if measured is None)
            seen.append((app.shown.replay.position, first))
    for position, shown in seen:
        assert shown == fresh[position], position


async def test_rows_drawn_before_a_seek_back_are_drawn_from_the_cache_after_it() -> None:
    app = _app(STREAM / "10_compact_manual.jsonl")
    async with app.run_test(size=SIZE) as pilot:
        view = app.screen.query_one(TranscriptView)
        n = len(app.shown.replay)
        app.go_to(n)
        await pilot.pause()
        before = screen_text(app)
        app.go_to(1)  # a restore: another state, other item objects
        await pilot.pause()
        cached = len(view._cache)
        rendered: list[object] = []
        real = transcript_rows.render_item
        transcript_rows.render_item = lambda *a: rendered.append(a[0]) or real(*a)  # type: ignore[assignment]
        try:
            app.go_to(n)
            await pilot.pause()
        finally:
            transcript_rows.render_item = real
        assert screen_text(app) == before
        assert cached and not rendered  # the end's items are equal: nothing drawn again


def test_a_fenwick_tree_extended_from_a_kept_prefix_equals_one_built_anew() -> None:
    rng = random.Random(5)
    for _ in range(500):
        values = [rng.randint(0, 9) for _ in range(rng.randint(0, 80))]
        keep = rng.randint(0, len(values))
        tail = [rng.randint(0, 9) for _ in range(rng.randint(0, 80))]
        grown = Fenwick.extended(Fenwick(values), keep, tail)
        fresh = Fenwick(values[:keep] + tail)
        assert (grown.tree, grown.n) == (fresh.tree, fresh.n)
        for row in range(fresh.total + 1):
            assert grown.find(row) == fresh.find(row)


async def test_a_start_deep_in_the_file_shows_frame_one_first_and_gets_there_in_a_worker(
        monkeypatch: pytest.MonkeyPatch) -> None:
    path = SUBAGENT_SESSION
    rec = load_recording(path)
    start = len(rec.frames) - 3
    expected = await _fresh_screen(path, start)
    monkeypatch.setattr(replay_controller, "CATCH_UP_FRAMES", 2)
    replay = rec.replay(interval=4)
    list(replay.build_checkpoints())
    app = ReplayApp(rec, replay=replay, start=start, build_checkpoints=False, label=path.name)
    assert app.shown.replay.position == 1 and app.shown.catching_up == start  # nothing folded yet
    folds: list[int] = []
    real_apply = app.shown.replay._apply
    monkeypatch.setattr(app.shown.replay, "_apply", lambda s, i: folds.append(i) or real_apply(s, i))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("t")
        await wait_for(pilot, lambda: app.shown.catching_up is None and app.shown.replay.position == start)
        await pilot.pause()
        assert _screen(app) == expected
    # the fold to the start ran once, in the worker, from the checkpoint
    # before it; the seek there only took it
    base = replay.checkpoints.latest_at_or_before(start - 1)
    assert 0 < base < start - 1
    assert folds == [*range(base, start - 1), start - 1]


async def test_a_long_seek_folds_in_a_worker_and_a_key_pressed_meanwhile_wins(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Before the checkpoints near it are built, a jump far ahead would fold
    for seconds on the UI thread: it folds in a worker instead (the bar says
    where it goes), and lands; a step taken meanwhile is the user's choice."""
    path = SUBAGENT_SESSION
    rec = load_recording(path)
    n = len(rec.frames)
    expected = await _fresh_screen(path, n)
    monkeypatch.setattr(replay_controller, "LONG_SEEK_S", 0.0)  # every seek that folds is long
    app = ReplayApp(rec, build_checkpoints=False, label=path.name)
    gate = threading.Event()  # holds the worker's fold (not the UI thread's)
    real_apply = app.shown.replay._apply

    def held(session: object, index: int) -> object:
        if threading.current_thread() is not threading.main_thread():
            gate.wait(5)
        return real_apply(session, index)

    monkeypatch.setattr(app.shown.replay, "_apply", held)
    folds: list[int] = []
    real_fold = app.shown.replay.fold_spare
    monkeypatch.setattr(app.shown.replay, "fold_spare",
                        lambda position, cancelled: folds.append(position)
                        or real_fold(position, cancelled))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("t")
        await pilot.press("end")
        assert app.shown.replay.position == 1 and app.shown.catching_up == n  # nothing folded on the UI thread
        await pilot.press("end")  # again: the worker already goes there
        await pilot.pause()
        assert "going to frame" in str(app.screen.query_one("#replay-bar", Static).content)
        gate.set()
        await wait_for(pilot, lambda: app.shown.catching_up is None and app.shown.replay.position == n)
        await pilot.pause()
        shown = _screen(app)
        bar = shown.pop("replay-bar")
        assert f"frame {n}/{n}" in bar and "going to" not in bar  # (no checkpoints are built here)
        assert shown == {k: v for k, v in expected.items() if k != "replay-bar"}
        assert folds == [n - 1]

        gate.clear()
        app.go_to(n // 2)  # back (a fold from the start): long too
        assert app.shown.catching_up == n // 2 and app.shown.replay.position == n
        monkeypatch.setattr(replay_controller, "LONG_SEEK_S", 1e9)
        await pilot.press("left")  # the user steps meanwhile: that wins
        assert app.shown.catching_up is None and app.shown.replay.position == n - 1
        gate.set()
        await pilot.pause(0.3)
        await pilot.pause()
        assert app.shown.replay.position == n - 1


async def test_items_a_seek_compares_later_are_measured_again_when_they_changed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A seek compares only the last items (and those around the cursor) with
    the ones known at their index at once; the others after the screen is
    drawn. Here an item off screen and before those changed between the two
    states (a tool call finished): its height is estimated again for the item
    now there."""
    monkeypatch.setattr(line_index, "EAGER_COMPARE", 4)
    path = (FIXTURES / "public" / "claude-code-log" / "real_projects" / "-experiments-worktrees"
            / "ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl")
    app = _app(path)
    later: list[list[tuple[int, int]]] = []
    async with app.run_test(size=(100, 14)) as pilot:
        view = app.screen.query_one(TranscriptView)
        real_compare = view._index.compare
        monkeypatch.setattr(view._index, "compare",
                            lambda *a: (found := real_compare(*a), later.append(list(found[2])))[0])
        app.go_to(len(app.shown.replay))
        await pilot.pause()
        await wait_for(pilot, lambda: not view._index.pending and not view._estimating)
        end_keys = list(view._index.keys)
        app.go_to(200)  # a restore: item 35 was a call still running there
        await pilot.pause()
        items = view._index.items
        changed = [i for i, item in enumerate(items) if item.version != end_keys[i]]
        assert changed and all(any(low <= i < high for low, high in later[-1]) for i in changed)
        top, rows = round(view.scroll_y), view.scrollable_content_region.height
        assert all(view._index.start(i) + view._index.heights[i] <= top or view._index.start(i) >= top + rows
                   for i in changed)  # off screen: not measured there
        first = _screen(app)
        await wait_for(pilot, lambda: not view._index.pending and not view._estimating)
        assert _screen(app) == first
        assert view._index.keys == [item.version for item in items]
        assert all(height == view._index.estimate(item)
                   for item, height, measured in zip(items, view._index.heights, view._index.measured)
                   if measured is None)
        assert view.virtual_size.height == view._index.total == sum(view._index.heights)


async def test_presses_queued_while_a_step_is_taken_go_there_in_one_seek(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A held ``←`` queues presses faster than a step back restores a big
    session: the presses queued by the time a step is taken are one seek to
    where they all lead (before, one seek each: 40 presses took 14.6 s at
    100 MB); a jump pressed after steps still waiting wins over them."""
    app = _app(SUBAGENT_SESSION)
    seeks: list[int] = []
    real_seek = app.shown.replay.seek

    def seek(target: int) -> player.SeekResult:
        seeks.append(target)
        return real_seek(target)

    async with app.run_test(size=SIZE) as pilot:
        n = len(app.shown.replay)
        app.go_to(n - 2)
        await pilot.pause()
        monkeypatch.setattr(app.shown.replay, "seek", seek)
        for key in ("left",) * 5 + ("right",):
            app.post_message(events.Key(key, None))
        await pilot.pause()
        assert app.shown.replay.position == n - 6 and seeks == [n - 6]
        assert f"frame {n - 6:,}/{n:,}" in str(app.screen.query_one("#replay-bar", Static).content)
        seeks.clear()
        for key in ("left", "left", "end", "left"):
            app.post_message(events.Key(key, None))
        await pilot.pause()
        assert app.shown.replay.position == n - 1 and seeks == [n, n - 1]
        seeks.clear()
        await pilot.press("left")  # one press alone: one step, at once
        assert app.shown.replay.position == n - 2 and seeks == [n - 2]
