"""Tool calls: a ``tool_use`` opens a call, its ``tool_result`` closes it;
permission requests and denials, heartbeats and progress in between.
"""

from __future__ import annotations

from typing import Any

import msgspec

from .. import frames as F
from ..state import MAIN, Agent, Item, Task, ToolCall, ToolItem, Turn
from ..timestamps import parse_timestamp
from .core import Core
from .values import block_text, word

__all__ = ["Calls", "SUBAGENT_TOOLS"]

SUBAGENT_TOOLS = frozenset({"Agent", "Task"})
"""Tool names whose call starts a sub-agent."""

_HEARTBEAT = "-heartbeat-"


class _ToolResultHead(msgspec.Struct, gc=False):
    """The few keys of a structured tool result the fold reads (one decode for all)."""

    backgroundTaskId: str | None = None
    agentId: str | None = None
    interrupted: bool | None = None
    status: str | None = None
    # its duration, under whichever name the tool wrote it (checked where read: a
    # wrong type there must not lose the keys above)
    durationMs: Any = None
    duration_ms: Any = None
    totalDurationMs: Any = None


_RESULT_HEAD = msgspec.json.Decoder(_ToolResultHead)


def _result_head(payload: msgspec.Raw | None) -> _ToolResultHead | None:
    if not payload:
        return None
    try:
        return _RESULT_HEAD.decode(payload)
    except msgspec.DecodeError:  # not an object (a string or a list)
        return None


def _looks_denied(text: str) -> bool:
    low = text.lower()
    return ("permission" in low and ("denied" in low or "not granted" in low
                                     or "haven't granted" in low or "rejected" in low)) \
        or "user doesn't want to proceed" in low or "the user denied" in low


def _duration(head: _ToolResultHead | None, start: float | None,
              end: float | None) -> float | None:
    """A finished call's duration: the result's own figure, else end minus start."""
    if head is not None:
        ms = head.durationMs if head.durationMs is not None else (
            head.duration_ms if head.duration_ms is not None else head.totalDurationMs)
        if isinstance(ms, (int, float)) and not isinstance(ms, bool) and ms >= 0:
            return ms / 1000
    if start is not None and end is not None and end >= start:
        return end - start
    return None


class Calls:
    """Tool calls and everything that reports on one."""

    def __init__(self, core: Core, calls: dict[str, ToolCall], turns: list[Turn],
                 tasks: dict[str, Task]) -> None:
        self._core = core
        self._turns = turns
        self._tasks = tasks
        """The tasks (kept by :class:`~reducer.fold.tasks.Tasks`): a call's result
        says whether it became a background task."""
        self.calls = calls
        self.permission_denials: list[dict[str, Any]] = []
        self.heartbeats = 0
        self._denied_ids: set[str] = set()
        self._calls_in_turn_order = True
        self._open_calls: dict[str, ToolCall] = {}
        """Calls that may still be open, in call order: finished, backgrounded and
        earlier turns' calls are dropped when :meth:`running_call` passes them,
        so asking is O(1) amortised however many calls a turn made."""

    # --- a call's life -----------------------------------------------------------------

    def tool_use(self, agent: Agent, block: F.Block, e: F.Assistant, turn: int | None) -> Item:
        """A ``tool_use`` block of the assistant frame ``e``: the call, and its card."""
        core = self._core
        calls = self.calls
        call_id = block.id or core.line_id(e.line_no)
        call = calls.get(call_id)
        if call is not None and call.item is not None:  # a repeat (resume copies rows)
            return call.item
        call = ToolCall(call_id, word(block.name or "?"), block.input, agent.id, turn, e.line_no,
                        started_at=parse_timestamp(e.timestamp) or core.now)
        if call_id in calls:  # replaces a call left half-made by a failed fold
            self._calls_in_turn_order = False
        calls[call_id] = call
        self._open_calls[call_id] = call
        agent.tool_calls += 1
        agent.last_tool = call.name
        if agent.id != MAIN:
            self.touch_agent_call(agent.id)
        cur = core.current_turn()
        if cur is not None and agent.id == MAIN:
            cur.tool_calls += 1
        if call.name in SUBAGENT_TOOLS:
            call.subagent = call_id
            if core.source == MAIN:
                core.agent_call_made(call)
        if call_id in self._denied_ids:
            call.status = "denied"
        item = ToolItem(agent.id, e.line_no, turn, e.uuid, call=call)
        call.item = item
        core.add(item)
        return item

    def touch_agent_call(self, agent_id: str) -> None:
        """A sub-agent did something: redraw the card of the call that started it."""
        call = self.calls.get(agent_id)
        if call is not None:
            if call.status == "pending":
                call.status = "running"
            self._core.touch(call.item)

    def tool_result(self, block: F.Block, payload: msgspec.Raw | None, e: F.User,
                    agent_id: str) -> None:
        """A ``tool_result`` block of the user frame ``e`` (``payload``: the
        frame's structured result, when it is this block's): the call is over."""
        core = self._core
        call_id = block.tool_use_id or ""
        call = self.calls.get(call_id)
        if call is None:
            # a result whose call we never saw (history cut, or a resumed session)
            call = ToolCall(call_id, "?", None, agent_id, core.turn_index(), e.line_no)
            self.calls[call_id] = call
            self._open_calls[call_id] = call
            call.item = ToolItem(agent_id, e.line_no, call.turn, e.uuid, call=call)
            core.add(call.item)
        call.result = block.content
        result_at = parse_timestamp(e.timestamp) or core.now
        asked = call.awaiting_permission
        call.awaiting_permission = False
        call.is_error = bool(block.is_error)
        call.result_line_no = e.line_no
        call.result_payload = payload
        head = _result_head(payload)
        text = block_text(block.content) if call.is_error else ""
        if head is not None and head.agentId and call.subagent:
            core.agent_file_ids[head.agentId] = call.id
            core.agent_for(call.id).agent_file_id = head.agentId
        if call.status == "denied" or call_id in self._denied_ids:
            call.status = "denied"
        elif (head is not None and head.interrupted) or text.startswith("[Request interrupted"):
            call.status = "interrupted"
        elif call.is_error:
            call.status = "failed"
            # an error straight after the CLI asked for permission is the refusal
            if asked or _looks_denied(text):
                call.status = "denied"
                call.denied_reason = text
        else:
            task = self._tasks.get(call.task_id) if call.task_id else None
            if head is not None and head.backgroundTaskId:
                call.background = True
                call.task_id = call.task_id or head.backgroundTaskId
                task = self._tasks.get(call.task_id)
            if task is not None and task.backgrounded:
                call.background = True
            if call.background and (task is None or task.running):
                call.status = "running"
            else:
                call.status = "done"
        if call.duration is None and not call.background:  # a background call's time is its task's
            call.duration = _duration(head, call.started_at, result_at)
        if call.status == "failed":
            turn = core.current_turn()
            if turn is not None:
                turn.failed_calls += 1
        if call.subagent and call.subagent in core.agents:
            sub = core.agents[call.subagent]
            if call.status != "running":
                sub.status = call.status
                core.changed("agent_updated", call.subagent)
        core.touch(call.item)

    def interrupted(self, line_no: int) -> None:
        """``[Request interrupted by user…]``: the turn's calls that were cut
        short are interrupted; a refusal text the CLI wrote for them (\"the
        user doesn't want to proceed\") was the interrupt, not a denial."""
        turn = self._core.current_turn()
        if turn is None:
            return
        for call in self.calls_of_turn(turn.index):
            if call.background:
                continue
            if not call.finished or (call.status == "denied" and call.id not in self._denied_ids
                                     and call.result_line_no is not None
                                     and line_no - call.result_line_no <= 2):
                call.status = "interrupted"
                call.denied_reason = None
                self._core.touch(call.item)

    # --- permission -----------------------------------------------------------------------

    def on_control_request(self, e: F.ControlRequest, agent: str) -> None:
        """``can_use_tool``: the CLI asks the host for permission; the call waits
        until its result (allowed or denied) or a sign that it runs."""
        request = e.request
        if request.get("subtype") != "can_use_tool":
            return
        call = self.calls.get(str(request.get("tool_use_id") or ""))
        if call is not None and not call.finished:
            call.awaiting_permission = True
            self._core.touch(call.item)
            self._core.changed("session")

    def deny(self, tool_use_id: str | None, tool_name: str, reason: str, line_no: int,
             record: dict[str, Any], announce: bool = True) -> None:
        if tool_use_id and tool_use_id in self._denied_ids:
            return
        if tool_use_id:
            self._denied_ids.add(tool_use_id)
        self.permission_denials.append(record)
        core = self._core
        call = self.calls.get(tool_use_id or "")
        if call is not None:
            if call.status == "failed" and call.turn is not None and call.turn < len(self._turns):
                turn = self._turns[call.turn]  # counted as failed when its error result came
                turn.failed_calls = max(turn.failed_calls - 1, 0)
            call.status = "denied"
            call.denied_reason = call.denied_reason or reason
            core.touch(call.item)
        if announce and call is None:  # a known call shows its denial itself, once
            core.notice(MAIN, line_no, "permission denied",
                        f"permission denied: {tool_name} {reason}".rstrip(), level="warning")
        core.changed("session")

    def on_permission_denied(self, e: F.PermissionDenied, agent: str) -> None:
        self.deny(e.tool_use_id, e.tool_name, e.message or e.decision_reason or "",
                  e.line_no, {"tool_name": e.tool_name, "tool_use_id": e.tool_use_id})

    # --- heartbeats and progress -----------------------------------------------------------

    def on_tool_progress(self, e: F.ToolProgress, agent: str) -> None:
        tid = e.tool_use_id
        if e.subagent_retry:
            retry = e.subagent_retry
            self._core.notice(agent, e.line_no, "api retry",
                              f"sub-agent API retry {retry.get('attempt')}/{retry.get('max_retries')}",
                              level="warning")
            return
        if _HEARTBEAT in tid:
            self.heartbeats += 1
            target = e.parent_tool_use_id or tid.rsplit(_HEARTBEAT, 1)[0]
            call = self.calls.get(target)
            if call is None:
                return
            if tid.startswith("hook-"):
                call.hook_heartbeats += 1
            else:
                call.heartbeats += 1
                call.elapsed = e.elapsed_time_seconds
                if call.status == "pending":
                    call.status = "running"
            self._core.touch(call.item)
            return
        call = self.calls.get(tid)
        if call is not None:
            call.elapsed = e.elapsed_time_seconds
            if call.status == "pending":
                call.status = "running"
            self._core.touch(call.item)

    def progress_row(self, e: F.Progress) -> None:
        """An on-disk ``progress`` row that is not a hook's: bash progress acts
        as a heartbeat of its call; the rest are skipped."""
        data = e.data
        if data.type in ("bash_progress", "powershell_progress", "tool_heartbeat"):
            call = self.calls.get(e.toolUseID or e.parentToolUseID or "")
            if call is not None:
                self.heartbeats += 1
                call.heartbeats += 1
                call.elapsed = data.elapsedTimeSeconds
                self._core.touch(call.item)

    # --- asking -----------------------------------------------------------------------------

    def calls_of_turn(self, index: int) -> list[ToolCall]:
        """The calls made in turn ``index``, in the order of :attr:`calls`.

        A call's turn is the last turn when it is made and turns only grow, so
        :attr:`calls` is in turn order and a turn's calls are found by walking
        back from the end until another turn's; O(calls of the turn) instead
        of O(all calls). Only if a call was ever replaced in place (a fold that
        failed half-way, then the same id again) is the order not guaranteed,
        and then all calls are scanned."""
        if not self._calls_in_turn_order:
            return [c for c in self.calls.values() if c.turn == index]
        out: list[ToolCall] = []
        for call in reversed(self.calls.values()):
            if call.turn != index:
                break
            out.append(call)
        out.reverse()
        return out

    def running_call(self, turn: int) -> ToolCall | None:
        """The latest call of turn ``turn`` still running in the foreground, if
        any; the calls passed on the way that are over are forgotten."""
        open_calls = self._open_calls
        closed: list[str] = []
        found: ToolCall | None = None
        for call_id, call in reversed(open_calls.items()):
            if call.turn != turn:
                if call.turn is not None and call.turn < turn:
                    closed.append(call_id)
                break
            if call.finished or call.background:
                closed.append(call_id)
            else:
                found = call
                break
        for call_id in closed:
            del open_calls[call_id]
        return found

    def tables(self) -> list[dict[str, ToolCall]]:
        """The containers it made itself that grow with the session."""
        return [self.calls, self._open_calls]
