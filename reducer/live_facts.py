"""What the fold says a session is doing when what was read ends: the
clock-free half of its live state (:mod:`reducer.live_state` adds the clock).

It builds on :func:`reducer.facts.final_state` (what a settled file reads on
every surface) and on the fold's activity: the two differ only while a turn
looks over but may go on (the model's text is the last row and the CLI wrote
no stop reason), which :attr:`LiveFacts.settles_to` keeps for when the file
has settled. Pure: no Textual, no I/O."""

from __future__ import annotations

from collections.abc import Callable
from typing import assert_never

from msgspec.structs import replace

from .facts import final_state
from .fold import SUBAGENT_TOOLS, Session
from .format import clip
from .live_state import LiveFacts, Phase
from .queries import canonical_tool
from .state import ToolCall
from .tools import tool_summary

__all__ = ["NEVER_ASK", "live_facts"]

NEVER_ASK = SUBAGENT_TOOLS | {"Read", "Glob", "Grep", "LS", "NotebookRead", "TodoWrite",
                              "BashOutput", "TaskOutput"}
"""Tools the CLI runs without asking (read-only ones, its own to-do list, a
sub-agent, whose own calls ask): a quiet one is a slow one."""

_DOING_WIDTH = 48
"""Characters of a call's summary kept in an activity (``Bash: npm test``)."""


def live_facts(session: Session, time_of: Callable[[int], float | None]) -> LiveFacts:
    """What ``session`` was doing when its input ends; ``time_of(line)``: the
    time (epoch seconds) of a line of its main file, ``None`` when unknown."""
    last_at = time_of(session.lines)
    turn = session.current_turn or (session.turns[-1] if session.turns else None)
    started = time_of(turn.line_no) if turn is not None else None
    base = LiveFacts(phase="turn_over", last_at=last_at, streamed=session.format == "stream-json",
                     background=sum(1 for t in session.running_tasks if t.backgrounded))
    final = final_state(session)
    if final == "ended":  # /exit
        return replace(base, phase="exited", since=started)
    limited = session.limited_line
    if limited is not None and (turn is None or limited >= turn.line_no):
        return replace(base, phase="rate_limited", since=time_of(limited),
                       resets_at=session.rate_limit_state.resets_at)
    activity = session.activity
    match activity.kind:
        case "compacting":
            return replace(base, phase="compacting", since=last_at)
        case "idle" | "background":
            return replace(base, since=time_of(_turn_end(session)))
        case "requesting" | "thinking":
            phase: Phase = "thinking" if activity.kind == "thinking" else "generating"
            over = final in ("idle", "background")  # the model's last text, and no stop reason
            return replace(base, phase=phase, since=started,
                           settles_to="turn_over" if over else None)
        case "running" | "awaiting_permission":
            call = session.calls.get(activity.call_id or "")
            if call is None:
                return replace(base, phase="generating", since=started)
            return _call_facts(base, call, activity.kind == "awaiting_permission", started, time_of)
        case _:
            assert_never(activity.kind)


def _call_facts(base: LiveFacts, call: ToolCall, asked: bool, started: float | None,
                time_of: Callable[[int], float | None]) -> LiveFacts:
    """The facts of a turn (which began at ``started``) waiting on ``call``
    (``asked``: the CLI asked the host for permission, which it waits on since
    the call)."""
    made = call.started_at if call.started_at is not None else time_of(call.line_no)
    return replace(
        base, phase="approval" if asked else "tool", since=made if asked else started,
        tool=call.name, doing=clip(tool_summary(canonical_tool(call)), _DOING_WIDTH, one_line=True),
        call_at=made, call_elapsed=call.elapsed,
        may_ask=call.name not in NEVER_ASK and call.subagent is None)


def _turn_end(session: Session) -> int:
    """The line the latest turn ended at: its result or ``turn_duration``, else
    the last item of the main transcript."""
    turn = session.turns[-1] if session.turns else None
    if turn is not None and turn.end_line is not None:
        return turn.end_line
    items = session.main.items
    return items[-1].line_no if items else session.lines
