"""The change vocabulary is complete and typed: a view can follow the fold from
its Change records alone, on every real recording."""

from __future__ import annotations

from pathlib import Path
from typing import get_args

from cctv.reducer.feed import Feed, read_file_lines
from cctv.reducer.state import MAIN, Activity, ChangeKind

from conftest import FIXTURES, fold_until


def test_changes_alone_rebuild_every_agents_items(recording: Path) -> None:
    feed = Feed()
    changes = []
    for batch in read_file_lines(recording):
        for line in batch:  # one line at a time, as a live source feeds
            changes += feed.feed([line])
    s = feed.session
    kinds = set(get_args(ChangeKind))
    assert {c.what for c in changes} <= kinds
    known = {MAIN}
    count: dict[str, int] = {MAIN: 0}
    for c in changes:
        if c.what == "agent_added":
            assert c.agent not in known
            known.add(c.agent)
            count[c.agent] = 0
        elif c.what == "item_added":
            assert c.agent in known, "an item of an agent no agent_added announced"
            assert c.index == count[c.agent]  # appended, in order, none skipped
            count[c.agent] += 1
        elif c.what in ("item_updated", "agent_updated"):
            assert c.agent in known
    assert known == set(s.agents)
    assert count == {a: len(agent.items) for a, agent in s.agents.items()}


def test_sub_agent_is_announced_once() -> None:
    # captures/stream/05_subagent.jsonl: the Agent call's first sub-agent frame adds it
    feed = Feed()
    added = []
    for batch in read_file_lines(FIXTURES / "captures/stream/05_subagent.jsonl"):
        added += [c.agent for c in feed.feed(batch) if c.what == "agent_added"]
    assert added == [a for a in feed.session.agents if a != MAIN] and len(added) == 1


def test_activity_is_a_typed_value() -> None:
    # forge/2.1.220/bash_tool.jsonl: the Bash call is open between its tool_use and result
    s = fold_until("forge/2.1.220/bash_tool.jsonl", 1)
    assert s.activity == Activity("idle")
    lines = (FIXTURES / "forge/2.1.220/bash_tool.jsonl").read_bytes().splitlines()
    use = next(n for n, ln in enumerate(lines, 1) if b'"tool_use"' in ln)
    s = fold_until("forge/2.1.220/bash_tool.jsonl", use)
    call = next(iter(s.calls.values()))
    assert s.activity == Activity("running", call.id, "Bash")
    assert s.activity.text == "running Bash"
