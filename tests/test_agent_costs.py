"""Who spent it: ``summary --json``'s ``agents``, one entry for the main loop
and one per sub-agent, own and subtree figures that add up to the session's
cost, nesting from ``.meta.json`` on disk and ``task_started`` on stdout."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from cctv.reducer.summary import summarize
from cctv.viewer.loader import load_path

from conftest import FIXTURES

CAPTURE = FIXTURES / "captures" / "projects" / "-home-ada-src-demo"
SESSION = "d7acffbd-7cff-4056-82e8-4364dc8df14a"
SUB = "acfff52c46df9b7f9"
REAL = FIXTURES / "public" / "claude-code-log" / "real_projects"

KEYS = {"agent_id", "agent_type", "description", "parent_agent_id", "depth", "cost_usd",
        "cost_source", "input_tokens", "output_tokens", "cache_read_tokens",
        "cache_write_tokens", "tool_calls", "duration_s", "subtree_cost_usd", "unpriced"}


def _check_adds_up(path: Path) -> int:
    """Check the agents of the session at ``path``; returns how many sub-agents it has."""
    session = load_path(path).session
    data = summarize(session)
    agents = data["agents"]
    assert all(set(a) == KEYS for a in agents)
    main, subs = agents[0], agents[1:]
    assert main["agent_id"] == "" and main["parent_agent_id"] is None and main["depth"] == 0
    assert len(subs) == data["subagents"]
    assert sum(a["cost_usd"] or 0 for a in agents) == pytest.approx(data["cost_usd"] or 0, abs=1e-6)
    assert (main["subtree_cost_usd"] or 0) == pytest.approx(data["cost_usd"] or 0, abs=1e-6)
    for a in subs:
        assert a["parent_agent_id"] is not None and a["depth"] >= 1
        children = [c for c in subs if c["parent_agent_id"] == a["agent_id"]]
        assert (a["subtree_cost_usd"] or 0) == pytest.approx(
            (a["cost_usd"] or 0) + sum(c["subtree_cost_usd"] or 0 for c in children))
        if a["input_tokens"] + a["output_tokens"]:
            assert a["cost_source"] == "estimated" and a["cost_usd"] > 0
    # the tokens are each agent's own requests: together, every request once
    assert sum(a["output_tokens"] for a in agents) == sum(r.tokens.output for r in session.requests.values())
    return len(subs)


@pytest.mark.parametrize("path", [
    FIXTURES / "forge" / "2.1.220" / "subagent.jsonl",
    FIXTURES / "captures" / "stream" / "05_subagent.jsonl",
    CAPTURE / f"{SESSION}.jsonl",
], ids=lambda p: p.name[:24])
def test_the_agents_costs_add_up_to_the_sessions(path: Path) -> None:
    assert _check_adds_up(path) == 1


def test_the_agents_costs_of_every_public_session_add_up() -> None:
    with_subagents = [p for p in sorted(REAL.glob("*/*.jsonl"))
                      if not p.name.startswith("agent-") and _check_adds_up(p)]
    assert len(with_subagents) >= 5


def test_a_recorded_total_is_the_main_loops_less_its_sub_agents() -> None:
    data = summarize(load_path(CAPTURE / f"{SESSION}.jsonl").session)
    assert data["cost_source"] == "recorded" and data["cost_usd"] == pytest.approx(0.0287)
    main, sub = data["agents"]
    assert sub["agent_type"] == "general-purpose" and sub["description"] == "Survey the demo project"
    assert sub["cost_source"] == "estimated" and sub["tool_calls"] == 2
    assert main["cost_source"] == "mixed"
    assert main["cost_usd"] == pytest.approx(0.0287 - sub["cost_usd"])


def _nested_copy(tmp_path: Path, child_name: str) -> tuple[Path, str]:
    """The captured session with a second sub-agent, started by the first
    (its file a copy of the first's with ids of its own; its ``.meta.json``
    naming the first as its parent, at spawn depth 2). Its cost-state row
    is left out: the CLI's total would not know the invented agent."""
    project = tmp_path / "proj"
    shutil.copytree(CAPTURE, project)
    main = project / f"{SESSION}.jsonl"
    main.write_text("".join(l for l in main.read_text(encoding="utf-8").splitlines(keepends=True)
                            if '"type":"cost-state"' not in l), encoding="utf-8")
    subagents = project / SESSION / "subagents"
    text = (subagents / f"agent-{SUB}.jsonl").read_text(encoding="utf-8")
    text = text.replace(SUB, child_name)
    text = re.sub(r'"(msg_|req_)([^"]*)"', lambda m: f'"{m.group(1)}nested{m.group(2)}"', text)
    (subagents / f"agent-{child_name}.jsonl").write_text(text, encoding="utf-8")
    meta = json.loads((subagents / f"agent-{SUB}.meta.json").read_text(encoding="utf-8"))
    meta.update(toolUseId="toolu_nested_child", parentAgentId=SUB, spawnDepth=2,
                description="A helper of the survey")
    (subagents / f"agent-{child_name}.meta.json").write_text(json.dumps(meta), encoding="utf-8")
    return project / f"{SESSION}.jsonl", "toolu_nested_child"


@pytest.mark.parametrize("child_name", ["nestedchild01", "a0nestedchild"],
                         ids=["read after its parent", "read before its parent"])
def test_nesting_comes_from_the_meta_json(tmp_path: Path, child_name: str) -> None:
    path, child_id = _nested_copy(tmp_path, child_name)
    data = summarize(load_path(path).session)
    by_id = {a["agent_id"]: a for a in data["agents"]}
    child = by_id[child_id]
    parent = next(a for a in data["agents"] if a["description"] == "Survey the demo project")
    assert child["parent_agent_id"] == parent["agent_id"] and child["depth"] == 2
    assert child["cost_usd"] > 0
    assert parent["subtree_cost_usd"] == pytest.approx(parent["cost_usd"] + child["cost_usd"])
    assert sum(a["cost_usd"] for a in data["agents"]) == pytest.approx(data["cost_usd"])


def test_nesting_comes_from_task_started_on_stdout(tmp_path: Path) -> None:
    """05_subagent's stdout with a second sub-agent started inside the first:
    its Agent call made by the first (``parent_tool_use_id``) and its
    ``task_started`` naming the first's task and depth 2."""
    src = FIXTURES / "captures" / "stream" / "05_subagent.jsonl"
    lines = src.read_text(encoding="utf-8").splitlines()
    frames = [json.loads(l) for l in lines]
    started = next(f for f in frames if f.get("subtype") == "task_started")
    parent_call = started["tool_use_id"]
    call_frame = next(f for f in frames if f.get("type") == "assistant"
                      and f["message"]["content"] and f["message"]["content"][0].get("id") == parent_call)
    inner = json.loads(json.dumps(call_frame))
    inner["parent_tool_use_id"] = parent_call
    inner["message"]["id"] = "msg_inner_call"
    inner["message"]["content"][0]["id"] = "toolu_inner"
    inner_task = {**started, "task_id": "inner-task", "tool_use_id": "toolu_inner",
                  "parent_task_id": started["task_id"], "spawn_depth": 2, "uuid": "inner-uuid"}
    at = frames.index(started) + 1
    out = lines[:at] + [json.dumps(inner), json.dumps(inner_task)] + lines[at:]
    path = tmp_path / "nested.jsonl"
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    session = load_path(path).session
    assert session.agents["toolu_inner"].parent == parent_call
    assert session.agents["toolu_inner"].depth == 2
    data = summarize(session)
    inner_fig = next(a for a in data["agents"] if a["agent_id"] == "toolu_inner")
    assert inner_fig["parent_agent_id"] == parent_call


def test_an_agent_card_shows_its_own_and_its_subtree_cost(tmp_path: Path) -> None:
    from cctv.reducer.state import ToolItem

    from test_cards_frames import drawn

    path, child_id = _nested_copy(tmp_path, "nestedchild01")
    session = load_path(path).session
    data = {a["agent_id"]: a for a in summarize(session)["agents"]}
    card = next(i for i in session.main.items if isinstance(i, ToolItem) and i.call.name == "Agent")
    parent = data[card.call.id]
    text = "\n".join(drawn(card, session))
    own, tree = f"~${parent['cost_usd']:.4f}", f"~${parent['subtree_cost_usd']:.4f}"
    assert f"· {own} (with its agents {tree})" in text
    assert parent["subtree_cost_usd"] > parent["cost_usd"] > 0


def test_the_tasks_panel_shows_a_sub_agents_own_and_subtree_cost(tmp_path: Path) -> None:
    from cctv.widgets.task_rows import task_rows

    path, child_id = _nested_copy(tmp_path, "nestedchild01")
    session = load_path(path).session
    data = {a["agent_id"]: a for a in summarize(session)["agents"]}
    rows = {r.agent_id: r for r in task_rows(session)}
    parent = next(a for a in data.values() if a["description"] == "Survey the demo project")
    assert rows[parent["agent_id"]].cost == (
        f"~${parent['cost_usd']:.4f} (all ~${parent['subtree_cost_usd']:.4f})")
    assert rows[child_id].cost == f"~${data[child_id]['cost_usd']:.4f}"


def test_parents_that_name_each_other_hang_under_the_main_loop(tmp_path: Path) -> None:
    """A crafted .meta.json pair, each naming the other as its parent: no
    loop, no crash; both under the main loop, their costs counted once."""
    path, first = _nested_copy(tmp_path, "loopa01")
    subagents = path.parent / SESSION / "subagents"
    text = (subagents / "agent-loopa01.jsonl").read_text(encoding="utf-8")
    (subagents / "agent-loopb01.jsonl").write_text(
        text.replace("loopa01", "loopb01").replace("msg_nested", "msg_loopb"), encoding="utf-8")
    meta = json.loads((subagents / "agent-loopa01.meta.json").read_text(encoding="utf-8"))
    (subagents / "agent-loopa01.meta.json").write_text(
        json.dumps({**meta, "parentAgentId": "loopb01"}), encoding="utf-8")
    (subagents / "agent-loopb01.meta.json").write_text(
        json.dumps({**meta, "toolUseId": "toolu_loop_b", "parentAgentId": "loopa01"}), encoding="utf-8")
    data = summarize(load_path(path).session)
    by_id = {a["agent_id"]: a for a in data["agents"]}
    pair = [by_id[first], by_id["toolu_loop_b"]]
    assert {a["parent_agent_id"] for a in pair} == {""}
    assert sum(a["cost_usd"] for a in data["agents"]) == pytest.approx(data["cost_usd"])
    assert data["agents"][0]["subtree_cost_usd"] == pytest.approx(data["cost_usd"])
