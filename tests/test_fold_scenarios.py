"""The fold, scenario by scenario, on the real recordings.

Every expected value below was read off the recording itself; the comment on
each test says which lines and ids it comes from. Paths are relative to the
reference directory (see conftest.py). A few synthetic cases cover rules no
recording exercises (usage dedup, ``supersedes``, ``conversation_reset``, tool
heartbeats), built from the frame shapes in WIRE.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest

from cctv.reducer.decode import decode_line
from cctv.reducer.fold import Session
from cctv.reducer.state import MAIN, ProblemItem
from cctv.reducer.summary import summarize

from conftest import fold_file, fold_until

FORGE = "forge/2.1.220/"
STREAM = "captures/stream/"
PROJECT = "captures/projects/-home-ada-src-demo/"


def kinds(session: Session, agent: str = MAIN) -> list[tuple[str, int]]:
    """(item kind, line) for the visible items of one agent."""
    return [(i.kind, i.line_no) for i in session.agents[agent].items if not i.hidden]


def fold_frames(frames: list[dict[str, Any]], session: Session | None = None,
                start: int = 1) -> Session:
    """Fold synthetic frames (dicts) as lines ``start, start+1, …``."""
    session = session or Session()
    for n, frame in enumerate(frames, start):
        out = session.apply(decode_line(msgspec.json.encode(frame), n, 0))
        assert isinstance(out, list)
    return session


@pytest.fixture(autouse=True)
def _needs_reference(reference: Path) -> None:
    """Every test here reads the reference recordings (skipped when absent)."""


# --- background Bash ---------------------------------------------------------------------


def test_background_bash_alive_at_result() -> None:
    # forge/2.1.220/backgrounded_bash_alive_at_result.jsonl
    #  11 assistant tool_use toolu_01TXW5MpeNnJcjRjbucn9FjE Bash run_in_background:true ("sleep 30 …")
    #  13 background_tasks_changed [bmlwzzcoi local_bash]   (the roster names it before task_started)
    #  14 task_started bmlwzzcoi, tool_use_id toolu_01TX…   (no is_backgrounded field at 2.1.220)
    #  15 user tool_result "Command running in background with ID: bmlwzzcoi", backgroundTaskId
    #  16 assistant text "backgrounded"
    #  17 result success, terminal_reason completed        <- the task is still running here
    #  18 background_tasks_changed []   19 task_updated patch.status killed, end_time 1784955426570
    #  20 task_notification status stopped, output_file …/tasks/bmlwzzcoi.output
    path = FORGE + "backgrounded_bash_alive_at_result.jsonl"
    call_id, task_id = "toolu_01TXW5MpeNnJcjRjbucn9FjE", "bmlwzzcoi"

    s = fold_until(path, 17)
    task = s.tasks[task_id]
    call = s.calls[call_id]
    assert (task.task_type, task.tool_use_id, task.backgrounded) == ("local_bash", call_id, True)
    assert task.status == "running" and task.running and task.in_roster
    assert s.running_tasks == [task]
    # a clean tool_result means "started", not "finished": one identity across the switch
    assert (call.status, call.background, call.task_id, call.result_line_no) == \
        ("running", True, task_id, 15)
    assert not call.finished
    turn = s.turns[0]
    assert turn.closed and turn.end_line == 17 and not turn.is_error
    # the turn is over, the task is not: the session is running in the background (it said
    # "idle", which was the bug issue 7 names)
    assert s.status == "idle" and s.activity.text == "running in background"
    assert summarize(s)["tasks"] == [{
        "task_id": task_id, "task_type": "local_bash", "description": "Sleep 30 seconds then echo",
        "status": "running", "state": None, "backgrounded": True, "tool_use_id": call_id,
        "agent_id": None, "kind": "shell", "duration_s": None}]

    s = fold_until(path, 18)  # the roster empties first; the task itself is not over yet
    assert s.roster == [] and not s.tasks[task_id].in_roster
    assert s.tasks[task_id].status == "running" and s.calls[call_id].status == "running"

    s = fold_until(path, 19)  # task_updated killed is terminal on its own
    assert (s.tasks[task_id].status, s.tasks[task_id].state) == ("interrupted", "killed")
    assert not s.tasks[task_id].running
    assert s.tasks[task_id].end_time == 1784955426570
    assert s.calls[call_id].status == "interrupted"

    s = fold_file(path).session
    task = s.tasks[task_id]
    assert task.state == "stopped"  # task_notification reports the kill as "stopped"
    assert task.output_file.endswith("/tasks/bmlwzzcoi.output")
    assert task.summary == "Sleep 30 seconds then echo"
    assert s.calls[call_id].status == "interrupted" and s.running_tasks == []
    assert len(s.turns) == 1  # frames after the result open no new turn


def test_backgrounded_bash_lifecycle() -> None:
    # forge/2.1.220/backgrounded_bash_lifecycle.jsonl
    #  12 tool_use toolu_016h5igzEHn7DBrweB9nmVjq Bash run_in_background   14 roster [bw5qhzqlt]
    #  15 task_started bw5qhzqlt   16 tool_result, backgroundTaskId bw5qhzqlt   17 roster []
    #  18 task_updated completed (end_time 1784955684851)   19 task_notification completed
    #  20-21 thinking_tokens deltas 50 + 77 = 127, then 22 an assistant thinking block with
    #  no text (redacted); 23/24 ToolSearch ok; 25/26 TaskOutput fails ("No task found");
    #  27/28 Read of the task's output file; 29 text; 30 result.
    path = FORGE + "backgrounded_bash_lifecycle.jsonl"
    bash, task_id = "toolu_016h5igzEHn7DBrweB9nmVjq", "bw5qhzqlt"

    s = fold_until(path, 16)
    assert s.calls[bash].status == "running" and s.calls[bash].background
    assert s.tasks[task_id].in_roster and s.roster == [task_id]
    s = fold_until(path, 17)
    assert s.roster == [] and s.tasks[task_id].status == "running"
    s = fold_until(path, 18)
    assert s.tasks[task_id].status == "done"
    assert s.calls[bash].status == "done"  # the task's end ends the call

    s = fold_file(path).session
    task = s.tasks[task_id]
    assert task.summary == 'Background command "Run sleep and echo in background" completed (exit code 0)'
    assert task.output_file.endswith("/tasks/bw5qhzqlt.output")
    assert s.calls["toolu_01HtucUvq4NVBtU33JxYPDRJ"].status == "failed"  # TaskOutput
    assert s.calls["toolu_014mjQqLdSAJP74goRZ9sfkD"].status == "done"  # Read
    assert s.turns[0].failed_calls == 1 and s.turns[0].tool_calls == 4
    thinking = [i for i in s.main.items if i.kind == "thinking"]
    assert len(thinking) == 1 and thinking[0].line_no == 22
    assert thinking[0].redacted and thinking[0].tokens == 127
    assert s.thinking_tokens == 127 and s.turns[0].thinking_tokens == 127
    tc = summarize(s)["tool_calls"]
    assert tc["total"] == 4 and tc["failed"] == 1 and tc["unpaired"] == 0
    assert tc["by_name"] == {"Bash": 1, "Read": 1, "TaskOutput": 1, "ToolSearch": 1}


def test_capture_background_bash_then_foreground_bash() -> None:
    # captures/stream/06_background_bash.jsonl (CLI 2.1.328)
    #   2 tool_use toolu_01G6thRvt0rXtpg0Dj7BVl43 Bash run_in_background   3 roster [b0q8m16pb]
    #   4 task_started b0q8m16pb is_backgrounded:true   5 tool_result backgroundTaskId b0q8m16pb
    #   7 tool_use toolu_01X8w3Zd2Kg1UQdO5P8LJ4N1 Bash "sleep 5; python3 app.py" (foreground)
    #   8 task_updated b0q8m16pb completed   9 its task_notification   10 roster []
    #  11 task_started bx04gjnra for toolu_01X8…, is_backgrounded:false
    #  12 task_notification bx04gjnra completed, output_file ""   13 tool_result "Hello, world!"
    bg, fg = "toolu_01G6thRvt0rXtpg0Dj7BVl43", "toolu_01X8w3Zd2Kg1UQdO5P8LJ4N1"
    path = STREAM + "06_background_bash.jsonl"

    s = fold_until(path, 5)
    assert s.calls[bg].status == "running" and s.calls[bg].background
    assert s.tasks["b0q8m16pb"].backgrounded
    s = fold_until(path, 7)
    assert s.calls[fg].status == "pending" and s.activity.text == "running Bash"
    s = fold_until(path, 9)  # the background job ends while the foreground call waits
    assert s.calls[bg].status == "done" and s.tasks["b0q8m16pb"].status == "done"
    assert s.calls[fg].status == "pending"
    s = fold_until(path, 11)
    assert s.calls[fg].status == "running" and s.calls[fg].task_id == "bx04gjnra"
    assert not s.calls[fg].background and not s.tasks["bx04gjnra"].backgrounded
    s = fold_until(path, 12)  # a foreground call waits for its own tool_result
    assert s.tasks["bx04gjnra"].status == "done" and s.calls[fg].status == "running"

    s = fold_file(path).session
    assert s.calls[fg].status == "done" and s.calls[fg].result == "Hello, world!"
    assert s.tasks["bx04gjnra"].output_file is None  # "" means no file
    assert [(t["task_id"], t["status"], t["backgrounded"]) for t in summarize(s)["tasks"]] == \
        [("b0q8m16pb", "done", True), ("bx04gjnra", "done", False)]


# --- sub-agents ----------------------------------------------------------------------------


def test_capture_subagent_frames_land_in_the_subagent() -> None:
    # captures/stream/05_subagent.jsonl
    #   3 tool_use toolu_01POmk2Upx4u34UIjZsjjwy3 Agent "Survey the demo project"
    #   4 task_started acfff52c46df9b7f9 local_agent, general-purpose
    #   5 user (parent_tool_use_id = the Agent call) the sub-agent's prompt "[[sub_survey]] …"
    #   7 tool_use toolu_016kOM0ORcQyZ45yAoLAMxX5 Bash "ls -1" (parent = Agent call), 8 its result
    #  10 tool_use toolu_010OibT95Byr0vHgNKBi3mJ6 Read utils.py (parent = Agent call), 11 its result
    #  12/13 task_updated / task_notification completed   14 the Agent tool_result (agentId
    #  acfff52c46df9b7f9)   15 main text   16 result
    agent_call = "toolu_01POmk2Upx4u34UIjZsjjwy3"
    bash, read = "toolu_016kOM0ORcQyZ45yAoLAMxX5", "toolu_010OibT95Byr0vHgNKBi3mJ6"
    path = STREAM + "05_subagent.jsonl"

    s = fold_until(path, 11)  # the sub-agent is working: its call is running, not pending
    assert s.calls[agent_call].status == "running"
    assert s.agents[agent_call].status == "running"

    s = fold_file(path).session
    assert set(s.agents) == {MAIN, agent_call}
    sub = s.agents[agent_call]
    assert (sub.depth, sub.parent, sub.description, sub.subagent_type) == \
        (1, MAIN, "Survey the demo project", "general-purpose")
    assert sub.agent_file_id == "acfff52c46df9b7f9" and sub.status == "done"
    assert kinds(s, agent_call) == [("prompt", 5), ("tool", 7), ("tool", 10)]
    assert sub.items[0].text.startswith("[[sub_survey]] List the files")
    assert (s.calls[bash].agent, s.calls[bash].status, s.calls[bash].result_line_no) == \
        (agent_call, "done", 8)
    assert (s.calls[read].agent, s.calls[read].status, s.calls[read].result_line_no) == \
        (agent_call, "done", 11)
    assert sub.tool_calls == 2 and s.main.tool_calls == 1
    # nothing of the sub-agent leaks into the main transcript
    assert kinds(s) == [("text", 2), ("tool", 3), ("text", 15), ("turn_footer", 16)]
    call = s.calls[agent_call]
    assert (call.status, call.subagent, call.task_id, call.result_line_no) == \
        ("done", agent_call, "acfff52c46df9b7f9", 14)
    task = s.tasks["acfff52c46df9b7f9"]
    assert (task.task_type, task.subagent_type, task.tool_use_id, task.status) == \
        ("local_agent", "general-purpose", agent_call, "done")
    assert (task.total_tokens, task.tool_uses, task.last_tool) == (1234, 2, "Read")
    assert s.turns[0].tool_calls == 1  # the turn counts the main agent's calls
    assert summarize(s)["subagents"] == 1


def test_forge_subagent() -> None:
    # forge/2.1.220/subagent.jsonl
    #  12 tool_use toolu_01JVh2KNCgxX98dbr8qqW82b Agent "Run echo command"
    #  13 task_started a2dfea0b16b5383ee   14 sub-agent prompt (parent = the Agent call)
    #  17 sub-agent tool_use toolu_01PmCUnZxi79CKKW7W8eAN8w Bash, usage output_tokens 60
    #  18 its result "forge-subagent-ok"   21 Agent tool_result   22 text   23 result
    agent_call, bash = "toolu_01JVh2KNCgxX98dbr8qqW82b", "toolu_01PmCUnZxi79CKKW7W8eAN8w"
    s = fold_file(FORGE + "subagent.jsonl").session
    sub = s.agents[agent_call]
    assert kinds(s, agent_call) == [("prompt", 14), ("tool", 17)]
    assert s.calls[bash].agent == agent_call and s.calls[bash].result == "forge-subagent-ok"
    assert sub.output_tokens == 60 and sub.description == "Run echo command"
    assert s.calls[agent_call].status == "done" and s.calls[agent_call].result_line_no == 21
    assert s.tasks["a2dfea0b16b5383ee"].status == "done"
    # main-loop usage is the result's, sub-agent tokens are not added to it
    assert summarize(s)["usage"] == {"input_tokens": 4, "output_tokens": 199,
                                     "cache_creation_input_tokens": 63083,
                                     "cache_read_input_tokens": 93286}


def test_on_disk_subagent_file_is_folded_in() -> None:
    # captures/projects/…/d7acffbd-….jsonl is the on-disk twin of 05_subagent; the
    # sub-agent's rows live in d7acffbd-…/subagents/agent-acfff52c46df9b7f9.jsonl, whose
    # .meta.json names toolUseId toolu_01POmk2Upx4u34UIjZsjjwy3. In that file: 1 the prompt,
    # 14 text "Listing the files first.", 15 Bash toolu_016k… (result 16), 21 Read
    # toolu_010O… (result 22), 24 the final text. The trunk: 3 prompt, 19 text,
    # 20 Agent tool_use, 25 its result, 28 text.
    agent_call = "toolu_01POmk2Upx4u34UIjZsjjwy3"
    feed = fold_file(PROJECT + "d7acffbd-7cff-4056-82e8-4364dc8df14a.jsonl")
    s = feed.session
    assert s.format == "transcript"
    sub = s.agents[agent_call]
    assert sub.agent_file_id == "acfff52c46df9b7f9"
    assert (sub.subagent_type, sub.description) == ("general-purpose", "Survey the demo project")
    assert kinds(s, agent_call) == [("prompt", 1), ("text", 14), ("tool", 15), ("tool", 21),
                                    ("text", 24)]
    calls = {c.name: c for c in s.calls.values() if c.agent == agent_call}
    assert set(calls) == {"Bash", "Read"}
    assert (calls["Bash"].id, calls["Bash"].result_line_no, calls["Bash"].status) == \
        ("toolu_016kOM0ORcQyZ45yAoLAMxX5", 16, "done")
    assert (calls["Read"].id, calls["Read"].result_line_no) == ("toolu_010OibT95Byr0vHgNKBi3mJ6", 22)
    assert calls["Bash"].result == "README.md\napp.py\nnotes.txt\nutils.py"
    assert kinds(s) == [("prompt", 3), ("text", 19), ("tool", 20), ("text", 28)]
    assert s.calls[agent_call].status == "done" and s.calls[agent_call].result_line_no == 25
    assert len(feed.agent_entries[agent_call]) == 24
    assert s.title == "Use a sub-agent to survey the project. [[subagent]]"
    # without the sub-agent file only the trunk is there
    from cctv.viewer.loader import load_path
    from conftest import ref_path

    bare = load_path(ref_path(PROJECT + "d7acffbd-7cff-4056-82e8-4364dc8df14a.jsonl"),
                     subagents=False).session
    assert bare.agents.get(agent_call) is None or not bare.agents[agent_call].items


CAPTURE_SESSIONS = {
    "01_simple_text": "8e4b2dbb-330b-4d03-a3ef-8b4c8ce07f1e",
    "03_tools": "f70c6abd-bc92-44a7-80e8-76abec8cb9d7",
    "04_thinking": "ea7beb5b-577d-4669-a8a0-870ccd7b4b6b",
    "04b_thinking_partial": "72cecd4e-3a62-46e5-a590-7b4a33dfd39f",
    "05_subagent": "d7acffbd-7cff-4056-82e8-4364dc8df14a",
    "06_background_bash": "e321c1d0-19a4-4a0d-819a-a0cf937b8a13",
    "07_hooks": "142bb34b-89e4-4e11-b4ed-b3397e45f6d4",
    "10_compact_manual": "aafe1787-82bf-4f68-ae98-84dbe071fd7f",
    "11_multi_turn": "e7740f97-15e3-4079-9733-908bbce7bee3",
}


@pytest.mark.parametrize("scenario", sorted(CAPTURE_SESSIONS))
def test_on_disk_twin_agrees_with_the_stream(scenario: str) -> None:
    # captures/README.md: each stream/<scenario>.jsonl has its on-disk transcript under
    # projects/ (session ids in its table). The transcript has no result frames: its usage
    # comes from the main agent's assistant rows counted once per (message.id, requestId),
    # its cost from cost-state. Both must match what the stream's results say.
    sid = CAPTURE_SESSIONS[scenario]
    wire_s = fold_file(f"{STREAM}{scenario}.jsonl").session
    disk_s = fold_file(f"{PROJECT}{sid}.jsonl").session
    # every call ends the same way in both (paired by tool_use id)
    assert {c.id: c.status for c in disk_s.calls.values()} == \
        {c.id: c.status for c in wire_s.calls.values()}
    wire, disk = summarize(wire_s), summarize(disk_s)
    assert (wire["format"], disk["format"]) == ("stream-json", "transcript")
    assert wire["session_id"] == disk["session_id"] == sid
    assert disk["usage"] == wire["usage"]
    assert disk["cost_usd"] == wire["cost_usd"]
    assert disk["tool_calls"]["by_name"] == wire["tool_calls"]["by_name"]
    assert disk["tool_calls"]["failed"] == wire["tool_calls"]["failed"]
    assert disk["subagents"] == wire["subagents"]
    assert disk["compactions"] == wire["compactions"]
    assert disk["malformed"] == wire["malformed"] == []


def test_on_disk_background_task_ends_with_its_queued_notification() -> None:
    # captures/projects/…/e321c1d0-….jsonl (twin of 06_background_bash). On disk there are no
    # task_* rows: line 19 is the Bash tool_use toolu_01G6thRvt0rXtpg0Dj7BVl43, line 20 its
    # tool_result with toolUseResult.backgroundTaskId b0q8m16pb, and the task's end is only
    # line 30, an attachment queued_command whose prompt is
    # "<task-notification><task-id>b0q8m16pb</task-id><tool-use-id>toolu_01G6…</tool-use-id>
    #  <output-file>…/tasks/b0q8m16pb.output</output-file><status>completed</status>
    #  <summary>Background command "Run a short job in the background" completed (exit code 0)
    #  </summary>".
    path = PROJECT + "e321c1d0-19a4-4a0d-819a-a0cf937b8a13.jsonl"
    bg = "toolu_01G6thRvt0rXtpg0Dj7BVl43"
    s = fold_until(path, 29)
    assert s.calls[bg].status == "running" and s.calls[bg].background
    s = fold_until(path, 30)
    task = s.tasks["b0q8m16pb"]
    assert (task.status, task.tool_use_id, task.backgrounded) == ("done", bg, True)
    assert task.summary == 'Background command "Run a short job in the background" completed (exit code 0)'
    assert task.output_file.endswith("/tasks/b0q8m16pb.output")
    assert s.calls[bg].status == "done" and s.calls[bg].task_id == "b0q8m16pb"


# --- compaction ----------------------------------------------------------------------------


def test_capture_manual_compaction() -> None:
    # captures/stream/10_compact_manual.jsonl
    #   7 result of the first prompt   11 status "compacting"   12 status null, compact_result success
    #  13 init (re-emitted)   14 compact_boundary {trigger manual, pre_tokens 1225,
    #  post_tokens 2787, duration_ms 67}   15 user isSynthetic "This session is being continued
    #  from a previous conversation…" (the summary)   16 replay "<local-command-stdout>Compacted"
    #  17 result local_command "compact", num_turns 0   22 text   23 result
    path = STREAM + "10_compact_manual.jsonl"
    s = fold_until(path, 11)
    assert s.status == "compacting" and s.activity.text == "compacting"
    s = fold_until(path, 12)
    assert s.status == "idle"
    s = fold_until(path, 14)
    (c,) = s.compactions
    assert (c.trigger, c.pre_tokens, c.post_tokens, c.duration_ms, c.failed) == \
        ("manual", 1225, 2787, 67, False)
    assert c.summary is None and c.line_no == 14
    assert s.context_tokens == 2787

    s = fold_file(path).session
    (c,) = s.compactions
    assert c.summary.startswith("This session is being continued from a previous conversation")
    assert "Primary Request and Intent" in c.summary
    # the summary is attached, not shown as a prompt or a notice of its own
    assert not [i for i in s.main.items if i.kind in ("prompt", "notice") and i.line_no == 15]
    assert len(s.turns) == 3 and s.turns[1].local_command == "compact"
    assert summarize(s)["compactions"] == [{"trigger": "manual", "pre_tokens": 1225,
                                            "post_tokens": 2787}]


def test_on_disk_compaction_camel_case() -> None:
    # captures/projects/…/aafe1787-….jsonl (twin of 10_compact_manual): line 30 is
    # system/compact_boundary with compactMetadata {trigger manual, preTokens 1225,
    # postTokens 2787, durationMs 67}; the next user row is isCompactSummary (the summary).
    s = fold_file(PROJECT + "aafe1787-82bf-4f68-ae98-84dbe071fd7f.jsonl").session
    (c,) = s.compactions
    assert (c.line_no, c.trigger, c.pre_tokens, c.post_tokens, c.duration_ms) == \
        (30, "manual", 1225, 2787, 67)
    assert c.summary.startswith("This session is being continued")
    prompts = [i.text for i in s.main.items if i.kind == "prompt"]
    assert prompts == ["Read the README and summarize it. [[cmp1]]", "/compact",
                       "What did we do so far? [[cmp2]]"]


def test_forge_failed_compaction() -> None:
    # forge/2.1.220/compact.jsonl: 13 result of "ALPHA"; 14 status compacting; 16 status null
    # with compact_result "failed", compact_error "Not enough messages to compact." (no
    # boundary); 18 a synthetic assistant text; 19 result num_turns 0.
    path = FORGE + "compact.jsonl"
    assert fold_until(path, 14).status == "compacting"
    s = fold_until(path, 16)
    (c,) = s.compactions
    assert c.failed and c.error == "Not enough messages to compact." and c.line_no == 16
    assert s.status == "idle"
    d = summarize(fold_file(path).session)
    assert d["compactions"] == [] and d["failed_compactions"] == ["Not enough messages to compact."]


# --- hooks ----------------------------------------------------------------------------------


def test_capture_hooks_and_hook_heartbeats() -> None:
    # captures/stream/07_hooks.jsonl
    #   1/2 SessionStart:startup ok   3/4 UserPromptSubmit ok   6 tool_use toolu_01UBPda4k0uxWA7GPGuArzj3
    #   7 hook_started PreToolUse:Bash 74c11410-…; 8,9,11,12,14,15 tool_progress
    #   "hook-PreToolUse-toolu_01UBPda4k0uxWA7GPGuArzj3-heartbeat-0…5" (parent = that call);
    #  10,13,16 hook_progress (cumulative stdout "pre-tool tick 1…3")   17 hook_response success
    #  18/19 PostToolUse:Bash ok   20 tool_result   22/23 Stop d4cf0d3a-… exit_code 2, outcome error
    #  24 user isSynthetic "Stop hook feedback…"   25 notification key stop-hook-error (immediate)
    #  27/28 Stop 6876a7cd-… success   29 result
    call_id = "toolu_01UBPda4k0uxWA7GPGuArzj3"
    s = fold_file(STREAM + "07_hooks.jsonl").session
    assert len(s.hooks) == 6
    pre = s.hooks["74c11410-21f6-400b-9826-bf82c950d775"]
    assert (pre.name, pre.event, pre.status, pre.exit_code, pre.progress) == \
        ("PreToolUse:Bash", "PreToolUse", "done", 0, 3)
    assert pre.output == "pre-tool tick 1\npre-tool tick 2\npre-tool tick 3\n"
    stop_bad = s.hooks["d4cf0d3a-0cb1-4e2a-ab16-3939cc427f02"]
    assert (stop_bad.status, stop_bad.exit_code) == ("failed", 2)
    assert stop_bad.stderr == "stop hook: please also mention the README\n"
    assert s.hooks["6876a7cd-e220-41cc-8fc6-3119b53a0f9f"].status == "done"
    # the six hook heartbeats are routed to the Bash call, counted apart from tool heartbeats
    call = s.calls[call_id]
    assert (call.hook_heartbeats, call.heartbeats, s.heartbeats) == (6, 0, 6)
    assert call.status == "done"
    # hooks that ran inside the turn are listed on it, in order
    assert s.turns[0].hooks == ["74c11410-21f6-400b-9826-bf82c950d775",
                                "cc169a4a-8fa8-4a3a-8fdc-96eabe9e1d96",
                                "d4cf0d3a-0cb1-4e2a-ab16-3939cc427f02",
                                "6876a7cd-e220-41cc-8fc6-3119b53a0f9f"]
    # the Stop hook's feedback is the harness speaking: no second turn, no prompt
    assert len(s.turns) == 1 and not [i for i in s.main.items if i.kind == "prompt"]
    note = [i for i in s.main.items if i.kind == "notice" and i.line_no == 25]
    assert note and note[0].level == "warning" and note[0].detail == "stop-hook-error"
    assert summarize(s)["hooks"] == {"runs": 6, "failed": 1, "stop_summaries": 0}

    s = fold_until(STREAM + "07_hooks.jsonl", 9)
    assert s.calls[call_id].hook_heartbeats == 2 and s.hooks[pre.hook_id].status == "running"


def test_on_disk_hooks_and_stop_hook_summaries() -> None:
    # captures/projects/…/142bb34b-….jsonl (twin of 07_hooks): hook attachments at lines 3
    # (SessionStart), 10 (UserPromptSubmit), 24 (PreToolUse:Bash), 26 (PostToolUse:Bash),
    # 34 (Stop, ok); 30 isMeta user "Stop hook feedback"; stop_hook_summary at 31 (hookCount 1,
    # one hookError: the exit-2 run) and at 35 (hookCount 1, durationMs 2, no errors).
    s = fold_file(PROJECT + "142bb34b-89e4-4e11-b4ed-b3397e45f6d4.jsonl").session
    assert sorted(h.line_no for h in s.hooks.values()) == [3, 10, 24, 26, 34]
    assert {h.name for h in s.hooks.values()} == {"SessionStart:startup", "UserPromptSubmit",
                                                 "PreToolUse:Bash", "PostToolUse:Bash", "Stop"}
    pre = next(h for h in s.hooks.values() if h.line_no == 24)
    assert (pre.status, pre.exit_code, pre.stdout) == \
        ("done", 0, "pre-tool tick 1\npre-tool tick 2\npre-tool tick 3\n")
    summaries = [i for i in s.main.items if i.kind == "stop_summary"]
    assert [(i.line_no, i.count, len(i.errors)) for i in summaries] == [(31, 1, 1), (35, 1, 0)]
    assert "please also mention the README" in summaries[0].errors[0]
    assert summaries[1].infos[0]["durationMs"] == 2 and not summaries[1].prevented
    assert s.stop_summaries == 2 and s.turns[0].stop_summaries == 2
    assert summarize(s)["hooks"]["stop_summaries"] == 2


def test_forge_stop_hook_session() -> None:
    # forge/2.1.220/stop_hook.jsonl: four SessionStart:startup hooks (1-4 started, 5-8
    # responses, all exit 0); the Stop hook itself runs through a control_request
    # (line 13, a host callback), so there is no stop_hook_summary on this wire.
    s = fold_file(FORGE + "stop_hook.jsonl").session
    assert len(s.hooks) == 4
    assert all((h.status, h.exit_code, h.event) == ("done", 0, "SessionStart")
               for h in s.hooks.values())
    assert [i.line_no for i in s.main.items if i.kind == "hook"] == [1, 2, 3, 4]
    assert s.stop_summaries == 0 and s.turns[0].closed


# --- permission denial -----------------------------------------------------------------------


def test_permission_denial_counted_once() -> None:
    # forge/2.1.220/permission_deny.jsonl
    #  12 tool_use toolu_01GZ7AAU1w1uFUgw3hTGSoJj Write /tmp/forge-deny-scenario.txt
    #  13 control_request can_use_tool (the host answers "deny" on stdin)
    #  14 tool_result is_error "forge-conformance denies in the scenario harness"
    #  17/18 Bash toolu_01URV8fT11EWd4o9cfaSNMsk fails (exit code 1)
    #  20 result permission_denials [{tool_name Write, tool_use_id toolu_01GZ7…}]
    write, bash = "toolu_01GZ7AAU1w1uFUgw3hTGSoJj", "toolu_01URV8fT11EWd4o9cfaSNMsk"
    path = FORGE + "permission_deny.jsonl"
    # before the result: the error came straight after the CLI asked for permission
    # (line 13), so it already reads as the refusal; the result's list is not in yet
    s = fold_until(path, 19)
    assert s.calls[write].status == "denied" and s.turns[0].failed_calls == 1
    assert s.permission_denials == []

    s = fold_file(path).session
    assert s.calls[write].status == "denied" and s.calls[write].is_error
    assert s.calls[write].result == "forge-conformance denies in the scenario harness"
    assert s.calls[bash].status == "failed"
    assert s.turns[0].failed_calls == 1  # the Write is denied now, not failed
    assert len(s.permission_denials) == 1 and len(s.turns[0].permission_denials) == 1
    assert s.permission_denials[0]["tool_input"] == {"file_path": "/tmp/forge-deny-scenario.txt",
                                                     "content": "HELLO\n"}
    d = summarize(s)
    assert (d["permission_denials"], d["tool_calls"]["denied"], d["tool_calls"]["failed"]) == (1, 1, 1)


def test_permission_denial_seen_twice_is_counted_once() -> None:
    # The same denial announced by system/permission_denied (WIRE.md §3) and then listed in
    # the result's permission_denials: one denial, not two. Lines 1-19 of permission_deny.jsonl,
    # then a permission_denied frame for the Write, then line 20 (the result).
    from conftest import ref_path

    write = "toolu_01GZ7AAU1w1uFUgw3hTGSoJj"
    lines = ref_path(FORGE + "permission_deny.jsonl").read_bytes().splitlines()
    s = Session()
    for n, raw in enumerate(lines[:19], 1):
        s.apply(decode_line(raw, n, 0))
    fold_frames([{"type": "system", "subtype": "permission_denied", "tool_name": "Write",
                  "tool_use_id": write, "message": "denied by policy"}], s, start=20)
    s.apply(decode_line(lines[19], 21, 0))
    s.apply(decode_line(lines[19], 22, 0))  # a repeated result frame adds nothing either
    assert len(s.permission_denials) == 1
    assert s.calls[write].status == "denied"
    # shown once, on the call, with the frame's reason: no separate notice
    assert [i.line_no for i in s.main.items if i.kind == "notice"
            and i.category == "permission denied"] == []


# --- turns, cost and usage ----------------------------------------------------------------------


def test_multi_turn_cost_and_usage() -> None:
    # captures/stream/11_multi_turn.jsonl: two prompts sent as stream-json input (uuids
    # e1abc977-… and 194d83e5-…, each queued → started → completed via command_lifecycle).
    #   turn 1: lines 4-7, result total_cost_usd 0.01078, usage input 2400 / output 59
    #   turn 2: lines 12-15, result total_cost_usd 0.0215 (cumulative), usage 2400 / 56
    s = fold_file(STREAM + "11_multi_turn.jsonl").session
    assert len(s.turns) == 2
    t1, t2 = s.turns
    assert (t1.line_no, t1.end_line, t2.line_no, t2.end_line) == (4, 7, 12, 15)
    assert s.cost_usd == pytest.approx(0.0215)  # the last cumulative total, not a sum
    assert t1.cost_usd == pytest.approx(0.01078)
    assert t2.cost_usd == pytest.approx(0.0215 - 0.01078)
    assert (t1.usage.input_tokens, t1.usage.output_tokens) == (2400, 59)
    assert (t2.usage.input_tokens, t2.usage.output_tokens) == (2400, 56)
    assert summarize(s)["usage"] == {"input_tokens": 4800, "output_tokens": 115,
                                     "cache_creation_input_tokens": 0,
                                     "cache_read_input_tokens": 0}
    assert s.command_states == {"e1abc977-43a1-4461-9256-e8a0c8de80c6": "completed",
                                "194d83e5-7a3e-4d63-be26-ab5ca0f154e1": "completed"}
    assert fold_until(STREAM + "11_multi_turn.jsonl", 10).command_states[
        "194d83e5-7a3e-4d63-be26-ab5ca0f154e1"] == "started"
    assert s.context_window == 1000000
    assert [i.turn for i in s.main.items] == [0, 0, 0, 1, 1, 1]


def test_usage_counted_once_per_message_and_request() -> None:
    # WIRE.md §2: one assistant frame per content block, all repeating the same message.id
    # and usage. Message m1 (request r1) arrives as three frames (text, tool_use, text);
    # m2 (request r2) as one. No result frame, so Session.usage is the assistant usage:
    # m1 once (100/10, cache 5/7) + m2 (200/20) — not m1 three times.
    usage1 = {"input_tokens": 100, "output_tokens": 10, "cache_creation_input_tokens": 5,
              "cache_read_input_tokens": 7}
    usage2 = {"input_tokens": 200, "output_tokens": 20, "cache_creation_input_tokens": 0,
              "cache_read_input_tokens": 0}

    def asst(mid: str, rid: str, block: dict, usage: dict, **kw: Any) -> dict:
        return {"type": "assistant", "session_id": "s", "request_id": rid, **kw,
                "message": {"id": mid, "model": "m", "content": [block], "usage": usage}}

    s = fold_frames([
        asst("m1", "r1", {"type": "text", "text": "a"}, usage1),
        asst("m1", "r1", {"type": "tool_use", "id": "t1", "name": "Read", "input": {}}, usage1),
        asst("m1", "r1", {"type": "text", "text": "b"}, usage1),
        asst("m2", "r2", {"type": "text", "text": "c"}, usage2),
    ])
    assert summarize(s)["usage"] == {"input_tokens": 300, "output_tokens": 30,
                                     "cache_creation_input_tokens": 5,
                                     "cache_read_input_tokens": 7}
    assert s.main.output_tokens == 30
    assert kinds(s) == [("text", 1), ("tool", 2), ("text", 3), ("text", 4)]

    # on disk the request id is spelled requestId; a later frame of the same message with
    # bigger figures replaces the earlier ones instead of adding to them
    disk = fold_frames([
        {"type": "assistant", "uuid": "u1", "parentUuid": None, "sessionId": "s",
         "requestId": "r1", "message": {"id": "m1", "content": [{"type": "text", "text": "a"}],
                                        "usage": usage1}},
        {"type": "assistant", "uuid": "u2", "parentUuid": "u1", "sessionId": "s",
         "requestId": "r1", "message": {"id": "m1", "content": [{"type": "text", "text": "b"}],
                                        "usage": dict(usage1, output_tokens=40)}},
    ])
    assert disk.usage.as_dict() == {"input_tokens": 100, "output_tokens": 40,
                                    "cache_creation_input_tokens": 5, "cache_read_input_tokens": 7}

    # a sub-agent's messages count for the sub-agent, not for the main loop's usage
    sub = fold_frames([
        asst("m1", "r1", {"type": "tool_use", "id": "ag", "name": "Agent",
                          "input": {"description": "d", "prompt": "p"}}, usage1),
        asst("m9", "r9", {"type": "text", "text": "x"}, usage2, parent_tool_use_id="ag"),
    ])
    assert sub.usage.input_tokens == 100 and sub.agents["ag"].output_tokens == 20


def test_supersedes_hides_the_named_messages() -> None:
    # WIRE.md §2: assistant.supersedes lists uuids of earlier messages to remove (a refusal
    # fallback or an unparsable tool call); the replacement is shown instead.
    s = fold_frames([
        {"type": "user", "session_id": "s", "uuid": "p1",
         "message": {"role": "user", "content": "hi"}},
        {"type": "assistant", "session_id": "s", "uuid": "a1",
         "message": {"id": "m1", "content": [{"type": "text", "text": "refused"}]}},
        {"type": "assistant", "session_id": "s", "uuid": "a2",
         "message": {"id": "m1", "content": [{"type": "thinking", "thinking": "", "signature": "x"}]}},
        {"type": "assistant", "session_id": "s", "uuid": "a3", "supersedes": ["a1", "a2"],
         "message": {"id": "m2", "content": [{"type": "text", "text": "here you go"}]}},
    ])
    items = s.main.items
    assert [(i.kind, i.hidden) for i in items] == [("prompt", False), ("text", True),
                                                   ("thinking", True), ("text", False)]
    assert items[3].text == "here you go"
    assert kinds(s) == [("prompt", 1), ("text", 4)]


def test_conversation_reset_carries_cost_over() -> None:
    # WIRE.md §2: after /clear, conversation_reset names a new session id; later frames carry
    # it and the result totals start again from zero. Turn 1 costs 0.5 (cumulative 0.5);
    # after the reset turn 2's result says 0.2 (cumulative for the new conversation), so the
    # session has cost 0.7 in all.
    s = fold_frames([
        {"type": "system", "subtype": "init", "session_id": "s1", "cwd": "/w", "model": "m"},
        {"type": "user", "session_id": "s1", "message": {"role": "user", "content": "one"}},
        {"type": "assistant", "session_id": "s1", "message": {"id": "m1", "content": []}},
        {"type": "result", "subtype": "success", "session_id": "s1", "total_cost_usd": 0.5,
         "usage": {"input_tokens": 10, "output_tokens": 1}},
        {"type": "conversation_reset", "new_conversation_id": "s2", "trigger": "clear",
         "session_id": "s1"},
        {"type": "user", "session_id": "s2", "message": {"role": "user", "content": "two"}},
        {"type": "assistant", "session_id": "s2", "message": {"id": "m2", "content": []}},
        {"type": "result", "subtype": "success", "session_id": "s2", "total_cost_usd": 0.2,
         "usage": {"input_tokens": 20, "output_tokens": 2}},
    ])
    assert s.session_id == "s2" and s.session_ids == ["s1", "s2"]
    assert s.cost_usd == pytest.approx(0.7)
    assert [t.cost_usd for t in s.turns] == [pytest.approx(0.5), pytest.approx(0.2)]
    assert [t.session_id for t in s.turns] == ["s1", "s2"]
    assert s.usage.input_tokens == 30
    assert [i for i in s.main.items if i.kind == "notice" and i.category == "reset"]


# --- thinking -----------------------------------------------------------------------------


def test_thinking_tokens_and_items() -> None:
    # captures/stream/04_thinking.jsonl: thinking_tokens deltas 11, 11, 11 (lines 2-4) before
    # the thinking block at line 5, and again 11, 11, 11 (8-10) before the one at line 11.
    # Nothing echoes the prompt, so the first thinking frame is where the turn starts.
    path = STREAM + "04_thinking.jsonl"
    s = fold_until(path, 3)
    assert s.current_turn is not None and s.current_turn.line_no == 2
    assert s.activity.text == "thinking" and s.live_thinking_tokens == 22
    s = fold_file(path).session
    assert s.thinking_tokens == 66 and s.turns[0].thinking_tokens == 66
    thinking = [i for i in s.main.items if i.kind == "thinking"]
    assert [(i.line_no, i.tokens, i.redacted) for i in thinking] == [(5, 33, False), (11, 33, False)]
    assert thinking[0].text.startswith("The user wants me to consider a docstring")
    assert s.live_thinking_tokens == 0 and s.activity.text == "idle"


def test_redacted_thinking_keeps_its_token_count() -> None:
    # forge/2.1.156-raw/push_notification.jsonl: deltas 50+100+200+100+150 = 600 (lines 10-14)
    # before an empty thinking block (line 15, signature only = redacted); then 50 (line 20)
    # before another empty one (line 21). The turn's total is the sum of all deltas: 650.
    s = fold_file("forge/2.1.156-raw/push_notification.jsonl").session
    thinking = [i for i in s.main.items if i.kind == "thinking"]
    assert [(i.line_no, i.tokens, i.redacted, i.text) for i in thinking] == \
        [(15, 600, True, ""), (21, 50, True, "")]
    assert s.thinking_tokens == 650 and s.turns[0].thinking_tokens == 650


def test_partial_messages_become_one_item_each() -> None:
    # captures/stream/04b_thinking_partial.jsonl (--include-partial-messages):
    #   3 message_start msg_01BpnBunAUyw68Qr0wT3nul6   4 content_block_start index 0 thinking
    #   6, 8, 10 thinking_delta   11 signature_delta   12 the complete assistant thinking frame
    #  14 content_block_start index 1 text   15-17 text_delta   18 the complete text frame
    #   thinking_tokens 12, 12, 12 at 5, 7, 9.
    path = STREAM + "04b_thinking_partial.jsonl"
    thinking_text = ("Short question. utils.py has one function, greet, with a TODO about making "
                     "the greeting configurable. Nothing is broken. I'll answer directly.")
    answer = "Yes - it works. The only open item is the TODO about a configurable greeting."

    s = fold_until(path, 10)
    (item,) = s.main.items
    assert item.kind == "thinking" and item.streaming and item.text == thinking_text
    assert s.activity.text == "thinking"
    s = fold_until(path, 12)
    (item,) = s.main.items
    assert not item.streaming and item.tokens == 36 and item.line_no == 12
    s = fold_until(path, 16)
    assert [i.kind for i in s.main.items] == ["thinking", "text"]
    assert s.main.items[1].streaming and s.main.items[1].text == "Yes - it works. The only o" \
        "pen item is the TODO about"

    s = fold_file(path).session
    items = [i for i in s.main.items if i.kind in ("thinking", "text")]
    assert [(i.kind, i.line_no, i.streaming) for i in items] == \
        [("thinking", 12, False), ("text", 18, False)]
    assert items[0].text == thinking_text and items[0].tokens == 36 and not items[0].redacted
    assert items[1].text == answer
    assert s.thinking_tokens == 36 and s.turns[0].thinking_tokens == 36


# --- heartbeats ------------------------------------------------------------------------------


def test_tool_heartbeats_and_progress_route_to_the_call() -> None:
    # No recording has a tool heartbeat (forge has no tool_progress at all; 07_hooks has only
    # hook heartbeats, tested above), so this is WIRE.md §4 "Foreground Bash longer than
    # 30 s" frame for frame: tool_use toolu_X, task_started local_bash, heartbeat-0 (30 s),
    # heartbeat-1 (60 s), task_notification, tool_result; plus a bash progress frame (id =
    # the real call id) and a sub-agent API retry.
    x = "toolu_X"
    s = fold_frames([
        {"type": "assistant", "session_id": "s", "message": {"id": "m1", "content": [
            {"type": "tool_use", "id": x, "name": "Bash", "input": {"command": "sleep 65"}}]}},
        {"type": "system", "subtype": "task_started", "task_id": "b1", "tool_use_id": x,
         "task_type": "local_bash", "is_backgrounded": False, "description": "sleep"},
        {"type": "tool_progress", "tool_use_id": f"{x}-heartbeat-0", "tool_name": "Bash",
         "parent_tool_use_id": x, "elapsed_time_seconds": 30, "heartbeat": True},
        {"type": "tool_progress", "tool_use_id": f"{x}-heartbeat-1", "tool_name": "Bash",
         "parent_tool_use_id": x, "elapsed_time_seconds": 60, "heartbeat": True},
        {"type": "tool_progress", "tool_use_id": x, "tool_name": "Bash",
         "parent_tool_use_id": None, "elapsed_time_seconds": 62.5, "task_id": "b1"},
        {"type": "tool_progress", "tool_use_id": "toolu_other", "tool_name": "Agent",
         "parent_tool_use_id": None, "elapsed_time_seconds": 1,
         "subagent_retry": {"attempt": 1, "max_retries": 3}},
        {"type": "system", "subtype": "task_notification", "task_id": "b1", "tool_use_id": x,
         "status": "completed", "output_file": "", "summary": "sleep"},
    ])
    call = s.calls[x]
    assert (call.heartbeats, call.hook_heartbeats, call.elapsed) == (2, 0, 62.5)
    assert s.heartbeats == 2
    assert call.status == "running" and s.activity.text == "running Bash"
    retry = [i for i in s.main.items if i.kind == "notice" and i.category == "api retry"]
    assert retry and retry[0].line_no == 6 and retry[0].level == "warning"
    fold_frames([{"type": "user", "session_id": "s", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": x, "content": "done"}]}}], s, start=8)
    assert call.status == "done" and call.result_line_no == 8
    # a heartbeat for a call we never saw is counted but goes nowhere
    fold_frames([{"type": "tool_progress", "tool_use_id": "toolu_Z-heartbeat-0",
                  "tool_name": "Bash", "parent_tool_use_id": "toolu_Z",
                  "elapsed_time_seconds": 30, "heartbeat": True}], s, start=9)
    assert s.heartbeats == 3 and "toolu_Z" not in s.calls


# --- interrupts -----------------------------------------------------------------------------


def test_forge_interrupt() -> None:
    # forge/2.1.220/interrupt.jsonl: the host sends an interrupt control_request while the
    # model streams; 12 user text "[Request interrupted by user]"; 13 result
    # error_during_execution, is_error, terminal_reason aborted_streaming, cost 0.
    s = fold_file(FORGE + "interrupt.jsonl").session
    assert len(s.turns) == 1
    turn = s.turns[0]
    assert (turn.is_error, turn.subtype, turn.terminal_reason, turn.end_line) == \
        (True, "error_during_execution", "aborted_streaming", 13)
    assert len(turn.errors) == 1
    assert s.is_error and summarize(s)["is_error"] is True
    marker = [i for i in s.main.items if i.line_no == 12]
    assert [(i.kind, i.level) for i in marker] == [("notice", "warning")]
    assert not [i for i in s.main.items if i.kind == "prompt"]
    assert s.status == "idle"


def test_interrupted_turn_interrupts_its_open_calls() -> None:
    # A call still waiting for its result when an aborted result arrives (terminal_reason
    # aborted_tools) is interrupted; a backgrounded one keeps running (its task outlives it).
    s = fold_frames([
        {"type": "assistant", "session_id": "s", "message": {"id": "m1", "content": [
            {"type": "tool_use", "id": "fg", "name": "Bash", "input": {"command": "sleep 99"}},
        ]}},
        {"type": "result", "subtype": "error_during_execution", "is_error": True,
         "terminal_reason": "aborted_tools", "session_id": "s"},
    ])
    assert s.calls["fg"].status == "interrupted"
    assert summarize(s)["tool_calls"]["interrupted"] == 1


# --- malformed lines in a real file ----------------------------------------------------------


def test_malformed_lines_in_the_middle_of_a_real_file(tmp_path: Path) -> None:
    # captures/stream/05_subagent.jsonl with garbage inserted after its lines 3 and 9 and a
    # truncated copy of line 1 at the end. In the new file the bad lines are 4, 11 and 12
    # (a non-UTF-8 line right after the second invalid one) and 20 (the cut last line).
    from conftest import ref_path

    src = ref_path(STREAM + "05_subagent.jsonl")
    lines = src.read_bytes().splitlines()
    bad1, bad2, bad3 = b'{"type":"assistant", "mess', b"not json at all", b"\xff\xfe\xfd"
    new = lines[:3] + [bad1] + lines[3:9] + [bad2, bad3] + lines[9:] + [lines[0][:40]]
    dirty = tmp_path / "dirty.jsonl"
    dirty.write_bytes(b"\n".join(new))  # no final newline: the last line is cut short

    clean = fold_file(src).session
    s = fold_file(dirty).session
    assert [n for n, _ in s.malformed] == [4, 11, 12, 20]
    reasons = dict(s.malformed)
    assert "truncated" in reasons[4] and "truncated" in reasons[20]
    assert reasons[11].startswith("invalid JSON") and reasons[12].startswith("not UTF-8")
    problems = [i for i in s.main.items if isinstance(i, ProblemItem)]
    assert [(p.line_no, p.problem) for p in problems] == \
        [(4, "malformed"), (11, "malformed"), (12, "malformed"), (20, "malformed")]
    assert all(p.reason == reasons[p.line_no] for p in problems)

    # everything else folds exactly as in the clean file
    a, b = summarize(clean), summarize(s)
    assert (a["malformed_count"], b["malformed_count"]) == (0, 4)
    for key in ("lines", "malformed", "malformed_count", "kinds"):
        a.pop(key), b.pop(key)
    assert a == b
    for agent_id, agent in clean.agents.items():
        got = [(i.kind, getattr(i, "text", None)) for i in s.agents[agent_id].items
               if not isinstance(i, ProblemItem)]
        assert got == [(i.kind, getattr(i, "text", None)) for i in agent.items]
    assert {c.id: c.status for c in s.calls.values()} == {c.id: c.status for c in clean.calls.values()}
    assert s.kinds["malformed"] == 4


def test_unknown_kinds_are_shown_not_dropped() -> None:
    s = fold_frames([
        {"type": "ambient_hint", "suggestion": "x"},
        {"type": "system", "subtype": "memory_recall", "mode": "select", "memories": [],
         "session_id": "s"},
    ])
    assert s.unknown == [(1, "ambient_hint")]
    (problem, notice) = s.main.items
    assert (problem.kind, problem.line_no, problem.problem) == ("problem", 1, "unknown")
    assert (notice.kind, notice.category, notice.line_no) == ("notice", "system/memory_recall", 2)
    assert s.kinds == {"ambient_hint": 1, "system/memory_recall": 1}


def test_fold_survives_every_bad_frame_kind() -> None:
    # Frames that decode but make no sense for the fold (results with no turn, results for
    # unknown calls, task frames for unknown tasks) never raise and never lose the line.
    s = fold_frames([
        {"type": "user", "session_id": "s", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "never-seen", "content": "x"}]}},
        {"type": "system", "subtype": "task_updated", "task_id": "t?", "patch": {"status": "killed"}},
        {"type": "system", "subtype": "task_notification", "task_id": "t2", "status": ""},
        {"type": "system", "subtype": "hook_response", "hook_id": "h?", "exit_code": 1},
        {"type": "result", "subtype": "success", "session_id": "s"},
        {"type": "result", "subtype": "success", "session_id": "s"},
        {"type": "system", "subtype": "compact_boundary", "session_id": "s"},
        {"type": "stream_event", "event": {"type": "content_block_delta", "index": 5,
                                           "delta": {"type": "text_delta", "text": "x"}}},
    ])
    assert s.lines == 8
    assert s.calls["never-seen"].result == "x"
    assert s.tasks["t?"].status == "interrupted" and s.tasks["t2"].status == "done"
    assert s.hooks["h?"].status == "failed"
    assert len(s.turns) == 2
    assert not [i for i in s.main.items if isinstance(i, ProblemItem)]


def test_a_call_waits_for_permission_until_its_result(reference):
    # forge permission_deny.jsonl: line 12 is the Write tool_use, line 13 the CLI's
    # control_request can_use_tool for it (the host's answer goes to the CLI's stdin,
    # not stdout), line 14 the tool_result saying it was denied.
    path = "forge/2.1.220/permission_deny.jsonl"
    waiting = fold_until(path, 13)
    write = next(c for c in waiting.calls.values() if c.name == "Write")
    assert write.awaiting_permission and write.status == "pending"
    assert waiting.activity.text == "awaiting permission for Write"
    after = fold_until(path, 14)
    write = next(c for c in after.calls.values() if c.name == "Write")
    assert not write.awaiting_permission and write.status == "denied"
