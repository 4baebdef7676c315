"""The live state of a session (reducer.live_state), step by step through real recordings.

Each recording is folded a line at a time, as a live reader gets it; the clock
is the recorded time of the last line read plus a gap (how long the file has
been quiet), so the states are those a user would have seen at that moment.
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from cctv.reducer.feed import Feed
from cctv.reducer.item_time import ItemTimes
from cctv.reducer.lines import LineSplitter
from cctv.reducer.live_facts import live_facts
from cctv.reducer.live_state import (
    APPROVAL_AFTER_S,
    HORIZON_S,
    SETTLED_AFTER_S,
    LiveFacts,
    LiveState,
    live_state,
)

from conftest import FIXTURES

TOOLS = FIXTURES / "captures/projects/-home-ada-src-demo/f70c6abd-bc92-44a7-80e8-76abec8cb9d7.jsonl"
PERMISSION = FIXTURES / "forge/2.1.220/permission_suggestions_write.jsonl"
BACKGROUND = FIXTURES / "forge/2.1.220/backgrounded_bash_alive_at_result.jsonl"
COMPACT = FIXTURES / "captures/stream/10_compact_manual.jsonl"
EXIT = FIXTURES / "public/claude-code-log/real_projects/-experiments-ideas/03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl"


def steps(path: Path, lines: list[bytes] | None = None):
    """(line number, facts, the time of that line) after each line of ``path``."""
    feed, splitter = Feed(), LineSplitter()
    for n, line in enumerate(lines if lines is not None else path.read_bytes().splitlines(True), 1):
        feed.feed(splitter.feed(line))
        times = ItemTimes(feed)
        yield n, live_facts(feed.session, times.at_line), times.at_line(n)


def states(path: Path, quiet: float, lines: list[bytes] | None = None) -> dict[int, LiveState]:
    """The state after each line that has a time (the first rows of a stream may
    not), with the file quiet for ``quiet`` seconds since."""
    out = {}
    for n, facts, at in steps(path, lines):
        if at is not None:
            out[n] = live_state(facts, at + quiet, at)
    return out


def labels(path: Path, quiet: float, lines: list[bytes] | None = None) -> dict[int, str]:
    """The row's words after each line whose words changed."""
    out, previous = {}, None
    for n, state in states(path, quiet, lines).items():
        label = state.describe(state.since + quiet if state.since is not None else 0)
        if label != previous:
            out[n] = label
            previous = label
    return out


def line_of(path: Path, needle: bytes) -> int:
    return next(n for n, line in enumerate(path.read_bytes().splitlines(), 1) if needle in line)


def test_a_session_with_tools_reads_working_with_its_call_and_needs_you_at_the_end() -> None:
    got = states(TOOLS, 1.0)
    bash = line_of(TOOLS, b'"command":"python3 test_utils.py')
    assert got[bash].kind == "working"
    assert got[bash].activity == "Bash: python3 test_utils.py && python3 app.py · 1s"
    # its result: the model is asked again
    assert got[bash + 1].kind == "working" and got[bash + 1].activity.startswith("generating")
    last = max(got)
    assert got[last].kind == "needs_you" and got[last].activity == ""


def test_a_call_in_a_quiet_file_may_be_a_prompt_unless_the_tool_never_asks() -> None:
    quiet = APPROVAL_AFTER_S + 5
    got = states(TOOLS, quiet)
    bash = line_of(TOOLS, b'"command":"python3 test_utils.py')
    assert got[bash].kind == "needs_approval"
    assert got[bash].activity == "waiting on Bash (approval?)"
    read = line_of(TOOLS, b'"name":"Read"')
    assert got[read].kind == "working"  # Read never asks: only slow
    todo = line_of(TOOLS, b'"name":"TodoWrite"')
    assert got[todo].kind == "working"


def test_a_permission_prompt_on_stdout_is_exact() -> None:
    asked = line_of(PERMISSION, b'"subtype":"can_use_tool"')
    got = states(PERMISSION, 0.5)
    assert got[asked - 1].kind == "working"
    assert got[asked].kind == "needs_approval"
    assert got[asked].activity == "waiting on Write (approval)"
    assert got[asked + 1].kind == "working"  # the answer (the tool's result) came
    # on stdout a quiet call is only a slow one
    slow = states(PERMISSION, 120.0)
    assert slow[asked - 1].kind == "working"


def test_a_finished_turn_with_a_background_task_running() -> None:
    got = labels(BACKGROUND, 2.0)
    ended = line_of(BACKGROUND, b'"type":"result"')
    assert got[ended] == "needs you · 2s · 1 background task running"


def test_compacting_then_needs_you() -> None:
    got = states(COMPACT, 1.0)
    compacting = line_of(COMPACT, b'"status":"compacting"')
    assert got[compacting].kind == "compacting"
    assert got[max(got)].kind == "needs_you"


def test_exit_ends_the_session() -> None:
    got = states(EXIT, 1.0)
    assert got[max(got)].kind == "ended" and got[max(got)].activity == "/exit"
    exit_row = line_of(EXIT, b"<command-name>/exit")
    assert {got[n].kind for n in got if n >= exit_row} == {"ended"}
    assert got[exit_row - 1].kind != "ended"


def test_a_rate_limit_holds_until_its_reset() -> None:
    """The forge recordings' rate-limit events all say ``allowed``: the first is
    made ``rejected`` (what the CLI sends when the limit is hit), the rest of the
    recording unchanged."""
    lines = BACKGROUND.read_bytes().splitlines(True)
    at = next(i for i, line in enumerate(lines) if b'"rate_limit_event"' in line)
    frame = msgspec.json.decode(lines[at])
    frame["rate_limit_info"]["status"] = "rejected"
    resets = frame["rate_limit_info"]["resetsAt"]
    lines[:at + 1] = [*lines[:at], msgspec.json.encode(frame) + b"\n"]
    lines = lines[:at + 1]
    facts = list(steps(BACKGROUND, lines))[-1][1]
    assert facts.phase == "rate_limited" and facts.resets_at == resets
    before = live_state(facts, resets - 3600, resets - 3700)
    assert before.kind == "rate_limited" and before.activity == "resets in 1h"
    after = live_state(facts, resets + 60, resets - 30)
    assert after.kind == "needs_you"


def test_quiet_past_the_horizon_is_ended() -> None:
    facts = list(steps(TOOLS))[-1][1]
    two_hours = 2 * 3600.0
    state = live_state(facts, facts.since + two_hours, facts.since)
    assert state.kind == "ended" and state.activity == "quiet for 2h"
    assert live_state(facts, facts.since + HORIZON_S - 1, facts.since).kind == "needs_you"


def test_a_closed_stream_whose_turn_is_over_has_ended() -> None:
    facts = list(steps(PERMISSION))[-1][1]
    assert live_state(facts, facts.since + 1, facts.since).kind == "needs_you"
    assert live_state(facts, facts.since + 1, facts.since, closed=True).kind == "ended"


def test_labels_short_for_a_row_and_full_for_a_line() -> None:
    waiting = LiveState("needs_you", 1000.0, "")
    assert waiting.label(1125.0) == waiting.describe(1125.0) == "needs you · 2m"
    asked = LiveState("needs_approval", 1000.0, "waiting on Bash (approval?)", "Bash", 1000.0,
                      guessed=True)
    assert asked.label(1010.0) == "needs approval · Bash? 10s"
    assert asked.describe(1010.0) == "needs approval · 10s · waiting on Bash (approval?)"
    working = LiveState("working", 900.0, "Bash: npm test · 45s", "Bash", 955.0)
    assert working.label(1000.0) == "working · Bash 45s"
    assert working.describe(1000.0) == "working · Bash: npm test · 45s"


def test_facts_survive_the_index() -> None:
    """The index stores the facts with each row (msgpack): they come back equal."""
    facts = [f for _, f, _ in steps(TOOLS)]
    for f in facts:
        assert msgspec.msgpack.decode(msgspec.msgpack.encode(f), type=LiveFacts) == f


def test_a_rate_limit_on_disk_holds_until_its_reset_or_the_next_prompt() -> None:
    """On disk the CLI writes a rate-limit error as an assistant row of its own
    (``error: rate_limit``, ``isApiErrorMessage``, model ``<synthetic>``); no
    vendored transcript has one, so the first reply of a real one is made into it."""
    lines = TOOLS.read_bytes().splitlines(True)
    at = next(i for i, line in enumerate(lines) if b'"type":"assistant"' in line)
    row = msgspec.json.decode(lines[at])
    resets = 1_900_000_000
    row.update(error="rate_limit", isApiErrorMessage=True)
    row["message"].update(model="<synthetic>", content=[
        {"type": "text", "text": f"Claude AI usage limit reached|{resets}"}])
    limited = [*lines[:at], msgspec.json.encode(row) + b"\n"]
    n, facts, when = list(steps(TOOLS, limited))[-1]
    assert facts.phase == "rate_limited" and facts.resets_at == resets
    assert live_state(facts, when + 60, when) == LiveState("rate_limited", when,
                                                           f"resets in {(resets - when - 60) // 86400:.0f}d")
    # the next prompt: the model is asked again
    prompt = next(line for line in lines if b'"type":"user"' in line)
    again = list(steps(TOOLS, [*limited, prompt]))[-1][1]
    assert again.phase == "generating"


# a settled file: what its live state says, for each final state of reducer.facts
AGREES = {
    "ended": {"ended"}, "idle": {"needs_you"}, "background": {"needs_you"},
    "compacting": {"compacting"}, "requesting": {"working"}, "thinking": {"working"},
    # a call cut short: on disk it may have been a prompt; on stdout it is one exactly
    "running": {"working", "needs_approval"}, "awaiting_permission": {"needs_approval"},
}


def test_a_settled_file_reads_as_its_final_state_says(recording: Path) -> None:
    """One rule: once a file has settled, its live state is what
    ``reducer.facts.final_state`` says it ended in (every recording)."""
    from cctv.reducer.facts import final_state

    from conftest import fold_file

    feed = fold_file(recording)
    facts = live_facts(feed.session, ItemTimes(feed).at_line)
    grew = 1_800_000_000.0
    settled = live_state(facts, grew + SETTLED_AFTER_S + 1, grew)
    final = final_state(feed.session)
    if feed.session.limited_line is not None:  # a rate limit the CLI said is still on
        assert settled.kind == "rate_limited"
    else:
        assert settled.kind in AGREES[final], (final, settled)
