"""Misreadings of issue #23, each on a real recording: what the fold records,
and what a screen then draws of it.

Where no recording holds the case, the test takes a real row and changes
the one field the case is about, and says so."""

from __future__ import annotations

import msgspec
from rich.console import Console

from cctv.reducer.decode import decode_line
from cctv.reducer.export_md import export_markdown
from cctv.reducer.fold import Session
from cctv.reducer.state import HookItem, Item, PromptItem, TurnFooterItem
from cctv.reducer.summary import summarize
from cctv.widgets.cards import Palette, RenderContext, render_item
from conftest import FIXTURES, fold_file, fold_until, replay_words

CONSOLE = Console(width=120, color_system="truecolor")
REAL = "public/claude-code-log/real_projects/"
IDEAS = REAL + "-experiments-ideas/03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl"
HOOKS_ON_DISK = "captures/projects/-home-ada-src-demo/142bb34b-89e4-4e11-b4ed-b3397e45f6d4.jsonl"


def drawn(session: Session, item: Item, width: int = 120) -> str:
    """The item's first row as a screen shows it."""
    ctx = RenderContext(session, CONSOLE, Palette())
    return render_item(item, width, False, ctx)[0].text.rstrip()


def drawn_rows(session: Session, item: Item, width: int = 120) -> list[str]:
    """All the item's rows, folded, as a screen shows them."""
    ctx = RenderContext(session, CONSOLE, Palette())
    return [strip.text.rstrip() for strip in render_item(item, width, False, ctx)]


def rows(path: str) -> list[dict]:
    return [msgspec.json.decode(line) for line in (FIXTURES / path).read_bytes().splitlines()]


def fold_rows(rows: list[dict]) -> Session:
    session = Session()
    for n, row in enumerate(rows, 1):
        session.apply(decode_line(msgspec.json.encode(row), n))
    return session


# --- hooks ----------------------------------------------------------------------------------


def test_hook_progress_rows_ran_and_are_never_drawn_running() -> None:
    # 03eb5929 (CLI 2.1.42): 11 progress/hook_progress rows (SessionStart:startup on line 2,
    # PostToolUse:Bash on 8, Stop on 15, 22, 29…), no outcome recorded; its last screen
    # had "⚓ Stop ◐ running" right above "↳ stop hooks · 1 ran"
    s = fold_file(IDEAS).session
    hooks = [i for i in s.main.items if isinstance(i, HookItem)]
    assert len(hooks) == 11 and {h.hook.status for h in hooks} == {"ran"}
    chips = [drawn(s, h) for h in hooks]
    assert not [c for c in chips if "running" in c or "◐" in c]
    assert chips[0].startswith("⚓ SessionStart:startup · ran")
    assert summarize(s)["hooks"] == {"runs": 11, "failed": 0, "stop_summaries": 7}


def test_a_hook_that_timed_out_or_exited_non_zero_failed() -> None:
    # 07_hooks on disk (142bb34b, CLI 2.1.328) line 26: a hook_success attachment of the
    # PreToolUse:Bash hook (exitCode 0, durationMs 3014). No recording holds a timeout:
    # the same row as the CLI writes one (type hook_cancelled, timedOut true, timeoutMs)
    # is a failed run; cancelled without timedOut, the user's interrupt; a non-zero exit
    # (hook_non_blocking_error, exitCode 1) failed
    path = HOOKS_ON_DISK
    real = next(r for r in rows(path) if r.get("type") == "attachment"
                and r["attachment"].get("hookName") == "PreToolUse:Bash")
    assert real["attachment"]["type"] == "hook_success"

    def folded(**changes) -> str:
        row = dict(real, attachment=dict(real["attachment"], **changes))
        (hook,) = fold_rows([row]).hooks.values()
        return hook.status

    assert folded() == "done"
    assert folded(type="hook_cancelled", timedOut=True, timeoutMs=3000) == "failed"
    assert folded(type="hook_cancelled") == "interrupted"
    assert folded(type="hook_non_blocking_error", exitCode=1) == "failed"
    # the wire: 07_hooks line 22/23, the Stop hook exits 2 (outcome error)
    s = fold_file("captures/stream/07_hooks.jsonl").session
    stop = s.hooks["d4cf0d3a-0cb1-4e2a-ab16-3939cc427f02"]
    assert (stop.status, stop.exit_code) == ("failed", 2)
    assert summarize(s)["hooks"]["failed"] == 1
    assert "✗ exit 2" in drawn(s, stop.item)


# --- local commands -------------------------------------------------------------------------


def _footers(session: Session) -> list[str]:
    return [drawn(session, i).split(" · ")[0].strip("─ ") for i in session.main.items
            if isinstance(i, TurnFooterItem)]


def test_a_local_command_is_a_prompt_not_a_turn_with_a_footer() -> None:
    # 10_compact_manual: a prompt (result line 7, num_turns 2), /compact (result line 17:
    # local_command "compact", num_turns 0, $0.0144 drawn as "turn 2" before), a prompt
    # (result line 23)
    s = fold_file("captures/stream/10_compact_manual.jsonl").session
    assert _footers(s) == ["turn 1", "turn 2"]
    assert [(t.number, t.local) for t in s.turns] == [(1, False), (None, True), (2, False)]
    d = summarize(s)
    assert (s.model_turns, d["turns"], d["prompts"]) == (2, 2, 3)
    # forge compact.jsonl: /compact failed, the CLI wrote its own (<synthetic>) reply "Not
    # enough messages to compact." (line 18), then a result of num_turns 0 (line 19)
    s = fold_file("forge/2.1.220/compact.jsonl").session
    assert _footers(s) == ["turn 1"] and summarize(s)["turns"] == 1
    # on disk (aafe1787, the twin of 10_compact_manual): /compact (line 33) and its
    # output (34) is a prompt without a turn number; the next prompt (43) is turn 2
    s = fold_file("captures/projects/-home-ada-src-demo/"
                  "aafe1787-82bf-4f68-ae98-84dbe071fd7f.jsonl").session
    prompts = [drawn(s, i) for i in s.main.items if isinstance(i, PromptItem)]
    assert prompts == ["▌ you · turn 1", "▌ you", "▌ you · turn 2"]
    assert summarize(s)["turns"] == 2 and not s.exited


def test_exit_ends_the_session_and_a_command_the_model_answers_is_a_turn() -> None:
    # 03eb5929 (CLI 2.1.42) ends with /exit (line 60) and "See ya!" (61): a prompt, no
    # turn, and the fold keeps that the user ended the session
    s = fold_file(IDEAS).session
    last = [i for i in s.main.items if isinstance(i, PromptItem)][-1]
    assert (last.text, drawn(s, last)) == ("/exit", "▌ you")
    assert s.exited and (s.model_turns, summarize(s)["prompts"]) == (7, 8)
    # 7acd37a8 (CLI 2.0.42) opens with /init, which the model answers: turn 1, the
    # prompt drawn again once that was known
    s = fold_file(REAL + "-Users-dain-workspace-JSSoundRecorder/"
                  "7acd37a8-2745-4b58-a8a9-46164b22ad9e.jsonl").session
    first = next(i for i in s.main.items if isinstance(i, PromptItem))
    assert (first.text, drawn(s, first), s.turns[0].number) == ("/init", "▌ you · turn 1", 1)
    assert first.version > 0 and not s.exited


# --- a call a hook blocked ------------------------------------------------------------------


def test_a_call_a_pretooluse_hook_blocked_is_denied_with_the_hook_as_reason() -> None:
    # 07_hooks: Bash toolu_01UBPda4k0uxWA7GPGuArzj3, its PreToolUse:Bash hook ran and let
    # it run (stdout line 20, on disk 142bb34b line 25). No recording holds a hook that
    # refused: the same tool_result rows as the CLI writes them then (is_error, the text
    # "PreToolUse:Bash hook error: [command]: reason"), on stdout with the result listing
    # the call in permission_denials as the CLI does for a refused call
    call_id = "toolu_01UBPda4k0uxWA7GPGuArzj3"
    refusal = ("PreToolUse:Bash hook error: [for i in 1 2 3; do echo pre-tool tick $i; sleep 1; "
               "done]: no shell in this directory")

    def blocked(row: dict) -> dict:
        if not (row.get("type") == "user" and isinstance(row["message"]["content"], list)
                and row["message"]["content"][0].get("tool_use_id") == call_id):
            return row
        block = dict(row["message"]["content"][0], content=refusal, is_error=True)
        row = dict(row, message=dict(row["message"], content=[block]))
        key = "tool_use_result" if "tool_use_result" in row else "toolUseResult"
        return dict(row, **{key: "Error: " + refusal})

    stdout = [blocked(r) for r in rows("captures/stream/07_hooks.jsonl")]
    result = stdout[-1]
    assert result["type"] == "result"
    stdout[-1] = dict(result, permission_denials=[
        {"tool_name": "Bash", "tool_use_id": call_id, "tool_input": {"command": "echo hello from bash"}}])
    disk = [blocked(r) for r in rows(HOOKS_ON_DISK)]
    for session in (fold_rows(stdout), fold_rows(disk), fold_rows(stdout[:20])):
        call = session.calls[call_id]
        assert (call.status, call.denied_reason) == ("denied", refusal)
        counts = summarize(session)["tool_calls"]
        assert (counts["denied"], counts["failed"]) == (1, 0)
        card = drawn_rows(session, call.item)
        assert card[0].endswith("⊘ denied") and card[-1].strip() == "⊘ " + refusal


# --- what a settled file says the session was doing ------------------------------------------


def test_a_session_the_user_interrupted_is_idle_not_requesting() -> None:
    # 0d3a8e6f (CLI 1.0.43), as its file reads up to line 15: MultiEdit (13), "The user
    # doesn't want to proceed…" (14), "[Request interrupted by user for tool use]" (15);
    # the CLI waits for a prompt (it read "requesting"). The same at 20 and 45
    path = REAL + "-Users-dain-workspace-claude-code-log-sample/0d3a8e6f-290f-4105-a327-a2496e5e2a83.jsonl"
    for line in (15, 20, 45):
        s = fold_until(path, line)
        assert (s.activity.kind, summarize(s)["status"]) == ("idle", "idle"), line
    # the wire: forge interrupt.jsonl, "[Request interrupted by user]" (12), then its result
    s = fold_until("forge/2.1.220/interrupt.jsonl", 12)
    assert summarize(s)["status"] == "idle"
    assert fold_file("forge/2.1.220/interrupt.jsonl").session.turns[0].outcome == "interrupted"


def test_a_json_schema_run_that_ended_on_its_structured_output_is_idle() -> None:
    # 03_tools on disk (f70c6abd, CLI 2.1.328, a -p run), lines 1-19: the prompt (3), the
    # assistant's TodoWrite call (18, stop_reason tool_use) and its result (19). No
    # recording holds a --json-schema run: the same rows with the call the CLI gives such
    # a run, StructuredOutput, and the result it writes, end where that run's file ends
    # (no text, no result follows); it read "requesting"
    path = "captures/projects/-home-ada-src-demo/f70c6abd-bc92-44a7-80e8-76abec8cb9d7.jsonl"
    head = rows(path)[:19]
    call_id = head[17]["message"]["content"][0]["id"]

    def structured(row: dict) -> dict:
        content = row.get("message", {}).get("content")
        if not isinstance(content, list) or not content:
            return row
        block = content[0]
        if block.get("id") == call_id:
            block = dict(block, name="StructuredOutput", input={"greeting": "configurable"})
        elif block.get("tool_use_id") == call_id:
            block = dict(block, content="Structured output provided successfully")
        else:
            return row
        return dict(row, message=dict(row["message"], content=[block]))

    s = fold_rows([structured(r) for r in head])
    assert s.calls[call_id].status == "done"
    assert (s.activity.kind, summarize(s)["status"]) == ("idle", "idle")
    # the same run before its result: requesting (the tool runs)
    s = fold_rows([structured(r) for r in head[:18]])
    assert s.activity.kind == "running"
    # any other call's result leaves the model to answer: requesting
    assert summarize(fold_rows(head))["status"] == "requesting"


def test_a_slash_command_written_as_a_system_row_is_a_local_command() -> None:
    # 3680252d (CLI 2.0.0) is one /model: caveat (4), "<command-name>/model…" (5),
    # "<local-command-stdout>Set model to …" (6), user rows. Newer CLIs write a local
    # command's output, or the command itself, as a system/local_command row with the same
    # text (no recording here holds one): then the command read "requesting" and its
    # output was an unknown system notice
    path = REAL + "-Users-dain-workspace-danieldemmel-me-next/3680252d-d4e3-4416-bddd-8f5b5b4fdb7f.jsonl"
    real = rows(path)

    def as_system(row: dict) -> dict:
        head = {k: v for k, v in row.items() if k not in ("type", "message", "isMeta")}
        return dict(head, type="system", subtype="local_command", level="info",
                    content=row["message"]["content"])

    caveat, command, output = real[3:6]
    for folded in ([caveat, command, as_system(output)],
                   [caveat, as_system(command), as_system(output)],
                   [caveat, dict(as_system(command), content="/model"), as_system(output)]):
        s = fold_rows(folded)
        prompt = next(i for i in s.main.items if isinstance(i, PromptItem))
        assert (prompt.text, drawn(s, prompt)) == ("/model", "▌ you")
        notice = s.main.items[-1]
        assert (notice.category, notice.text) == (
            "harness", "Set model to \x1b[1mDefault (Sonnet 4.5 · Smartest model for daily use)\x1b[22m")
        d = summarize(s)
        assert (d["status"], d["turns"], d["prompts"]) == ("idle", 0, 1)
    # the user rows as the file has them read the same
    assert summarize(fold_rows([caveat, command, output]))["status"] == "idle"


# --- an API error, said once ----------------------------------------------------------------

RATE_LIMITED = "API Error: Rate limit reached. Please try again later."


def _api_error(row: dict) -> dict:
    """The assistant row ``row`` as the CLI writes it when the API call failed: its
    own (<synthetic>) message carrying the error text, flagged as an API error."""
    message = dict(row["message"], model="<synthetic>", stop_reason="stop_sequence",
                   content=[{"type": "text", "text": RATE_LIMITED}])
    return dict(row, message=message, error="rate_limit", isApiErrorMessage=True)


def _lines_saying(session: Session, text: str) -> list[str]:
    return [line for item in session.main.items if not item.hidden
            for line in drawn_rows(session, item) if text in line]


def test_an_api_error_is_drawn_once() -> None:
    # 01_simple_text: init (1), the assistant's text (2), result (3); on disk (8e4b2dbb)
    # the prompt (3) and the assistant row (13). No recording holds an API error: the same
    # rows as the CLI writes them when the call failed (a <synthetic> message with the
    # error text, error rate_limit; on stdout a result is_error with api_error_status 429
    # and that text). It was drawn as reply text, as a notice and in the footer
    init, reply, result = rows("captures/stream/01_simple_text.jsonl")
    failed = dict(result, is_error=True, api_error_status=429, result=RATE_LIMITED)
    s = fold_rows([init, _api_error(reply), failed])
    assert _lines_saying(s, "Rate limit reached") == [
        f"✗ [api error] API error: rate_limit {RATE_LIMITED}"]
    footer = drawn(s, s.main.items[-1])
    assert footer.startswith("── turn 1 ·") and footer.rstrip("─ ").endswith("✗ failed · API error 429")
    # the export said "failed: success" (the result's subtype) of the same turn
    exported = [line for line in export_markdown(s).splitlines() if line.startswith("*turn 1 ")]
    assert len(exported) == 1 and exported[0].endswith(" · failed: API error 429*")
    disk = rows("captures/projects/-home-ada-src-demo/8e4b2dbb-330b-4d03-a3ef-8b4c8ce07f1e.jsonl")
    s = fold_rows([_api_error(r) if r.get("type") == "assistant" else r for r in disk])
    assert len(_lines_saying(s, "Rate limit reached")) == 1
    assert summarize(s)["status"] == "idle"


def test_the_inspector_names_a_hook_once() -> None:
    # forge trivial.jsonl lines 1-8: four SessionStart hooks (hook_name "SessionStart:startup",
    # hook_event "SessionStart"), started, then answered; the inspector said
    # "hook SessionStart:SessionStart:startup"
    words = [line for frame in replay_words(FIXTURES / "forge/2.1.220/trivial.jsonl")
             for line in frame if line.startswith("hook ")]
    assert words and set(words) == {"hook SessionStart:startup running",
                                    "hook SessionStart:startup done"}
    # 07_hooks line 22/23: the Stop hook, whose name is its event, exits 2
    words = [line for frame in replay_words(FIXTURES / "captures/stream/07_hooks.jsonl")
             for line in frame if line.startswith("hook Stop")]
    assert "hook Stop failed (exit 2)" in words


# --- a background sub-agent's prompt ---------------------------------------------------------


def test_a_sub_agent_s_screen_starts_with_the_prompt_its_task_started_with() -> None:
    # forge subagent.jsonl: Agent call toolu_01JVh2KNCgxX98dbr8qqW82b (12), task_started with
    # its prompt (13), the sub-agent's own prompt frame (14) and frames (16-18), its result
    # (21). A background sub-agent's own frames never come on stdout (no recording holds
    # one): the same file without them, the call run in the background, showed an empty
    # sub-agent screen
    call_id = "toolu_01JVh2KNCgxX98dbr8qqW82b"
    real = rows("forge/2.1.220/subagent.jsonl")
    prompt = real[12]["prompt"]
    assert real[12]["subtype"] == "task_started" and prompt.startswith("Run exactly this command")

    def backgrounded(row: dict) -> dict:
        content = row.get("message", {}).get("content")
        if isinstance(content, list) and content and content[0].get("id") == call_id:
            block = dict(content[0], input=dict(content[0]["input"], run_in_background=True))
            return dict(row, message=dict(row["message"], content=[block]))
        return row

    s = fold_rows([backgrounded(r) for r in real if not r.get("parent_tool_use_id")])
    items = s.agents[call_id].items
    assert [(type(i).__name__, i.text) for i in items] == [("PromptItem", prompt)]
    assert drawn(s, items[0]) == "▌ prompt"
    # a foreground sub-agent's own prompt frame (14) is where that prompt is written: one item
    s = fold_file("forge/2.1.220/subagent.jsonl").session
    first, *rest = s.agents[call_id].items
    assert (type(first).__name__, first.text, first.line_no) == ("PromptItem", prompt, 14)
    assert not [i for i in rest if i.kind == "notice"]


# --- usage, once per (message id, request id) -------------------------------------------------


def test_usage_is_counted_once_per_message_id_and_request_id() -> None:
    # 03_tools on disk (f70c6abd, CLI 2.1.328): one row per content block, each repeating
    # its message's usage: 15 assistant rows, 10 (message id, requestId) pairs (17/18 share
    # msg_…8e4xy5 / req_…LzblV3). No recording holds one message id under two request ids:
    # row 18 again with a second requestId (a retried request), then again with a second
    # message id, each is one more API call; row 18 again as it is is not
    path = "captures/projects/-home-ada-src-demo/f70c6abd-bc92-44a7-80e8-76abec8cb9d7.jsonl"
    real = rows(path)
    assistant = [r for r in real if r.get("type") == "assistant"]
    by_key = {(r["message"]["id"], r["requestId"]): r["message"]["usage"] for r in assistant}
    assert (len(assistant), len(by_key)) == (15, 10)

    def folded(extra: list[dict]) -> tuple[int, int]:
        s = fold_rows(real + extra)
        return s.usage.output_tokens, s.usage.input_tokens

    once = folded([])
    assert once == (sum(u["output_tokens"] for u in by_key.values()),
                    sum(u["input_tokens"] for u in by_key.values())) == (868, 12_000)
    row = real[17]
    assert (row["type"], row["message"]["usage"]["output_tokens"]) == ("assistant", 121)
    again = dict(row, uuid="retried-" + row["uuid"])
    second_request = dict(again, requestId=row["requestId"] + "-retry")
    second_message = dict(again, message=dict(row["message"], id=row["message"]["id"] + "-2"))
    assert folded([again]) == once
    assert folded([second_request]) == (868 + 121, 12_000 + 1200)
    assert folded([second_message]) == (868 + 121, 12_000 + 1200)
    assert folded([second_request, second_message]) == (868 + 242, 12_000 + 2400)
