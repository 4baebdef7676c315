"""Replay checkpoints that share the final state's units (reducer.replay.pool):
restores equal a fresh fold, no fold ever changes a shared unit, and freeing
a state a seek left behind leaves the pool whole — on real recordings."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from conftest import FIXTURES, state_graph
from cctv.reducer.replay import Replay
from cctv.reducer.replay.checkpoints import PLAIN, POOL, Pooled, restore_checkpoint
from cctv.reducer.replay.pool import PoolPlan, UnitPool, signature
from cctv.reducer.fold import Session
from cctv.reducer.state import HookRun
from cctv.viewer.replay.recording import load_recording

STREAM = FIXTURES / "captures" / "stream"
SUBAGENT_SESSION = (FIXTURES / "captures" / "projects" / "-home-ada-src-demo"
                    / "d7acffbd-7cff-4056-82e8-4364dc8df14a.jsonl")
RECORDINGS = [STREAM / "06_background_bash.jsonl", STREAM / "07_hooks.jsonl",
              STREAM / "10_compact_manual.jsonl", SUBAGENT_SESSION]
EVERY_RECORDING = sorted(p for p in FIXTURES.rglob("*.jsonl") if "subagents" not in p.parts)


def _fresh(replay: Replay, position: int) -> Session:
    session = replay._new_session()
    for index in range(position):
        replay._apply(session, index)
    return session


def _replay(path: Path, interval: int = 4) -> Replay:
    replay = load_recording(path).replay(interval=interval)
    list(replay.build_checkpoints())
    return replay


def _pool_signatures(replay: Replay) -> list[tuple]:
    pool = replay.checkpoints.pool
    assert pool is not None
    return [signature(obj) if hasattr(obj, "version") else None for obj in pool.objects]


def test_no_frame_changes_a_unit_without_raising_its_items_version() -> None:
    """What sharing rests on: a unit (an item and the call, hook run or turn
    it draws) that changes has its item's version raised, so a unit equal to
    its final self (version included) is never changed again. Checked after
    every frame of every recording in the fixtures."""
    frames = 0
    for path in EVERY_RECORDING:
        replay = load_recording(path).replay()
        session = replay._new_session()
        before: dict[tuple[str, int], tuple] = {}
        for index in range(len(replay)):
            replay._apply(session, index)
            frames += 1
            now = {(aid, pos): signature(item) for aid, agent in session.agents.items()
                   for pos, item in enumerate(agent.items)}
            for key, old in before.items():
                item = session.agents[key[0]].items[key[1]]
                if now[key] != old:
                    assert item.version != dict(zip(type(item).__struct_fields__, old[1])).get(
                        "version", item.version), (path.name, index + 1, key, type(item).__name__)
            before = now
    assert frames > 4000


@pytest.mark.parametrize("path", RECORDINGS, ids=lambda p: p.name)
def test_every_kept_checkpoint_is_pooled_and_restores_what_a_fresh_fold_gives(path: Path) -> None:
    replay = _replay(path)
    checkpoints = replay.checkpoints
    assert checkpoints.complete and checkpoints.pool is not None
    positions = [*checkpoints.positions, checkpoints.last_position]
    for position in positions:
        found = checkpoints.packed_at_or_before(position)
        assert found is not None and found[0] == position and type(found[1]) is Pooled
        restored, _ = restore_checkpoint(found[1])
        assert state_graph(restored) == state_graph(_fresh(replay, position)), position
    # the state at the frame before the last takes nearly every unit from the pool
    end, _ = restore_checkpoint(checkpoints.packed_at_or_before(len(replay))[1])
    pool = {id(obj) for obj in checkpoints.pool.objects}
    items = [item for agent in end.agents.values() for item in agent.items]
    shared = sum(id(item) in pool for item in items)
    assert shared >= max(len(items) - 3, 1)


@pytest.mark.parametrize("path", RECORDINGS, ids=lambda p: p.name)
def test_seeking_and_stepping_anywhere_leaves_the_pool_as_it_was(path: Path) -> None:
    replay = _replay(path)
    pool_before = _pool_signatures(replay)
    links_before = [getattr(obj, "item", None) for obj in replay.checkpoints.pool.objects]
    n = len(replay)
    rng = random.Random(7)
    for target in [n, 1, n // 2, n - 1, *(rng.randint(1, n) for _ in range(25)), 2, n]:
        replay.seek(target)
        assert state_graph(replay.session) == state_graph(_fresh(replay, target)), target
        if rng.random() < 0.5:
            replay.prepare_spare()
        if rng.random() < 0.5:
            replay.free_retired()  # what seeks left behind, around the shared units
    while replay.position > 1:  # stepping back all the way, each step a restore
        replay.seek(replay.position - 1)
        replay.free_retired()
    assert state_graph(replay.session) == state_graph(_fresh(replay, 1))
    assert _pool_signatures(replay) == pool_before
    assert [getattr(obj, "item", None) for obj in replay.checkpoints.pool.objects] == links_before


def test_a_unit_that_changes_later_is_not_shared_before_it_does() -> None:
    """07_hooks: a hook run is shared only from the frame its response came
    (before, it is running, not its final self); the frame before the last
    shares every unit whose last change came before it."""
    rec = load_recording(STREAM / "07_hooks.jsonl")
    replay = rec.replay()
    plan = PoolPlan(_fresh(replay, len(replay)))
    for position in range(1, len(replay)):
        session = _fresh(replay, position)
        shared = plan.shared(session)
        for agent in session.agents.values():
            for item in agent.items:
                hook = getattr(item, "hook", None)
                if hook is not None:
                    assert (id(item) in shared) == (hook.status != "running"), position
                    assert (id(hook) in shared) == (id(item) in shared)


def test_after_a_builder_that_stopped_half_way_states_from_both_pools_stay_exact() -> None:
    """A checkpoint child that dies in its second pass is followed by a build
    here: its pool replaces the first one, while checkpoints (and states)
    taken from the first one are still in use."""
    replay = load_recording(STREAM / "07_hooks.jsonl").replay(interval=4)
    checkpoints = replay.checkpoints
    pooled = 0
    for kind, position, data in replay.checkpoint_pieces(checkpoints):
        if kind == PLAIN:
            checkpoints.add(position, data)
        elif kind == POOL:
            checkpoints.add_pool(UnitPool.load(data, packed=False))
        elif checkpoints.add_pooled(position, data):
            pooled += 1
            if pooled == len(checkpoints.positions) // 2:
                break  # the child died here
    first = checkpoints.pool
    n = len(replay)
    served = max(p for p in checkpoints.positions
                 if type(checkpoints.packed_at_or_before(p)[1]) is Pooled)
    assert any(o.item is not None for o in first.objects if isinstance(o, HookRun))
    replay.seek(served + 1)  # restored from the first pool
    replay.prepare_spare()  # so is the restore made ahead
    list(replay.build_checkpoints())  # what the app does when the child failed
    assert checkpoints.pool is not first and checkpoints.pooled
    first_before = [signature(o) if hasattr(o, "version") else None for o in first.objects]
    links_before = [getattr(o, "item", None) for o in first.objects]
    for target in [n // 2, 2, n - 1, 3, n, 1, n // 3]:
        replay.seek(target)
        replay.free_retired()
        assert state_graph(replay.session) == state_graph(_fresh(replay, target)), target
    assert [signature(o) if hasattr(o, "version") else None for o in first.objects] == first_before
    assert [getattr(o, "item", None) for o in first.objects] == links_before
