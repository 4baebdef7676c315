"""The states replay seeks replace are freed after the seek, a burst at a time,
and freeing them touches nothing the replay still shows (real recordings)."""

from __future__ import annotations

import weakref
from pathlib import Path

import pytest

from conftest import FIXTURES, FoldObjects, state_graph
from cctv.reducer.replay import Replay
from cctv.reducer.replay.player import dismantle
from test_replay_seek import _fresh
from cctv.viewer.replay.recording import load_recording

STREAM = FIXTURES / "captures" / "stream"
SUBAGENT_SESSION = (FIXTURES / "captures" / "projects" / "-home-ada-src-demo"
                    / "d7acffbd-7cff-4056-82e8-4364dc8df14a.jsonl")
RECORDINGS = [STREAM / "06_background_bash.jsonl", STREAM / "07_hooks.jsonl", SUBAGENT_SESSION]


def _replay(path: Path) -> Replay:
    replay = load_recording(path).replay(interval=4)
    list(replay.build_checkpoints())
    return replay


@pytest.mark.parametrize("path", RECORDINGS, ids=lambda p: p.name)
def test_a_seek_leaves_the_state_it_replaced_for_later_and_freeing_it_changes_nothing_shown(
        path: Path) -> None:
    replay = _replay(path)
    n = len(replay)
    replay.seek(n)
    replay.free_retired()
    end_state = weakref.ref(replay.session)
    replay.seek(2)  # a restore: the end state waits to be freed
    assert replay.retired == 1 and end_state() is not None
    shown = state_graph(replay.session)
    held = FoldObjects(replay)
    assert replay.free_retired() == 1 and replay.retired == 0
    assert end_state() is None  # freed by reference counting: no cycle was left
    assert held.garbage() == []
    assert state_graph(replay.session) == shown == state_graph(_fresh(replay, 2))
    replay.seek(n - 1)  # and the replay goes on as before
    assert state_graph(replay.session) == state_graph(_fresh(replay, n - 1))


def test_only_the_last_two_replaced_states_wait_the_older_are_released_at_once() -> None:
    replay = _replay(SUBAGENT_SESSION)
    n = len(replay)
    for target in (n, 2, n - 1, 3, n - 2):
        replay.seek(target)
    assert replay.retired == 2
    held = FoldObjects(replay)
    replay.seek(2)
    assert replay.retired == 2 and held.garbage() == []


def test_dismantle_frees_a_state_in_bursts_and_leaves_it_empty() -> None:
    replay = _replay(STREAM / "07_hooks.jsonl")
    session = replay._new_session()
    for index in range(len(replay)):
        replay._apply(session, index)
    items = sum(len(a.items) for a in session.agents.values())
    assert items > 10 and session.hooks
    bursts = sum(1 for _ in dismantle(session, burst=2))
    assert bursts >= items // 2
    assert not session.calls and not session.hooks and not session.turns
    assert all(not a.items for a in session.agents.values()) or not session.agents


def test_a_restore_made_ahead_that_was_never_used_is_freed_like_a_replacedstate_graph() -> None:
    replay = _replay(SUBAGENT_SESSION)
    n = len(replay)
    replay.seek(n)
    replay.free_retired()
    assert replay.prepare_spare()
    replay.seek(n // 2 + 1)  # far back: the spare made for the end is not the one needed
    replay.free_retired()
    held = FoldObjects(replay)
    assert replay.prepare_spare()  # a new one replaces the unused one ...
    assert replay.retired == 1  # ... which waits to be freed instead of leaving cycles
    assert replay.free_retired() == 1 and held.garbage() == []


@pytest.mark.parametrize("path", [STREAM / "07_hooks.jsonl", STREAM / "11_multi_turn.jsonl",
                                  SUBAGENT_SESSION], ids=lambda p: p.name)
def test_freeing_a_state_folded_from_the_frames_leaves_the_frames_whole(path: Path) -> None:
    """A state folded straight from the frames holds objects of theirs (a
    result's model usage, an init's tool list): freeing it must not empty
    those, or the next fold from the same frames reads them empty."""
    replay = _replay(path)
    n = len(replay)
    for _ in range(n - 1):
        replay.step()  # folded from the frames, no restore
    replay.seek(1)  # a restore: the folded state is left behind
    assert replay.free_retired() == 1
    replay.seek(n)
    assert state_graph(replay.session) == state_graph(_fresh(_replay(path), n))
