"""Every CLI version read right (issue 7 §2), each rule on the real file that shows it.

Files are under ``public/claude-code-log/real_projects/`` (real ``~/.claude/projects``
folders written by CLI 1.0.24 to 2.1.x) unless the path says otherwise; the
comment on each test names the lines the expectation was read from.
"""

from __future__ import annotations

import msgspec

from cctv.reducer import frames as F
from cctv.reducer.decode import decode_line
from cctv.reducer.state import MAIN, NoticeItem, ProblemItem
from cctv.reducer.summary import format_summary, summarize

from conftest import FIXTURES, fold_file, fold_until

SAMPLE = "public/claude-code-log/real_projects/-Users-dain-workspace-claude-code-log-sample/"


def _notices(session, category: str, agent: str = MAIN) -> list[NoticeItem]:
    return [i for i in session.agents[agent].items
            if isinstance(i, NoticeItem) and i.category == category]


def test_system_rows_without_subtype_are_notices_not_malformed() -> None:
    # 0d3a8e6f (CLI 1.0.43) line 36: {"type":"system","content":"Running \x1b[1mPostToolUse:
    # MultiEdit\x1b[22m...","level":"info"}: no subtype, as CLI 1.0.x wrote hook results
    s = fold_file(SAMPLE + "0d3a8e6f-290f-4105-a327-a2496e5e2a83.jsonl").session
    assert s.malformed == []
    assert not [i for i in s.main.items if isinstance(i, ProblemItem)]
    line36 = next(i for i in _notices(s, "system") if i.line_no == 36)
    assert line36.text == "Running PostToolUse:MultiEdit..."  # the terminal styling dropped
    assert s.kinds["system"] > 0 and not any(k == "system/" for k in s.kinds)
    bare = decode_line(b'{"type":"system"}')
    assert isinstance(bare, F.SystemOther) and (bare.subtype, bare.kind_key) == ("", "system")
    # public/claude-code-log/system_model_change.jsonl (CLI 1.0.33), its one line:
    # "Claude Opus 4 limit reached, now using Sonnet 4", level warning, no subtype
    s = fold_file("public/claude-code-log/system_model_change.jsonl").session
    fallback = [i for i in _notices(s, "system") if "limit reached" in i.text]
    assert [(i.text, i.level) for i in fallback] == [
        ("Claude Opus 4 limit reached, now using Sonnet 4", "warning")]


def test_local_commands_under_a_caveat_are_not_rewinds() -> None:
    # 12a546d1 (CLI 1.0.56) lines 1-5: a caveat row (isMeta), then "/clear" (line 2) and its
    # <local-command-stdout> (3), then "!uv run pytest" as <bash-input> (4) whose parent is the
    # caveat again (a sibling of /clear), and its <bash-stdout> (5): no branch was abandoned
    feed = fold_file(SAMPLE + "12a546d1-83a7-49a6-abba-5400db340b43.jsonl")
    s = feed.session
    assert s.rewinds == 0 and not _notices(s, "rewind")
    assert not [i for i in s.main.items if i.hidden]
    for name in ("0d3a8e6f-290f-4105-a327-a2496e5e2a83", "937c6e6b-27e7-4edd-86f1-ad28f9731841",
                 "cbc0f75b-b36d-4efd-a7da-ac800ea30eb6"):
        assert fold_file(SAMPLE + name + ".jsonl").session.rewinds == 0, name


def test_a_real_branch_is_a_rewind() -> None:
    # -experiments-ideas/03eb5929 (CLI 2.1.42): line 18 is a prompt under eb84e3ee; line 38,
    # twenty rows later, is another prompt re-parented onto that same eb84e3ee: the branch
    # from line 18 to 37 (three prompts and their answers) is abandoned
    s = fold_file("public/claude-code-log/real_projects/-experiments-ideas/"
                  "03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl").session
    assert s.rewinds == 1
    assert [n.line_no for n in _notices(s, "rewind")] == [38]
    hidden = [i for i in s.main.items if i.hidden]
    assert [i.line_no for i in hidden if i.kind == "prompt"] == [18, 25, 32]
    assert all(18 <= i.line_no < 38 for i in hidden)
    # the hand-made fork of claude-code-log's tests still is one
    assert fold_file("public/claude-code-log/dag_fork.jsonl").session.rewinds == 1


def test_slash_command_with_command_message_first_opens_a_turn() -> None:
    # -Users-dain-workspace-JSSoundRecorder/7acd37a8 (CLI 2.0.42) line 3:
    # "<command-message>init is analyzing your codebase…</command-message>\n<command-name>/init
    # </command-name>", answered by the model; then five typed prompts, two of them (47, 169)
    # opening with an IDE block
    feed = fold_file("public/claude-code-log/real_projects/-Users-dain-workspace-JSSoundRecorder/"
                     "7acd37a8-2745-4b58-a8a9-46164b22ad9e.jsonl")
    s = feed.session
    first = s.turns[0]
    assert (first.prompt, first.started_by, first.line_no, first.answered) == ("/init", "command", 3, True)
    assert [(t.started_by, t.line_no) for t in s.turns[1:]] == [
        ("prompt", 47), ("prompt", 59), ("prompt", 64), ("prompt", 99), ("prompt", 169)]
    d = summarize(s)
    assert (d["prompts"], d["turns"], d["status"]) == (6, 6, "idle")
    assert "<command-message>" not in format_summary(d)


def test_prompts_count_slash_commands_and_turns_count_model_turns() -> None:
    # 12a546d1 (CLI 1.0.56): "/clear" (line 2) is a slash command the model never saw, "!"
    # bash (<bash-input>, <bash-stdout>: lines 4-5) no prompt at all, then the typed prompt of
    # line 6 the model answered
    s = fold_file(SAMPLE + "12a546d1-83a7-49a6-abba-5400db340b43.jsonl").session
    d = summarize(s)
    human = [t for t in s.turns if t.started_by in ("prompt", "command")]
    assert d["prompts"] == len(human) and s.turns[0].prompt == "/clear"
    assert d["turns"] == sum(1 for t in s.turns if t.answered) == d["prompts"] - 1 == 1
    assert not s.turns[0].answered and s.turns[1].line_no == 6
    bash = [i for i in s.main.items if i.line_no in (4, 5)]
    assert [i.kind for i in bash] == ["notice", "notice"]


def test_a_task_notification_starts_a_turn_with_a_header() -> None:
    # async_agents/eb000000… (CLI 2.1.34): line 1 a prompt that spawns a background agent;
    # line 6 a user row "<task-notification>…<summary>Agent "Coverage analysis" completed
    # </summary>…" that the model answers on line 7
    s = fold_file("public/claude-code-log/async_agents/eb000000-0000-4000-8000-000000000001.jsonl").session
    assert [(t.started_by, t.line_no, t.prompt) for t in s.turns] == [
        ("prompt", 1, s.turns[0].prompt), ("task-notification", 6, None)]
    head = [i for i in s.main.items if i.turn == 1]
    assert (head[0].kind, head[0].category, head[0].text) == (
        "notice", "turn start", 'started by a background task: Agent "Coverage analysis" completed')
    assert [(i.kind, i.line_no) for i in head[1:]] == [("text", 7)]
    assert not [i for i in s.main.items if i.kind == "prompt" and not i.text.strip()]
    d = summarize(s)
    assert (d["prompts"], d["turns"]) == (1, 2)


def test_finished_sessions_are_idle_not_requesting() -> None:
    # -Users-dain-workspace-danieldemmel-me-next/3680252d (CLI 2.0.x) ends with "/model" and its
    # <local-command-stdout>: the command is done, nothing is being requested
    s = fold_file("public/claude-code-log/real_projects/-Users-dain-workspace-danieldemmel-me-next/"
                  "3680252d-d4e3-4416-bddd-8f5b5b4fdb7f.jsonl").session
    assert s.activity.kind == "idle"
    assert summarize(s)["status"] == "idle"
    # 0d3a8e6f (CLI 1.0.43) ends with the model's text; 1.0.x writes no stop reason
    assert summarize(fold_file(SAMPLE + "0d3a8e6f-290f-4105-a327-a2496e5e2a83.jsonl").session)[
        "status"] == "idle"
    # a file cut after a tool call (its result never came) is still mid-turn
    s = fold_until("forge/2.1.220/bash_tool.jsonl", _first_line("forge/2.1.220/bash_tool.jsonl",
                                                                b'"tool_use"'))
    assert summarize(s)["status"] == "running"


def test_a_cost_never_recorded_is_estimated_and_marked() -> None:
    # 0d3a8e6f (CLI 1.0.43): no result, no cost-state row: the cost was never recorded,
    # and the summary estimates it from the tokens, marked as an estimate
    s = fold_file(SAMPLE + "0d3a8e6f-290f-4105-a327-a2496e5e2a83.jsonl").session
    d = summarize(s)
    assert s.cost_usd is None and d["cost_source"] == "estimated" and d["cost_usd"] > 0
    assert "cost ~$" in format_summary(d) and "$0.0000" not in format_summary(d)
    from cctv.widgets.status_bar import status_parts

    drawn = [p.content.plain for p in status_parts(s, source="f", following=True)]
    assert [t for t in drawn if t.startswith("~$")] and not [t for t in drawn if t.startswith("$")]
    # a recorded cost is kept (captures/stream/11_multi_turn: 0.0215 cumulative)
    assert summarize(fold_file("captures/stream/11_multi_turn.jsonl").session)["cost_usd"] == 0.0215


def test_text_summary_compactions_on_one_line_and_unknown_tokens_as_question_mark() -> None:
    # captures/projects/…/aafe1787 (the on-disk twin of 10_compact_manual): compactMetadata
    # {trigger manual, preTokens 1225, postTokens 2787}; older CLIs write no postTokens
    d = summarize(fold_file("captures/projects/-home-ada-src-demo/"
                            "aafe1787-82bf-4f68-ae98-84dbe071fd7f.jsonl").session)
    assert d["compactions"] == [{"trigger": "manual", "pre_tokens": 1225, "post_tokens": 2787}]
    assert [ln for ln in format_summary(d).splitlines() if "compact" in ln] == [
        "  compact  1 (1 manual): 1,225 → 2,787 tokens"]
    d["compactions"][0]["post_tokens"] = None
    text = format_summary(d)
    assert "None" not in text
    assert [ln for ln in text.splitlines() if "compact" in ln] == [
        "  compact  1 (1 manual): 1,225 → ? tokens"]
    many = dict(d, compactions=[{"trigger": "auto", "pre_tokens": 150_000, "post_tokens": 20_000}] * 554)
    lines = [ln for ln in format_summary(many).splitlines() if "compact" in ln]
    assert lines == ["  compact  554 (554 auto): 83,100,000 → 11,080,000 tokens"]


def test_every_rate_limit_event_updates_the_state() -> None:
    # forge/2.1.220/queued_command.jsonl line 12: status allowed, resetsAt 1784959200,
    # five_hour, overageStatus rejected; then the same frame at 91 % (allowed_warning), as
    # a second frame of a session near its limit carries
    s = fold_until("forge/2.1.220/queued_command.jsonl", 12)
    state = s.rate_limit_state
    assert (state.status, state.kind, state.resets_at, state.overage_status, state.events) == (
        "allowed", "five_hour", 1784959200, "rejected", 1)
    frame = msgspec.json.decode((FIXTURES / "forge/2.1.220/queued_command.jsonl")
                                .read_bytes().splitlines()[11])
    frame["rate_limit_info"].update(status="allowed_warning", utilization=0.91)
    s.apply(decode_line(msgspec.json.encode(frame), 13))
    assert (state.status, state.utilization, state.resets_at, state.events) == (
        "allowed_warning", 0.91, 1784959200, 2)
    d = summarize(s)
    assert d["rate_limit"]["status"] == "allowed_warning" and d["rate_limit"]["utilization"] == 0.91
    assert "rate limit allowed_warning (five_hour, 91%, overage rejected)" in format_summary(d)
    assert d["api_retries"] == 0


def _first_line(path: str, needle: bytes) -> int:
    lines = (FIXTURES / path).read_bytes().splitlines()
    return next(n for n, ln in enumerate(lines, 1) if needle in ln)


def test_summary_rows_name_a_title_only_when_their_leaf_is_in_this_session() -> None:
    # 37f83ec9 (CLI 1.0.x) opens with summary rows copied from earlier sessions: their
    # leafUuid is no row of this file, so the title is the first prompt, not "Centralizing…"
    s = fold_file(SAMPLE + "37f83ec9-f2ea-42a9-925e-0d5c105cb6e8.jsonl").session
    assert s.title is not None and s.title.startswith("Hey Claude, please have a look at the git diff")
    # todowrite_examples.jsonl line 12: summary with leafUuid assistant_006, a row of its own
    s = fold_file("public/claude-code-log/todowrite_examples.jsonl").session
    assert s.title == "Feature Implementation with Task Management"


def test_progress_hook_progress_rows_count_as_hook_runs() -> None:
    # -experiments-ideas/03eb5929 (CLI 2.1.42): 11 progress rows of type hook_progress
    # (SessionStart:startup, PostToolUse:Bash…), no hook attachment
    s = fold_file("public/claude-code-log/real_projects/-experiments-ideas/"
                  "03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl").session
    d = summarize(s)
    assert d["hooks"] == {"runs": 11, "failed": 0, "stop_summaries": 7}
    first = next(h for h in s.hooks.values())
    assert (first.name, first.event, first.status) == ("SessionStart:startup", "SessionStart", "ran")
    assert '"${CLAUDE_PLUGIN_ROOT}/scripts/clmail.cmd" actor started' in first.output


def test_ide_blocks_before_the_typed_text_are_a_prompt_with_chips() -> None:
    # -Users-dain-workspace-coderabbit-review-helper/cb2e607c line 3: blocks
    # [<ide_selection>The user selected the lines 508 to 508 from …/extract-coderabbit-
    # feedback.py:…, "How can I make this possible to install as a library with `uv`…"]
    s = fold_file("public/claude-code-log/real_projects/-Users-dain-workspace-coderabbit-review-helper/"
                  "cb2e607c-c758-415a-8b45-c49e4631906a.jsonl").session
    prompt = next(i for i in s.main.items if i.kind == "prompt" and i.line_no == 3)
    assert prompt.text.startswith("How can I make this possible to install as a library")
    assert "<ide_selection>" not in prompt.text
    assert prompt.context == ("selected line 508 of extract-coderabbit-feedback.py",)
    assert s.turns[prompt.turn].started_by == "prompt"
    # -Users-dain-workspace-danieldemmel-me-next/9e953218 line 1: <ide_opened_file> first
    s = fold_file("public/claude-code-log/real_projects/-Users-dain-workspace-danieldemmel-me-next/"
                  "9e953218-585f-4692-89df-9e0747a31c68.jsonl").session
    prompt = next(i for i in s.main.items if i.kind == "prompt")
    assert (prompt.line_no, prompt.context) == (1, ("opened tokenizer.html",))
    assert prompt.text.startswith("I have @public/tokenizer.css")


def test_inline_sidechain_rows_of_cli_1_0_are_the_task_calls_sub_agent() -> None:
    # public/claude-code-log/sidechain.jsonl (CLI 1.0.35): line 1 the main agent's Task call
    # toolu_01VJzVGXqdaUe6AYX6CAJUHz ("Debug failing test output"); lines 2-8 isSidechain rows
    # without agentId: the sub-agent's prompt (2, a root row), its text, Read calls and
    # result, and its summary (8, whose parent row is not in the file)
    s = fold_file("public/claude-code-log/sidechain.jsonl").session
    task = "toolu_01VJzVGXqdaUe6AYX6CAJUHz"
    assert set(s.agents) == {MAIN, task}
    sub = s.agents[task]
    assert sub.description == "Debug failing test output"
    assert [(i.kind, i.line_no) for i in sub.items] == [
        ("prompt", 2), ("text", 3), ("tool", 4), ("text", 6), ("tool", 7), ("text", 8)]
    assert [(i.kind, i.line_no) for i in s.main.items] == [("tool", 1)]
    assert not [t for t in s.turns if t.prompt and t.prompt.startswith("I need to debug")]
    d = summarize(s)
    assert d["subagents"] == 1
    # the sub-agent's tokens are its own, not the main loop's (line 1's usage only)
    assert d["usage"]["output_tokens"] == s.main.output_tokens == 309
    assert sub.output_tokens == 728


def test_warm_up_and_compaction_agent_files_are_not_sub_agents(tmp_path) -> None:
    # -Users-dain-workspace-coderabbit-review-helper/cb2e607c (CLI 2.0.37): one Task call
    # (its sub-agent in agent-ea02459f.jsonl) and two warm-up agent files beside it
    # (agent-2b93909d, agent-645808c9: a "Warmup" prompt and its reply) that named this session
    s = fold_file("public/claude-code-log/real_projects/-Users-dain-workspace-coderabbit-review-helper/"
                  "cb2e607c-c758-415a-8b45-c49e4631906a.jsonl").session
    assert summarize(s)["subagents"] == 1
    assert [a.agent_file_id for a in s.agents.values() if a.id != MAIN] == ["ea02459f"]
    assert not [a for a in s.agents.values() if a.id != MAIN and a.status == "running"]
    # a compaction agent's file (agent-acompact-*) under subagents/: a copy of the session
    # ef958aa1 with one of its six agent files renamed so
    import shutil
    src = FIXTURES / "public/claude-code-log/real_projects/-experiments-worktrees"
    sid = "ef958aa1-0e93-49f0-bb71-150f63befcd1"
    shutil.copy(src / f"{sid}.jsonl", tmp_path)
    shutil.copytree(src / sid, tmp_path / sid)
    agents = tmp_path / sid / "subagents"
    (agents / "agent-a36efb2a1231c41e2.jsonl").rename(agents / "agent-acompact-a36efb2a1231c41e2.jsonl")
    before = fold_file(src / f"{sid}.jsonl").session
    s = fold_file(tmp_path / f"{sid}.jsonl").session
    renamed = (agents / "agent-acompact-a36efb2a1231c41e2.jsonl").read_bytes().count(b"\n")
    assert renamed == 18 and s.agent_file_lines == before.agent_file_lines - renamed
    assert not [a for a in s.agents.values() if (a.agent_file_id or "").startswith("acompact")]


def test_tool_durations_are_real_and_api_time_is_the_turns_own() -> None:
    # captures/stream/06_background_bash.jsonl: the foreground Bash "sleep 5; python3 app.py"
    # (tool_use line 7, result line 13) took just over 5 s, and no heartbeat came (< 30 s);
    # the background Bash (line 2) returned at once: its time is its task's, not the call's
    s = fold_file("captures/stream/06_background_bash.jsonl").session
    fg = next(c for c in s.calls.values() if "sleep 5" in c.input["command"])
    bg = next(c for c in s.calls.values() if c.background)
    assert fg.elapsed is None and 5.0 <= fg.duration < 5.5
    assert bg.duration is None
    # captures/stream/11_multi_turn.jsonl: results say duration_api_ms 51 then 171, the
    # query's running total: turn 2's own API time is 120 ms
    s = fold_file("captures/stream/11_multi_turn.jsonl").session
    assert [(t.duration_api_ms, t.api_total_ms) for t in s.turns] == [(51, 51), (120, 171)]


def test_sub_agent_tokens_come_from_its_task_usage() -> None:
    # captures/stream/05_subagent.jsonl: the sub-agent's assistant frames carry placeholder
    # usage (2 output tokens); its task_notification says usage.total_tokens 1234
    s = fold_file("captures/stream/05_subagent.jsonl").session
    sub = next(a for a in s.agents.values() if a.id != MAIN)
    assert sub.total_tokens == 1234


def test_outcomes_interrupted_is_not_denied_and_failed_turns_are_failed() -> None:
    # 0d3a8e6f (CLI 1.0.43) lines 13-15: MultiEdit, its tool_result "The user doesn't want to
    # proceed with this tool use…" (14), then "[Request interrupted by user for tool use]"
    # (15): the user interrupted; the same at 18-20 and 43-45
    s = fold_file(SAMPLE + "0d3a8e6f-290f-4105-a327-a2496e5e2a83.jsonl").session
    cut = [(c.name, c.line_no, c.status) for c in s.calls.values() if c.result_line_no in (14, 19, 44)]
    assert cut == [("MultiEdit", 13, "interrupted"), ("MultiEdit", 18, "interrupted"),
                   ("MultiEdit", 43, "interrupted")]
    assert summarize(s)["tool_calls"]["denied"] == 0
    # forge/2.1.220/permission_deny.jsonl: a real denial stays one
    assert summarize(fold_file("forge/2.1.220/permission_deny.jsonl").session)["tool_calls"]["denied"] == 1
    # forge/2.1.220/interrupt.jsonl: result error_during_execution, terminal_reason
    # aborted_streaming: interrupted; a result with is_error is failed whatever its subtype
    turn = fold_file("forge/2.1.220/interrupt.jsonl").session.turns[0]
    assert turn.outcome == "interrupted"
    failed = fold_frames([{"type": "result", "subtype": "success", "is_error": True,
                           "duration_ms": 10, "num_turns": 1, "session_id": "s",
                           "api_error_status": 500, "result": "API Error: 500"}]).turns[0]
    assert (failed.subtype, failed.outcome) == ("success", "failed")


def test_a_background_shell_still_running_keeps_the_session_running_in_background() -> None:
    # forge/2.1.220/backgrounded_bash_alive_at_result.jsonl: the turn's result (line 17) comes
    # while the background shell bmlwzzcoi still runs; it is killed on line 19
    s = fold_until("forge/2.1.220/backgrounded_bash_alive_at_result.jsonl", 17)
    assert s.activity.kind == "background" and s.activity.text == "running in background"
    assert summarize(s)["status"] == "background"
    s = fold_until("forge/2.1.220/backgrounded_bash_alive_at_result.jsonl", 19)
    assert s.activity.kind == "idle"
    # forge/2.1.220/backgrounded_bash_lifecycle.jsonl: the shell ends (task_notification)
    s = fold_file("forge/2.1.220/backgrounded_bash_lifecycle.jsonl").session
    assert s.activity.kind == "idle" and summarize(s)["status"] == "idle"


def fold_frames(frames):
    from cctv.reducer.fold import Session

    s = Session()
    for n, frame in enumerate(frames, 1):
        s.apply(decode_line(msgspec.json.encode(frame), n))
    return s


def test_rows_the_cli_writes_after_the_last_answer_do_not_reopen_the_turn() -> None:
    # 326189cf (CLI 1.0.x) ends with a subtype-less system row (a hook's result) after the
    # model's last text; 71c9afe9 ends with ! bash input and output after it
    for name in ("326189cf-5676-4237-8cde-1ce80aae4a9f", "71c9afe9-d9cc-4583-86b3-e62ba682b83a"):
        assert summarize(fold_file(SAMPLE + name + ".jsonl").session)["status"] == "idle", name
    # a hand-made fixture that stops at a prompt is mid-turn: it says so
    assert summarize(fold_file("public/claude-code-log/dag_simple.jsonl").session)["status"] == \
        "requesting"


def test_a_background_tasks_completion_reply_belongs_to_the_turn_it_started() -> None:
    # forge/2.1.156-raw/monitor.jsonl: line 30 ends a turn (result); line 31 the monitor's
    # task_notification (completed); line 33 the model's reply to it, then its result (34)
    s = fold_file("forge/2.1.156-raw/monitor.jsonl").session
    last = s.turns[-1]
    assert (last.started_by, last.line_no, last.end_line) == ("task-notification", 33, 34)
    items = [i for i in s.main.items if i.turn == last.index]
    assert items[0].kind == "notice" and items[0].text.startswith("started by a background task")
    assert [i.line_no for i in items if i.kind == "text"] == [33]
    assert s.turns[-2].end_line == 30
