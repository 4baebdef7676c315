"""Fast replay seeks stay exact: a restore made ahead (the spare), restoring in
bursts, and releasing a replaced state, on real recordings."""

from __future__ import annotations

import gc
import threading
from pathlib import Path
from typing import Any

import pytest

from conftest import FIXTURES, FoldObjects, replay_words, state_graph
from cctv.reducer.replay import Replay
from cctv.reducer.replay import checkpoints, player
from cctv.reducer.replay.checkpoints import restore_checkpoint
from cctv.reducer.replay.player import release
from cctv.reducer.replay.snapshot import checkpoint, restore
from cctv.reducer.fold import Session
from cctv.viewer.replay.recording import load_recording

STREAM = FIXTURES / "captures" / "stream"
PROJECT = FIXTURES / "captures" / "projects" / "-home-ada-src-demo"
SUBAGENT_SESSION = PROJECT / "d7acffbd-7cff-4056-82e8-4364dc8df14a.jsonl"
RECORDINGS = [STREAM / "06_background_bash.jsonl", STREAM / "07_hooks.jsonl",
              STREAM / "10_compact_manual.jsonl", SUBAGENT_SESSION]


def _fresh(replay: Replay, position: int) -> Session:
    session = replay._new_session()
    for index in range(position):
        replay._apply(session, index)
    return session


def _replay(path: Path) -> Replay:
    replay = load_recording(path).replay(interval=4)
    list(replay.build_checkpoints())
    return replay


@pytest.mark.parametrize("path", RECORDINGS, ids=lambda p: p.name)
def test_restoring_a_packed_checkpoint_cancellably_gives_the_samestate_graph(path: Path) -> None:
    replay = _replay(path)
    for position in replay.checkpoints.positions:
        kept = replay.checkpoints.packed_at_or_before(position)[1]
        cancellable = restore_checkpoint(kept, cancelled=lambda: False)[0]
        assert state_graph(cancellable) \
            == state_graph(replay.checkpoints.state_at_or_before(position)[1]) \
            == state_graph(_fresh(replay, position)), position


@pytest.mark.parametrize("margin", [0, 3, 256])
@pytest.mark.parametrize("path", RECORDINGS, ids=lambda p: p.name)
def test_stepping_back_from_a_restore_made_ahead_is_exact(
        path: Path, margin: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(player, "SPARE_MARGIN", margin)  # folded on to there from its checkpoint
    replay = _replay(path)
    words = replay_words(path)
    n = len(replay)
    replay.seek(n)
    served = 0
    while replay.position > 1:
        made = replay.prepare_spare()
        assert not replay.wants_spare()  # it is there now, for this frame's step back
        result = replay.seek(replay.position - 1)
        served += made and replay._spare is None
        assert result.restored
        assert state_graph(replay.session) == state_graph(_fresh(replay, replay.position)), replay.position
        assert replay.descriptions == words[replay.position - 1], replay.position
    assert served >= len(replay.checkpoints) - 1  # every checkpoint's span was served ahead


def test_a_restore_made_ahead_is_left_for_a_seek_it_does_not_fit() -> None:
    replay = _replay(STREAM / "07_hooks.jsonl")
    n = len(replay)
    replay.seek(n)
    assert replay.prepare_spare()
    spare_at = replay._spare[0]
    replay.seek(2)  # before the spare: restored from its own checkpoint
    assert replay._spare is not None and replay._spare[0] == spare_at
    assert state_graph(replay.session) == state_graph(_fresh(replay, 2))
    replay.seek(spare_at + 2)  # forward, after it: folding on from here is no worse
    replay.seek(spare_at + 1)  # back again, just after it: the spare serves
    assert replay._spare is None
    assert state_graph(replay.session) == state_graph(_fresh(replay, spare_at + 1))


@pytest.mark.parametrize("job", ["prepare_spare", "free_retired"])
def test_a_worker_making_a_restore_ahead_or_freeing_what_seeks_left_while_stepping_is_exact(
        job: str) -> None:
    replay = _replay(SUBAGENT_SESSION)
    n = len(replay)
    replay.seek(n)
    for target in range(n - 1, n // 2, -1):
        worker = threading.Thread(target=getattr(replay, job))
        worker.start()
        replay.seek(target)  # races the worker: it takes the spare, or frees the state before
        worker.join()
        assert state_graph(replay.session) == state_graph(_fresh(replay, target)), target
    replay.free_retired()
    assert replay.retired == 0


@pytest.mark.parametrize("path", [STREAM / "07_hooks.jsonl", SUBAGENT_SESSION],
                         ids=lambda p: p.name)
def test_a_released_state_is_freed_without_the_cyclic_collector(path: Path) -> None:
    snapshot = checkpoint(_fresh(_replay(path), len(_replay(path)) - 1))
    gc.collect()
    kept = restore(snapshot)
    del kept
    assert gc.collect() > 0  # a state has cycles: without release only the collector frees it
    released = restore(snapshot)
    assert released.calls
    held = FoldObjects(released)
    release(released)
    del released
    assert held.garbage() == []


def test_a_seek_back_releases_the_state_it_replaces() -> None:
    replay = _replay(SUBAGENT_SESSION)
    replay.seek(len(replay))
    held = FoldObjects(replay)
    for target in (3, len(replay) - 1, 2):
        replay.seek(target)
        held.add(replay)
    assert held.garbage() == []


async def test_in_the_app_a_step_back_after_a_rest_restores_nothing_on_the_ui_thread(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from cctv.viewer.replay.app import ReplayApp

    restores: list[tuple[str, bool]] = []
    real = checkpoints.restore_with_extra  # (what a seek restores with)

    def spy(snapshot: bytes, *, cancelled: Any = None, **kwargs: Any) -> tuple[Session, Any]:
        in_bursts = cancelled is not None  # a worker's restore: it can be stopped
        restores.append((threading.current_thread().name, in_bursts))
        return real(snapshot, cancelled=cancelled, **kwargs)

    monkeypatch.setattr(checkpoints, "restore_with_extra", spy)
    path = STREAM / "06_background_bash.jsonl"
    rec = load_recording(path)
    replay = rec.replay(interval=4)
    list(replay.build_checkpoints())
    app = ReplayApp(rec, replay=replay, build_checkpoints=False, label=path.name)
    end = next(i + 1 for i, f in enumerate(replay.frames)
               if f.entry.kind_key == "system/task_updated" and b'"completed"' in f.entry.raw)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("t")
        app.go_to(end)  # a jump forward: restored here, on the UI thread
        restores.clear()
        for _ in range(100):  # the cursor rests: the app restores ahead in a worker
            await pilot.pause(0.05)
            if not app._spare_busy and not replay.wants_spare():
                break
        assert restores and all(in_bursts for _, in_bursts in restores)
        assert all(name != threading.main_thread().name for name, _ in restores)
        restores.clear()
        await pilot.press("left")
        assert not [r for r in restores if r[0] == threading.main_thread().name]
        await pilot.pause()
        assert replay.position == end - 1
        title = str(app.screen.query_one("#tasks-title").content)
        assert "1 running · 0 finished" in title
        assert state_graph(replay.session) == state_graph(_fresh(replay, end - 1))


# --- the first frame before the whole file is read -------------------------------------------


def _frames(frames) -> list[tuple]:
    return [(f.entry.line_no, f.entry.raw, f.agent, f.opens) for f in frames]


def test_a_transcript_with_sub_agents_opens_on_its_head() -> None:
    size = SUBAGENT_SESSION.stat().st_size
    full = load_recording(SUBAGENT_SESSION)
    head = load_recording(SUBAGENT_SESSION, head_bytes=size // 2)
    assert full.format == head.format == "transcript" and full.agent_files
    assert not head.complete and 0 < len(head.frames) < len(full.frames)
    # the head is the recording's first frames: the sub-agent rows recorded before its last row
    assert _frames(head.frames) == _frames(full.frames[:len(head.frames)])
    assert head.frames[-1].agent is None
    replay = head.replay(interval=4)
    replay.seek(len(head.frames))
    at_head = state_graph(replay.session)
    head.take_rest(head.read_rest(), replay)
    assert head.complete and _frames(replay.frames) == _frames(full.frames)
    assert state_graph(replay.session) == at_head
    replay.seek(len(replay))
    assert state_graph(replay.session) == state_graph(_fresh(full.replay(), len(replay)))


def test_from_a_line_reads_a_head_through_that_line() -> None:
    path = STREAM / "07_hooks.jsonl"
    lines = path.read_bytes().count(b"\n")
    line = lines * 2 // 3
    full = load_recording(path)
    head = load_recording(path, head_bytes=200, through_line=line)
    assert not head.complete and len(head.frames) < len(full.frames)
    at = head.replay().position_of_line(line)
    assert at == full.replay().position_of_line(line)
    assert head.frames[at - 1].entry.line_no == line


# --- checkpoints under a small budget ------------------------------------------------------------


def test_thinned_checkpoints_are_the_same_built_here_or_in_a_child_and_none_is_wasted(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from cctv.viewer.replay.builder import build_checkpoints

    rec = load_recording(SUBAGENT_SESSION)
    taken: list[int] = []
    real = player.checkpoint

    def counted(session: Session, extra: Any = None, shared: Any = None) -> bytes:
        taken.append(session.lines)  # the first pass's (the pool's plan takes the pooled ones)
        return real(session, extra, shared)

    here = rec.replay(interval=2, budget_bytes=40_000)
    there = rec.replay(interval=2, budget_bytes=40_000)
    monkeypatch.setattr(player, "checkpoint", counted)
    kept_here = list(build_checkpoints(here, use_fork=False))
    monkeypatch.undo()
    kept_there = list(build_checkpoints(there))
    positions = here.checkpoints.positions
    assert max(b - a for a, b in zip(positions, positions[1:])) > 2  # the budget spaced them
    assert here.checkpoints.positions == there.checkpoints.positions
    assert len(taken) < (len(here) - 1) // 2  # no snapshot where the coarser grid has none
    for position in there.checkpoints.positions:
        a = here.checkpoints.state_at_or_before(position)[1]
        b = there.checkpoints.state_at_or_before(position)[1]
        assert state_graph(a) == state_graph(b) == state_graph(_fresh(here, position))
    assert kept_here == kept_there


def test_near_the_start_the_restore_made_ahead_is_the_one_the_end_needs() -> None:
    replay = load_recording(STREAM / "07_hooks.jsonl").replay(interval=5)
    list(replay.build_checkpoints())
    n = len(replay)
    replay.seek(1)
    assert replay.prepare_spare()
    assert replay.checkpoints.positions[-1] < replay._spare[0] == n - 1
    result = replay.seek(n)  # `end`: the restore made ahead only steps once
    assert result.restored and replay._spare is None
    assert state_graph(replay.session) == state_graph(_fresh(replay, n))


def test_a_restore_made_ahead_stops_when_told() -> None:
    replay = _replay(SUBAGENT_SESSION)
    replay.seek(len(replay))
    kept = replay.checkpoints.packed_at_or_before(len(replay))[1]
    with pytest.raises(EOFError):
        restore_checkpoint(kept, cancelled=lambda: True)
    replay.stop_spare()
    assert not replay.prepare_spare() and replay._spare is None
    replay.seek(len(replay) - 1)  # seeking still works, restoring itself
    assert state_graph(replay.session) == state_graph(_fresh(replay, len(replay) - 1))


def test_a_far_seek_forward_folds_on_when_that_is_cheaper_than_a_restore(
        monkeypatch: pytest.MonkeyPatch) -> None:
    restores: list[int] = []
    real = checkpoints.restore_with_extra  # (what a seek restores with)
    monkeypatch.setattr(checkpoints, "restore_with_extra",
                        lambda *a, **k: restores.append(1) or real(*a, **k))
    replay = _replay(SUBAGENT_SESSION)
    words = replay_words(SUBAGENT_SESSION)
    n = len(replay)
    assert n > 3 * replay.checkpoints.interval
    for fold_rate, restore_rate, restored in ((1e-9, 1.0, False), (1.0, 1e-12, True)):
        for target in range(3, n + 1, 7):
            replay.seek(2)
            restores.clear()
            replay._fold_rate, replay._restore_rate = fold_rate, restore_rate
            replay.seek(target)  # from before the first checkpoint, on or by a restore
            assert bool(restores) == (restored and target - 2 > replay.checkpoints.interval)
            assert state_graph(replay.session) == state_graph(_fresh(replay, target))
            assert replay.descriptions == words[target - 1], target  # the same words


def test_a_long_fold_on_says_so_and_either_reports_every_change(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(player, "REPORTED_FOLD", 3)
    replay = load_recording(SUBAGENT_SESSION).replay(interval=64)
    replay.seek(1)
    stepped = load_recording(SUBAGENT_SESSION).replay(interval=64)
    stepped.seek(1)
    records = [stepped.step() for _ in range(8)]
    long = replay.seek(6)  # 4 frames folded, then one step
    assert long.many and not long.restored
    assert long.changes == [c for r in records[:5] for c in r]
    assert replay.changes == records[4]  # the inspector has the last frame's records
    short = replay.seek(9)
    assert not short.many and not short.restored
    assert short.changes == [c for r in records[5:] for c in r]
    assert state_graph(replay.session) == state_graph(_fresh(replay, 9))


def test_a_restore_made_ahead_for_where_the_user_points_serves_a_seek_there(
        monkeypatch: pytest.MonkeyPatch) -> None:
    replay = _replay(SUBAGENT_SESSION)
    n = len(replay)
    replay.seek(n)
    target = n // 2
    replay.aim = target
    assert replay.wants_spare() and replay.prepare_spare()
    assert not replay.wants_spare()
    restores: list[int] = []
    real = checkpoints.restore_with_extra  # (what a seek restores with)
    monkeypatch.setattr(checkpoints, "restore_with_extra",
                        lambda *a, **k: restores.append(1) or real(*a, **k))
    replay.seek(target)
    assert not restores and replay._spare is None  # taken: only a few frames folded
    assert state_graph(replay.session) == state_graph(_fresh(replay, target))
    replay.aim = target  # pointing where the cursor is: back to what a step back needs
    assert replay._spare_plan() == (replay.checkpoints.latest_at_or_before(target - 2),
                                    max(replay.checkpoints.latest_at_or_before(target - 2),
                                        target - 2 - player.SPARE_MARGIN))


async def test_in_the_app_a_click_where_the_pointer_rested_restores_nothing_on_the_ui_thread(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from cctv.viewer.replay.app import ReplayApp
    from cctv.widgets.timeline import ReplayTimeline

    rec = load_recording(SUBAGENT_SESSION)
    replay = rec.replay(interval=4)
    list(replay.build_checkpoints())
    app = ReplayApp(rec, replay=replay, build_checkpoints=False, label="session")
    restores: list[str] = []
    real = checkpoints.restore_with_extra  # (what a seek restores with)
    monkeypatch.setattr(checkpoints, "restore_with_extra",
                        lambda *a, **k: restores.append(threading.current_thread().name) or real(*a, **k))
    async with app.run_test(size=(120, 36)) as pilot:
        app.go_to(len(replay))
        await pilot.pause()
        timeline = app.screen.query_one(ReplayTimeline)
        x = 1 + timeline.column_of(len(replay) // 2)
        target = timeline.position_at(x)
        await pilot.hover(ReplayTimeline, offset=(x, 0))
        await pilot.pause()
        assert str(timeline.tooltip).startswith(f"frame {target:,} · ")  # where a click goes
        for _ in range(100):  # the pointer rests: the app restores for there in a worker
            await pilot.pause(0.05)
            if replay.aim == target and not app._spare_busy and not replay.wants_spare():
                break
        assert replay._spare is not None and replay._spare[0] < target
        restores.clear()
        await pilot.click(ReplayTimeline, offset=(x, 0))
        await pilot.pause()
        assert replay.position == target
        assert threading.main_thread().name not in restores
        assert state_graph(replay.session) == state_graph(_fresh(replay, target))
