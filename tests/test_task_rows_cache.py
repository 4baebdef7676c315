"""The tasks panel's incremental rows equal a full rebuild after every frame.

:class:`widgets.task_rows.TaskRowCache` rebuilds only the rows the change
records touch (plus the running ones); if the fold changed a task or agent
without a change record naming it, or the cache mapped a record to the wrong
row, the two would differ here, on the real recordings.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import FIXTURES, recordings
from cctv.reducer.feed import Feed, read_file_lines
from cctv.viewer.loader import agent_id_for, subagent_files
from cctv.viewer.subagent_tail import agent_file_found
from cctv.widgets.task_rows import TaskRowCache, task_rows

NOW = 1.9e9

_PUBLIC = sorted((FIXTURES / "public").rglob("*.jsonl"))
_WITH_TASKS = [p for p in recordings() + _PUBLIC
               if b'"task_started"' in p.read_bytes() or b'"Task"' in p.read_bytes()
               or b'"Agent"' in p.read_bytes() or b"background" in p.read_bytes()]


def _frame_by_frame(path: Path) -> tuple[Feed, list[list]]:
    lines = [ln for batch in read_file_lines(path) for ln in batch]
    return Feed(), [[ln] for ln in lines]


@pytest.mark.parametrize("path", _WITH_TASKS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_cache_equals_full_rebuild_after_every_frame(path: Path) -> None:
    feed, steps = _frame_by_frame(path)
    cache = TaskRowCache()
    cache.refresh(feed.session, NOW)
    for i, step in enumerate(steps):  # frames arrive a second apart; the clock moves too
        changes = feed.feed(step, received_at=NOW + i)
        cache.note(feed.session, changes)
        now = NOW + i + 0.5
        cache.refresh(feed.session, now)
        assert cache.rows == task_rows(feed.session, now), f"after line {step[0].line_no}"
    if feed.session.format != "transcript":
        return
    now = NOW + len(steps)
    cache.refresh(feed.session, now)
    for agent_path, meta in subagent_files(path):  # as the app finds them
        agent = agent_id_for(agent_path, meta, feed.session.agent_file_ids)
        cache.note(feed.session, agent_file_found(feed.session, agent_path, meta, agent))
        cache.refresh(feed.session, now)
        assert cache.rows == task_rows(feed.session, now), f"{agent_path} found"
        for batch in read_file_lines(agent_path):
            for line in batch:
                cache.note(feed.session, feed.feed_agent_file([line], agent))
                cache.refresh(feed.session, now)
                assert cache.rows == task_rows(feed.session, now), f"{agent_path}:{line.line_no}"


def test_the_recordings_have_tasks_to_check() -> None:
    """The test above is not vacuous: the recordings it reads have rows."""
    with_rows = 0
    for path in _WITH_TASKS:
        feed = Feed()
        for batch in read_file_lines(path):
            feed.feed(batch)
        with_rows += bool(task_rows(feed.session))
    assert with_rows >= 10


def test_a_task_that_finishes_moves_and_only_touched_rows_are_rebuilt() -> None:
    """A background shell starts (a row appears), runs (its elapsed time follows
    the clock) and ends (it moves to the finished rows); a tick with no frame
    rebuilds only the rows whose time moves, and none when the clock has not."""
    path = FIXTURES / "captures" / "stream" / "06_background_bash.jsonl"
    feed = Feed()
    cache = TaskRowCache()
    moves = live_ticks = 0
    for i, line in enumerate(ln for batch in read_file_lines(path) for ln in batch):
        cache.note(feed.session, feed.feed([line], received_at=NOW + i))
        before = [r.key for r in cache.rows]
        _, moved = cache.refresh(feed.session, NOW + i)
        if [r.key for r in cache.rows] != before:
            assert moved
            moves += 1
        changed, moved = cache.refresh(feed.session, NOW + i + 0.5)  # a clock tick
        running = {r.key for r in cache.rows if r.running and r.elapsed is not None}
        assert changed <= running and not moved
        live_ticks += bool(changed)
        assert cache.refresh(feed.session, NOW + i + 0.5) == (set(), False)  # same clock
    assert moves >= 2 and live_ticks and cache.running == 0
    assert cache.rows == task_rows(feed.session, NOW + i)
