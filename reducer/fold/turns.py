"""Turns and the session's own state: a turn opens at a prompt and closes at
its ``result`` (or, on disk, its ``turn_duration``); init, status, compaction,
thinking, cost and session resets.
"""

from __future__ import annotations

from typing import Any

from .. import frames as F
from ..state import MAIN, CompactionItem, PromptItem, Turn, TurnFooterItem, TurnStart
from .kernel import Kernel, usage_totals, word

__all__ = ["Turns"]


class Turns(Kernel):
    """Turn lifecycle, results and cost, session-level system frames."""

    def _open_turn(self, prompt: str | None, line_no: int, uuid: str | None = None,
                   images: tuple[Any, ...] = (), started_by: TurnStart | None = None,
                   context: tuple[str, ...] = ()) -> Turn:
        pending, self._pending_start = self._pending_start, None
        if started_by is None and pending is not None:
            started_by = "task-notification"
        turn = Turn(len(self.turns), prompt, line_no, session_id=self.session_id,
                    started_by=started_by)
        self.turns.append(turn)
        if prompt is not None:
            self._add(PromptItem(MAIN, line_no, turn.index, uuid, text=prompt, images=images,
                                 context=context))
        elif started_by == "task-notification":
            summary = " ".join((pending or "a background task finished").split())
            self._notice(MAIN, line_no, "turn start", f"started by a background task: {summary}")
        self.status = "requesting"
        self._changed("session")
        return turn

    def _ensure_turn(self, line_no: int) -> Turn:
        return self.current_turn or self._open_turn(None, line_no)

    def _init(self, e: F.Init, agent: str) -> None:
        self.cwd = e.cwd or self.cwd
        self.model = e.model or self.model
        self.cli_version = e.claude_code_version or self.cli_version
        self.permission_mode = e.permissionMode or self.permission_mode
        self.tools = e.tools or self.tools
        self.mcp_servers = e.mcp_servers or self.mcp_servers
        if e.session_id and e.session_id != self.session_id:
            if self.session_id is None:
                self.session_id = e.session_id
        self._changed("session")

    def _status(self, e: F.Status, agent: str) -> None:
        if e.permissionMode:
            self.permission_mode = e.permissionMode
        if e.status == "compacting":
            self.status = "compacting"
        elif e.status == "requesting":
            self.status = "requesting"
        elif e.status is None and self.status in ("compacting", "requesting"):
            self.status = "idle" if self.current_turn is None else "requesting"
        if e.compact_result == "failed":
            item = CompactionItem(MAIN, e.line_no, self._turn_index(MAIN), failed=True,
                                  error=e.compact_error or "compaction failed")
            self._add(item)
            self.compactions.append(item)
        self._changed("session")

    def _compact_boundary(self, e: F.CompactBoundary, agent: str) -> None:
        item = CompactionItem(
            MAIN, e.line_no, self._turn_index(MAIN),
            trigger=e.meta("trigger", "trigger"),
            pre_tokens=e.meta("pre_tokens", "preTokens"),
            post_tokens=e.meta("post_tokens", "postTokens"),
            duration_ms=e.meta("duration_ms", "durationMs"),
            uuid=e.uuid,
        )
        self._add(item)
        self.compactions.append(item)
        self._last_compaction = item
        self._awaiting_summary = True
        if item.post_tokens is not None:
            self.context_tokens = item.post_tokens
        self._changed("session")

    # --- results and cost ----------------------------------------------------------------

    def _result(self, e: F.Result, agent: str) -> None:
        """``result``: the turn is over; its cost, usage, duration and outcome."""
        self.results += 1
        self.last_result = e
        turn = self.current_turn or self._open_turn(None, e.line_no)
        if e.num_turns:
            turn.answered = True
        total = e.total_cost_usd
        if total is not None:
            if total < self._cost_last:  # a new query() run: its total starts again
                self._cost_base += self._cost_last
                self._api_last = 0.0  # and so does its API time
            turn.cost_usd = max(total - self._cost_last, 0.0) if total >= self._cost_last else total
            self._cost_last = total
            self.cost_usd = self._cost_base + total
        usage = usage_totals(e.usage)
        turn.usage = usage
        self.result_usage.add(usage)
        if e.modelUsage:
            self.model_usage = e.modelUsage  # (a turn's own is in its result: end_line)
            for mu in e.modelUsage.values():
                window = mu.get("contextWindow") if isinstance(mu, dict) else None
                if window:
                    self.context_window = window
        turn.closed = True
        turn.end_line = e.line_no
        turn.is_error = e.is_error
        turn.subtype = word(e.subtype)
        turn.terminal_reason = word(e.terminal_reason)
        turn.stop_reason = word(e.stop_reason)
        turn.errors = list(e.errors or [])
        turn.duration_ms = e.duration_ms
        api = e.duration_api_ms
        turn.api_total_ms = api
        if api:  # the query's running total: this turn's share is what it added
            turn.duration_api_ms = api - self._api_last if api >= self._api_last else api
            self._api_last = api
        else:
            turn.duration_api_ms = api
        turn.num_turns = e.num_turns
        turn.local_command = e.local_command
        turn.result_text = e.result
        self.is_error = e.is_error
        for denial in e.permission_denials or ():
            self._deny(denial.get("tool_use_id"), str(denial.get("tool_name") or ""),
                       "denied", e.line_no, denial, announce=False)
            turn.permission_denials.append(denial)
        aborted = e.is_error or (e.terminal_reason or "").startswith("aborted")
        if aborted:
            for call in self._calls_of_turn(turn.index):
                if call.status in ("pending", "running") and not call.background:
                    call.status = "interrupted"
                    self._touch(call.item)
        self.status = "idle"
        self.live_thinking_tokens = 0
        self._pending_thinking = 0
        self._add(TurnFooterItem(MAIN, e.line_no, turn.index, turn_ref=turn))
        self._changed("session")

    def _close_turn_on_disk(self, turn: Turn, line_no: int) -> None:
        """On disk there is no ``result``: ``turn_duration`` ends the turn."""
        if turn.closed:
            return
        turn.closed = True
        turn.end_line = line_no
        self.status = "idle"
        self._add(TurnFooterItem(MAIN, line_no, turn.index, turn_ref=turn))

    def _thinking_tokens(self, e: F.ThinkingTokens, agent: str) -> None:
        delta = e.estimated_tokens_delta or 0
        self.thinking_tokens += delta
        self._pending_thinking += delta
        self.live_thinking_tokens = e.estimated_tokens or 0
        turn = self.current_turn
        if turn is None and self._source == MAIN and not e.parent_tool_use_id:
            # thinking can be a turn's first frame (a -p or stream-json prompt is not echoed)
            turn = self._ensure_turn(e.line_no)
        if turn is not None:
            turn.thinking_tokens += delta
        self._changed("session")

    def _turn_duration(self, e: F.TurnDuration, agent: str) -> None:
        turn = self.turns[-1] if self.turns else None
        if turn is not None and turn.duration_ms is None:
            turn.duration_ms = e.durationMs
            self._changed("session")
        if turn is not None and e.parentUuid is not None:
            self._close_turn_on_disk(turn, e.line_no)

    def _session_state(self, e: F.SessionStateChanged, agent: str) -> None:
        if e.state == "idle" and self.status != "compacting":
            self.status = "idle"
        elif e.state == "running":
            self.status = "requesting"
        self._changed("session")

    def _conversation_reset(self, e: F.ConversationReset, agent: str) -> None:
        self._cost_base += self._cost_last
        self._cost_last = 0.0
        if e.new_conversation_id:
            self.session_id = e.new_conversation_id
            if e.new_conversation_id not in self._session_id_set:
                self._add_session_id(e.new_conversation_id)
        self._notice(MAIN, e.line_no, "reset",
                     f"conversation reset ({e.trigger or 'clear'}): new session {e.new_conversation_id}")
        self._changed("session")

    def _cost_state(self, e: F.CostState, agent: str) -> None:
        if e.totalCostUSD is not None and not self.results:
            self.cost_usd = e.totalCostUSD
            if e.modelUsage:
                self.model_usage = e.modelUsage
            self._changed("session")

    def _command_lifecycle(self, e: F.CommandLifecycle, agent: str) -> None:
        self.command_states[e.command_uuid] = e.state
        self._changed("session")
