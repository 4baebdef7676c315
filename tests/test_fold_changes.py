"""The change vocabulary is complete and typed: a view can follow the fold from
its change records alone, on every real recording."""

from __future__ import annotations

from pathlib import Path
from typing import assert_never, get_args

from msgspec.structs import astuple, replace

from cctv.reducer.feed import Feed, read_file_lines
from cctv.reducer.state import (
    MAIN,
    Activity,
    Agent,
    AgentAdded,
    AgentChanged,
    Change,
    HookChanged,
    ItemAdded,
    ItemUpdated,
    SessionChanged,
    TaskChanged,
)
from cctv.viewer.replay.recording import load_recording

from conftest import FIXTURES, fold_until


def test_changes_alone_rebuild_every_agents_items(recording: Path) -> None:
    feed = Feed()
    changes: list[Change] = []
    for batch in read_file_lines(recording):
        for line in batch:  # one line at a time, as a live source feeds
            changes += feed.feed([line])
    s = feed.session
    assert all(isinstance(c, get_args(Change)) for c in changes)
    known = {MAIN}
    count: dict[str, int] = {MAIN: 0}
    for c in changes:
        match c:
            case AgentAdded(agent):
                assert agent not in known
                known.add(agent)
                count[agent] = 0
            case ItemAdded(agent, index):
                assert agent in known, "an item of an agent no AgentAdded announced"
                assert index == count[agent]  # appended, in order, none skipped
                count[agent] += 1
            case ItemUpdated(agent, index):
                assert agent in known and 0 <= index < count[agent]
            case AgentChanged(agent):
                assert agent in known and agent != MAIN
            case TaskChanged(task_id):
                assert task_id in s.tasks
            case HookChanged(hook_id):
                assert hook_id in s.hooks
            case SessionChanged():
                pass
            case _:
                assert_never(c)
    assert known == set(s.agents)
    assert count == {a: len(agent.items) for a, agent in s.agents.items()}


def test_sub_agent_is_announced_once() -> None:
    # captures/stream/05_subagent.jsonl: the Agent call's first sub-agent frame adds it
    feed = Feed()
    added = []
    for batch in read_file_lines(FIXTURES / "captures/stream/05_subagent.jsonl"):
        added += [c.agent for c in feed.feed(batch) if isinstance(c, AgentAdded)]
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


_EVERY_RECORDING = sorted(p for p in FIXTURES.rglob("*.jsonl") if "subagents" not in p.parts)


def _agent_facts(agent: Agent) -> tuple:
    return (agent.status, agent.description, agent.subagent_type, agent.agent_file_id,
            agent.tool_calls, agent.last_tool, agent.output_tokens, agent.total_tokens)


def test_every_change_of_a_sub_agent_task_or_hook_comes_with_its_record() -> None:
    """After every frame of every recording (sub-agent files merged in, as a
    replay has them): a sub-agent whose facts changed has an ``AgentAdded``
    or ``AgentChanged`` record, a task a ``TaskChanged``, a hook run a
    ``HookChanged`` — what a panel that redraws from the records relies on."""
    frames = 0
    for path in _EVERY_RECORDING:
        replay = load_recording(path).replay()
        session = replay._new_session()
        before: tuple[dict, dict, dict] = ({}, {}, {})
        for index in range(len(replay)):
            changes = replay._apply(session, index)
            frames += 1
            now = ({a: _agent_facts(agent) for a, agent in session.agents.items() if a != MAIN},
                   {t: astuple(task) for t, task in session.tasks.items()},
                   {h: astuple(replace(hook, item=None)) for h, hook in session.hooks.items()})
            said: tuple[set[str], set[str], set[str]] = (set(), set(), set())
            for c in changes:
                match c:
                    case AgentAdded(agent) | AgentChanged(agent):
                        said[0].add(agent)
                    case TaskChanged(task_id):
                        said[1].add(task_id)
                    case HookChanged(hook_id):
                        said[2].add(hook_id)
            for kind, then, facts, told in zip(("agent", "task", "hook"), before, now, said):
                changed = {key for key, value in facts.items() if then.get(key) != value}
                assert changed <= told, (path.name, index + 1, kind, changed - told)
            before = now
    assert frames > 4000


def test_any_batching_folds_to_the_same_state(recording: Path) -> None:
    """What a big session's first screen shows is never taken back: the
    viewer folds the history in slices of whatever size a read gives, and a
    live source a line at a time; every batching makes the same state (the
    same values, the same sharing) as the whole file folded at once."""
    import random

    from conftest import state_graph

    lines = [line for batch in read_file_lines(recording) for line in batch]
    whole = Feed(keep_raw=False)
    whole.feed(lines)
    one = Feed(keep_raw=False)
    for line in lines:
        one.feed([line])
    cuts = Feed(keep_raw=False)
    pick, at = random.Random(recording.name), 0
    while at < len(lines):
        step = pick.randint(1, 40)
        cuts.feed(lines[at:at + step])
        at += step
    expected = state_graph(whole.session)
    assert state_graph(one.session) == expected
    assert state_graph(cuts.session) == expected
