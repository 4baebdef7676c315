"""Routing: every entry goes to the agent and file it came from, decided once.

The three bugs of issue 7 §1, each on a real session: the on-disk project
``real_projects/-experiments-worktrees/ef958aa1…`` (CLI 2.1.x, six sub-agent
files) copied into a temporary folder with one real row added to a sub-agent
file, and a stream-json capture folded as a sub-agent's.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import msgspec

from cctv.reducer import frames as F
from cctv.reducer.decode import decode_line
from cctv.reducer.fold import HANDLERS
from cctv.reducer.fold import Session
from cctv.reducer.state import HookItem, ProblemItem
from cctv.viewer.loader import load_path

from conftest import FIXTURES

PROJECT = FIXTURES / "public/claude-code-log/real_projects/-experiments-worktrees"
SESSION = "ef958aa1-0e93-49f0-bb71-150f63befcd1"
AGENT_FILE = "agent-a36efb2a1231c41e2"


def _copy_session(tmp_path: Path) -> tuple[Path, Path]:
    dest = tmp_path / PROJECT.name
    dest.mkdir()
    shutil.copy(PROJECT / f"{SESSION}.jsonl", dest)
    shutil.copytree(PROJECT / SESSION, dest / SESSION)
    return dest / f"{SESSION}.jsonl", dest / SESSION / "subagents" / f"{AGENT_FILE}.jsonl"


def _insert(path: Path, line_no: int, line: bytes) -> None:
    lines = path.read_bytes().splitlines(keepends=True)
    lines.insert(line_no - 1, line.rstrip(b"\n") + b"\n")
    path.write_bytes(b"".join(lines))


def _sub_agent_hook_row(main: Path) -> bytes:
    """Main line 8, a real hook_success attachment, as the sub-agent's file writes it."""
    row = json.loads(main.read_bytes().splitlines()[7])
    assert row["attachment"]["type"] == "hook_success"
    row["isSidechain"] = True
    row["agentId"] = AGENT_FILE.removeprefix("agent-")
    return json.dumps(row).encode()


def test_every_decodable_class_has_a_handler() -> None:
    decodable = {*F.TOP_LEVEL, *F.SYSTEM_SUBTYPES.values(), F.SystemOther, F.Unknown,
                 F.Malformed, F.Blank}
    assert decodable <= set(HANDLERS)


def test_hook_in_a_sub_agent_file_is_its_own_run_in_that_agent(tmp_path: Path) -> None:
    main, agent_file = _copy_session(tmp_path)
    before = load_path(main).session
    main_hooks = len(before.hooks)
    # line 2 of the main file is a hook attachment too: the synthetic ids collided
    assert before.hooks["line-2"].name == "SessionStart:startup"
    _insert(agent_file, 2, _sub_agent_hook_row(main))
    feed = load_path(main)
    s = feed.session
    assert len(s.hooks) == main_hooks + 1
    owner = next(a for a in s.agents.values() if a.agent_file_id == AGENT_FILE.removeprefix("agent-"))
    hooks = [i for i in owner.items if isinstance(i, HookItem)]
    assert [(h.line_no, h.hook.name, h.source) for h in hooks] == [(2, "UserPromptSubmit", owner.id)]
    assert s.hooks["line-2"].name == "SessionStart:startup"  # the main file's run is intact
    # no phantom agent made of the sidechain row's agentId
    assert not [a for a in s.agents if a.startswith("agent-")]


def test_malformed_line_in_a_sub_agent_file_shows_there_and_opens_that_line(tmp_path: Path) -> None:
    main, agent_file = _copy_session(tmp_path)
    _insert(agent_file, 5, b'{"type":"user","message": {"content": "cut off')
    feed = load_path(main)
    s = feed.session
    assert not [i for i in s.main.items if isinstance(i, ProblemItem)]
    owner = next(a for a in s.agents.values() if a.agent_file_id == AGENT_FILE.removeprefix("agent-"))
    problems = [i for i in owner.items if isinstance(i, ProblemItem)]
    assert [(p.line_no, p.source) for p in problems] == [(5, owner.id)]
    entry = feed.entry_at(problems[0].line_no, problems[0].source or None)
    assert isinstance(entry, F.Malformed) and entry.raw.endswith(b'"cut off')
    # and main-file items still open the main file's line
    prompt = next(i for i in s.main.items if i.kind == "prompt")
    assert feed.entry_at(prompt.line_no, prompt.source or None) is feed.entries[prompt.line_no - 1]


def test_stream_events_and_retries_of_a_sub_agent_stay_in_it() -> None:
    # captures/stream/04b_thinking_partial.jsonl: line 4 opens a thinking block, line 14 a
    # text block; folded as a sub-agent's rows (agent= given) they draw in that sub-agent
    s = Session()
    lines = (FIXTURES / "captures/stream/04b_thinking_partial.jsonl").read_bytes().splitlines()
    for n, line in enumerate(lines, 1):
        s.apply(decode_line(line, n), agent="toolu_sub")
    sub = s.agents["toolu_sub"]
    assert {i.kind for i in sub.items} >= {"thinking", "text"}
    assert not [i for i in s.main.items if i.kind in ("thinking", "text")]
    retry = {"type": "tool_progress", "tool_use_id": "toolu_x", "tool_name": "Agent",
             "parent_tool_use_id": None, "elapsed_time_seconds": 1,
             "subagent_retry": {"agent_id": "a1", "attempt": 1, "max_retries": 3}}
    s.apply(decode_line(msgspec.json.encode(retry), 99), agent="toolu_sub")
    assert sub.items[-1].kind == "notice" and sub.items[-1].category == "api retry"
    assert all(i.source == "toolu_sub" for i in sub.items)
    assert not [i for i in s.main.items if i.kind in ("thinking", "text", "notice")]
