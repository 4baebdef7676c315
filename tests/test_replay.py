"""Replay's pure logic on real recordings: pacing, markers, seeking, change words."""

from __future__ import annotations

import json
import random
from datetime import datetime
from pathlib import Path

import pytest

from cctv.reducer.decode import decode_line
from cctv.reducer.replay import ChangeDescriber, Pacer, Replay, ReplayFrame, merge_frames, pace
from cctv.reducer.replay.pacing import EVEN_STEP_S, faster, skip_gaps, slower
from cctv.reducer.replay.checkpoints import _PLAN_RATIO, Checkpoints, pack, restore_checkpoint
from cctv.reducer.fold import Session
from cctv.reducer.replay.snapshot import checkpoint
from conftest import FIXTURES, replay_words, state_graph
from cctv.viewer.replay.recording import load_recording

STREAM = FIXTURES / "captures" / "stream"
PROJECT = FIXTURES / "captures" / "projects" / "-home-ada-src-demo"
SUBAGENT_SESSION = PROJECT / "d7acffbd-7cff-4056-82e8-4364dc8df14a.jsonl"


def _state(session: Session) -> dict:
    """What a viewer shows, as plain data: enough to tell two states apart."""
    return {
        "items": {aid: [(type(i).__name__, i.line_no, i.version) for i in a.items]
                  for aid, a in session.agents.items()},
        "tasks": {tid: t.status for tid, t in session.tasks.items()},
        "calls": {cid: c.status for cid, c in session.calls.items()},
        "hooks": {hid: h.status for hid, h in session.hooks.items()},
        "cost": None if session.cost_usd is None else round(session.cost_usd, 9),
        "turns": len(session.turns),
        "activity": session.activity,
        "lines": session.lines,
    }


def _fresh(replay: Replay, position: int) -> Session:
    session = replay._new_session()
    for index in range(position):
        replay._apply(session, index)
    return session


# --- pacing ------------------------------------------------------------------------------


def test_on_disk_rows_are_paced_by_their_timestamps() -> None:
    rec = load_recording(SUBAGENT_SESSION)
    timeline = pace(rec.frames)
    assert timeline.source == "timestamps"
    stamps = [json.loads(f.entry.raw).get("timestamp") for f in rec.frames]
    first = next(s for s in stamps if s)
    t0 = datetime.fromisoformat(first.replace("Z", "+00:00")).timestamp()
    assert timeline.start_at == pytest.approx(t0)
    latest = 0.0
    for offset, stamp in zip(timeline.offsets, stamps):
        if stamp:  # a row sits at its time (or, written out of order, at the latest so far)
            t = datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
            latest = max(latest, t - t0)
        assert offset == pytest.approx(latest, abs=1e-6)
    assert timeline.offsets == sorted(timeline.offsets)


def test_sub_agent_rows_are_merged_in_by_time() -> None:
    rec = load_recording(SUBAGENT_SESSION)
    agents = [f for f in rec.frames if f.agent is not None]
    assert agents, "the session has a sub-agent file"
    assert agents[0].opens is not None and agents[0].opens.file_id
    spawned = next(i for i, f in enumerate(rec.frames) if f.entry.kind == "assistant" and any(
        b.id == agents[0].agent for b in f.entry.message.content))
    assert rec.frames.index(agents[0]) > spawned  # after the call that started it
    main_lines = [f.entry.line_no for f in rec.frames if f.agent is None]
    assert main_lines == sorted(main_lines)


def test_stream_json_without_times_is_paced_by_the_durations_it_reports() -> None:
    rec = load_recording(STREAM / "06_background_bash.jsonl")
    timeline = pace(rec.frames)
    assert timeline.source == "derived"
    assert "duration_ms" in timeline.derived_from
    results = [i for i, f in enumerate(rec.frames) if f.entry.kind == "result"]
    assert results
    start = 0
    for end in results:  # each turn lasts what its result says
        duration = json.loads(rec.frames[end].entry.raw)["duration_ms"] / 1000
        assert timeline.offsets[end] - timeline.offsets[start] == pytest.approx(duration, rel=1e-6)
        start = end


def test_tool_progress_elapsed_time_fixes_the_gap_it_reports(tmp_path: Path) -> None:
    lines = [
        {"type": "assistant", "message": {"id": "m1", "content": [
            {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {}}]}},
        {"type": "tool_progress", "tool_use_id": "toolu_1", "tool_name": "Bash",
         "elapsed_time_seconds": 30},
        {"type": "tool_progress", "tool_use_id": "toolu_1", "tool_name": "Bash",
         "elapsed_time_seconds": 60},
    ]
    frames = [ReplayFrame(decode_line(json.dumps(x).encode(), i + 1)) for i, x in enumerate(lines)]
    timeline = pace(frames)
    assert timeline.source == "derived"
    assert timeline.offsets == [0.0, 30.0, 60.0]


def test_frames_that_say_nothing_about_time_get_an_even_pace() -> None:
    frames = [ReplayFrame(decode_line(b'{"type":"keep_alive"}', i + 1)) for i in range(5)]
    timeline = pace(frames)
    assert timeline.source == "even"
    assert timeline.offsets == [i * EVEN_STEP_S for i in range(5)]


def test_idle_gaps_are_shortened_and_the_time_saved_is_reported() -> None:
    offsets, skipped = skip_gaps([0.0, 1.0, 11.0, 12.0, 112.0])
    assert offsets == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert skipped == pytest.approx(108.0)
    assert skip_gaps([0.0, 2.0, 4.5]) == ([0.0, 2.0, 4.5], 0.0)


class FakeClock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_pacer_deadlines_are_absolute_and_speed_changes_do_not_jump() -> None:
    clock = FakeClock()
    pacer = Pacer([0.0, 1.0, 2.0, 10.0], clock, speed=2.0)
    pacer.start(0)
    assert [pacer.deadline(i) for i in range(4)] == [100.0, 100.5, 101.0, 105.0]
    clock.t = 100.49
    assert pacer.due() == 0
    clock.t = 101.2  # late wake-ups do not move the next deadline
    assert pacer.due() == 2
    assert pacer.deadline(3) == 105.0
    pacer.set_speed(4.0)  # recorded 2.4 s reached; 7.6 s left at 4×
    assert pacer.due() == 2
    assert pacer.deadline(3) == pytest.approx(101.2 + 7.6 / 4)
    pacer.start(1, speed=1.0)
    assert pacer.due() == 1 and pacer.deadline(2) == pytest.approx(102.2)


def test_speed_steps_between_a_quarter_and_64() -> None:
    assert faster(1.0) == 2.0 and slower(1.0) == 0.5
    assert faster(64.0) == 64.0 and slower(0.25) == 0.25
    assert faster(3.0) == 4.0


# --- markers -----------------------------------------------------------------------------


def test_markers_find_tasks_tools_and_compactions() -> None:
    replay = load_recording(STREAM / "06_background_bash.jsonl").replay()
    m = replay.markers
    assert m.count("task") >= 2 and m.count("tool") == 2 and m.count("turn") == 1
    first = m.next("task", -1)
    assert first is not None
    assert replay.frames[first].entry.kind_key in ("system/task_started",
                                                   "system/background_tasks_changed")
    assert m.previous("task", first) is None
    assert m.next("task", first) > first
    compact = load_recording(STREAM / "10_compact_manual.jsonl").replay().markers
    assert compact.count("compaction") >= 1


# --- seeking -----------------------------------------------------------------------------


@pytest.mark.parametrize("path", [
    STREAM / "06_background_bash.jsonl", STREAM / "10_compact_manual.jsonl",
    STREAM / "07_hooks.jsonl", SUBAGENT_SESSION,
], ids=lambda p: p.name)
def test_seeking_anywhere_gives_the_state_a_fresh_fold_gives(path: Path) -> None:
    rec = load_recording(path)
    replay = rec.replay(interval=4)
    assert sum(1 for _ in replay.build_checkpoints()) >= 2
    assert replay.checkpoints.complete
    n = len(replay)
    order = [n, 1, n // 2, n // 2 - 1, 3, n - 1, 2, n // 3, n]
    for target in order:
        replay.seek(target)
        assert replay.position == target
        assert _state(replay.session) == _state(_fresh(replay, target)), target
    for target in range(n - 1, 0, -1):  # stepping back frame by frame
        replay.seek(target)
        assert _state(replay.session) == _state(_fresh(replay, target)), target


def test_a_restore_comes_from_the_nearest_checkpoint_before() -> None:
    replay = load_recording(STREAM / "07_hooks.jsonl").replay(interval=5)
    list(replay.build_checkpoints())
    replay.seek(len(replay))
    result = replay.seek(12)
    assert result.restored
    assert replay.checkpoints.latest_at_or_before(11) == 10
    forward = replay.seek(13)
    assert not forward.restored and forward.changes == replay.changes


def test_checkpoints_stay_under_their_budget_by_thinning() -> None:
    cps = Checkpoints(interval=10, budget_bytes=2_000)
    rng = random.Random(1)
    for position in range(10, 2000, 10):
        if position % cps.interval == 0:  # as the builder does
            cps.add(position, rng.randbytes(300))  # ~300 bytes each: random bytes do not compress
    assert cps.bytes <= 2_000 and len(cps) >= 3
    assert cps.interval > 10
    assert all(p % cps.interval == 0 for p in cps.positions)


def test_a_builder_snapshots_only_where_thinning_is_not_expected_to_drop_it() -> None:
    """Snapshots growing with the position, as a session's do: the planned
    grid keeps the budget with (almost) no snapshot taken in vain, and it is
    not coarser than the budget needs (twice as many would not fit)."""
    frames, budget = 20_000, 50_000

    def build(plan: bool) -> tuple[Checkpoints, int]:
        cps = Checkpoints(interval=100, budget_bytes=budget, last_position=frames - 1)
        taken = 0
        for position in range(1, frames):
            every = cps.planned_interval(frames) if plan else cps.interval
            if position % every == 0 or position == frames - 1:
                taken += 1
                raw = 2_000 + position  # uncompressed; packed as much smaller as planned
                cps.snapshot_taken(position, raw)
                cps.add(position, bytes(int(raw / _PLAN_RATIO)), packed=True)
        return cps, taken

    planned, taken = build(plan=True)
    thinned, taken_before = build(plan=False)
    assert planned.bytes <= budget and thinned.bytes <= budget
    assert taken - len(planned) <= 2 < taken_before - len(thinned)
    assert len(planned) >= len(thinned)
    step = max(b - a for a, b in zip(planned.positions, planned.positions[1:])) // 2
    finer = sum(int((2_000 + p) / _PLAN_RATIO) for p in range(step, frames - 1, step))
    assert finer > budget  # half the planned spacing would not have fitted


def test_the_frame_before_the_last_keeps_its_checkpoint_whatever_thinning_drops() -> None:
    cps = Checkpoints(interval=10, budget_bytes=2_000, last_position=1995)
    rng = random.Random(2)
    for position in [*range(10, 1995, 10), 1995]:
        if position % cps.interval == 0 or position == cps.last_position:
            cps.add(position, rng.randbytes(300), packed=True)
    assert cps.interval > 10 and 1995 not in cps.positions and cps.bytes <= 2_000
    assert cps.latest_at_or_before(2000) == cps.packed_at_or_before(1996)[0] == 1995
    assert cps.latest_at_or_before(1994) == cps.positions[-1] < 1995
    assert cps.bytes == 300 * len(cps)


def test_a_jump_to_the_end_restores_the_frame_before_and_steps_once() -> None:
    replay = load_recording(PROJECT / "d7acffbd-7cff-4056-82e8-4364dc8df14a.jsonl").replay(
        interval=16)
    list(replay.build_checkpoints())
    n = len(replay)
    assert (n - 1) % replay.checkpoints.interval  # off the grid
    assert replay.checkpoints.latest_at_or_before(n) == n - 1
    folded: list[int] = []
    real = replay._apply
    replay._apply = lambda session, index: folded.append(index) or real(session, index)
    assert replay.seek(n).restored
    assert folded == [n - 1]
    assert _state(replay.session) == _state(_fresh(replay, n))


# --- change records in words --------------------------------------------------------------


_ALL_RECORDINGS = sorted(p for p in FIXTURES.rglob("*.jsonl") if "subagents" not in p.parts)


def test_the_values_words_compare_against_follow_the_change_records_exactly() -> None:
    """Folding on without words keeps the describer's values from the change
    records alone (:meth:`ChangeDescriber.track`): at every frame of every
    recording in the fixtures they equal a reading of the whole state."""
    assert len(_ALL_RECORDINGS) > 200
    for path in _ALL_RECORDINGS:
        replay = load_recording(path).replay()
        tracked = ChangeDescriber.of(replay.session)
        for index in range(len(replay)):
            tracked.track(replay.session, replay._apply(replay.session, index))
            whole = ChangeDescriber.of(replay.session)
            assert vars(tracked) == vars(whole), (path.name, index + 1)


def test_a_checkpoint_keeps_the_values_words_compare_against() -> None:
    """A checkpoint is taken with the describer's values (a restore then need
    not read every status again): restored, they equal a reading of the
    restored state, at every checkpoint of every recording in the fixtures,
    and a checkpoint taken without them gives none."""
    for path in _ALL_RECORDINGS:
        replay = load_recording(path).replay(interval=16)
        list(replay.build_checkpoints())
        for position in replay.checkpoints.positions + [replay.checkpoints.last_position]:
            found = replay.checkpoints.packed_at_or_before(position)
            if found is None:
                continue
            session, describer = restore_checkpoint(found[1])
            assert describer is not None, (path.name, position)
            assert vars(describer) == vars(ChangeDescriber.of(session)), (path.name, position)
    assert restore_checkpoint(pack(checkpoint(Session())))[1] is None


def test_a_task_ending_is_told_as_a_status_change() -> None:
    words = [line for frame in replay_words(STREAM / "06_background_bash.jsonl") for line in frame]
    assert "task b0q8… running → completed" in words
    assert any(line.startswith("task b0q8… started (local_bash)") for line in words)
    assert any(line.startswith("cost +$0.0172") for line in words)


def test_a_compaction_is_told_with_its_token_counts() -> None:
    words = [line for frame in replay_words(STREAM / "10_compact_manual.jsonl") for line in frame]
    assert "compaction (manual): 1,225 → 2,787 tokens" in words


def test_a_failed_tool_call_is_told() -> None:
    path = next(p for p in sorted((FIXTURES / "forge").rglob("*.jsonl"))
                if b'"is_error":true' in p.read_bytes() and b'"tool_result"' in p.read_bytes())
    words = [line for frame in replay_words(path) for line in frame]
    assert any(line.startswith("tool call ") and " failed" in line for line in words), path


def test_merge_without_sub_agents_keeps_the_file_order() -> None:
    entries = [decode_line(b'{"type":"keep_alive"}', i) for i in range(1, 4)]
    assert [f.entry.line_no for f in merge_frames(entries)] == [1, 2, 3]


def test_checkpoints_built_in_a_child_process_equal_the_ones_built_here() -> None:
    from cctv.viewer.replay.builder import build_checkpoints

    rec = load_recording(STREAM / "07_hooks.jsonl")
    here, there = rec.replay(interval=4), rec.replay(interval=4)
    kept_here = list(build_checkpoints(here, use_fork=False))
    pids: list[int | None] = []
    kept_there = list(build_checkpoints(there, on_child=pids.append))
    assert kept_here == kept_there and len(kept_here) >= 2
    assert there.checkpoints.complete and pids[0] and pids[-1] is None
    assert there.checkpoints.pool is not None and here.checkpoints.pool is not None
    for position in set(kept_there):
        a = here.checkpoints.state_at_or_before(position)[1]
        b = there.checkpoints.state_at_or_before(position)[1]
        assert state_graph(a) == state_graph(b) == state_graph(_fresh(here, position))


def test_a_head_then_the_rest_is_the_whole_recording() -> None:
    path = STREAM / "07_hooks.jsonl"
    full = load_recording(path)
    head = load_recording(path, head_bytes=3000)
    assert not head.complete and 0 < len(head.frames) < len(full.frames)
    replay = head.replay()
    replay.seek(len(head.frames))
    state = _state(replay.session)
    head.take_rest(head.read_rest(), replay)
    assert head.complete and len(replay) == len(full.frames)
    assert [(f.entry.line_no, f.entry.offset, f.entry.raw) for f in replay.frames] == \
        [(f.entry.line_no, f.entry.offset, f.entry.raw) for f in full.frames]
    assert replay.timeline.offsets == full.replay().timeline.offsets
    assert _state(replay.session) == state  # the state at the cursor did not move
    assert head.feed.entries == full.feed.entries
    replay.seek(len(replay))
    assert _state(replay.session) == _state(_fresh(full.replay(), len(replay)))
