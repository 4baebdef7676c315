"""Turns and what the session is doing: a turn opens at a prompt and closes at
its ``result`` (or, on disk, its ``turn_duration``); status, thinking,
compactions, command lifecycles and conversation resets.
"""

from __future__ import annotations

from typing import Any

from .. import frames as F
from ..state import MAIN, CompactionItem, PromptItem, Turn, TurnFooterItem, TurnStart
from .calls import Calls
from .core import Core
from .info import Info
from .usage import Usage
from .values import word

__all__ = ["Turns"]

_EXITS = frozenset({"/exit", "/quit"})
"""The slash commands that end the session."""


class Turns:
    """Turn lifecycle and results, the session's status, session-level system frames."""

    def __init__(self, core: Core, turns: list[Turn], info: Info, usage: Usage,
                 calls: Calls) -> None:
        self._core = core
        self._info = info
        self._usage = usage
        self._calls = calls
        self.turns = turns
        self.status: str = "idle"
        """requesting | thinking | tool | compacting | idle (see
        :attr:`reducer.fold.Session.activity`)."""
        self.thinking_tokens = 0
        self.live_thinking_tokens = 0
        """Estimated tokens of the thinking block now streaming (0 when none)."""
        self._pending_thinking = 0
        self._pending_start: str | None = None
        """A background task's summary when its notification came between turns:
        the next turn is the one it started."""
        self.compactions: list[CompactionItem] = []
        self._last_compaction: CompactionItem | None = None
        self._awaiting_summary = False
        self.command_states: dict[str, str] = {}
        self.model_turns = 0
        """Model turns so far (local commands are prompts, not turns): the
        :attr:`~reducer.state.Turn.number` of the latest."""
        self.exited = False
        """The latest prompt was ``/exit`` (or ``/quit``): the user ended the
        session there (a later prompt, as a resumed session writes, clears it)."""
        self._prompt: PromptItem | None = None
        """The latest turn's prompt item (its label shows the turn's number)."""

    # --- opening and closing -----------------------------------------------------------------

    def open_turn(self, prompt: str | None, line_no: int, uuid: str | None = None,
                  images: tuple[Any, ...] = (), started_by: TurnStart | None = None,
                  context: tuple[str, ...] = ()) -> Turn:
        pending, self._pending_start = self._pending_start, None
        if started_by is None and pending is not None:
            started_by = "task-notification"
        turn = Turn(len(self.turns), prompt, line_no, session_id=self._info.session_id,
                    started_by=started_by)
        self.turns.append(turn)
        if started_by in ("prompt", "task-notification"):
            # the model is asked (a command's turn is one once it answers)
            self.model_turns += 1
            turn.number = self.model_turns
        core = self._core
        self._prompt = None
        if prompt is not None:
            self._prompt = PromptItem(MAIN, line_no, turn.index, uuid, text=prompt, images=images,
                                      context=context)
            core.add(self._prompt)
        elif started_by == "task-notification":
            summary = " ".join((pending or "a background task finished").split())
            core.notice(MAIN, line_no, "turn start", f"started by a background task: {summary}")
        self.exited = started_by == "command" and (prompt or "").split(" ", 1)[0] in _EXITS
        self.status = "requesting"
        core.session_changed()
        return turn

    def number(self, turn: Turn) -> None:
        """``turn`` is a model turn (the model answered, even after a local
        command's output): it gets the next number, once (its prompt, drawn
        before that was known, is drawn again)."""
        if turn.number is not None:
            return
        turn.local = False
        self.model_turns += 1
        turn.number = self.model_turns
        prompt = self._prompt
        if prompt is not None and prompt.turn == turn.index:
            self._core.touch(prompt)
        self._core.session_changed()

    def local_command(self, turn: Turn) -> None:
        """``turn`` was a local command's (``/model``, ``/compact``…): the CLI
        answered it itself, the model was not asked."""
        if turn.number is None:
            turn.local = True

    def ensure_turn(self, line_no: int) -> Turn:
        return self._core.current_turn() or self.open_turn(None, line_no)

    def start_next_by_task(self, summary: str) -> None:
        """A background task's notification came between turns: the next turn
        is the one it started (``summary``: what the task did)."""
        self._pending_start = summary

    def on_result(self, e: F.Result, agent: str) -> None:
        """``result``: the turn is over; its cost, usage, duration and outcome."""
        core = self._core
        turn = core.current_turn() or self.open_turn(None, e.line_no)
        if e.num_turns:
            turn.answered = True
        if e.local_command is not None or (e.num_turns == 0 and not e.is_error):
            self.local_command(turn)  # /compact: the model took no turn
        else:
            self.number(turn)
        self._usage.result(e, turn)
        turn.closed = True
        turn.end_line = e.line_no
        turn.is_error = e.is_error
        turn.subtype = word(e.subtype)
        turn.terminal_reason = word(e.terminal_reason)
        turn.stop_reason = word(e.stop_reason)
        turn.errors = list(e.errors or [])
        turn.duration_ms = e.duration_ms
        turn.num_turns = e.num_turns
        turn.local_command = e.local_command
        turn.result_text = e.result
        turn.api_error_status = e.api_error_status
        calls = self._calls
        for denial in e.permission_denials or ():
            calls.deny(denial.get("tool_use_id"), str(denial.get("tool_name") or ""),
                       "denied", e.line_no, denial, announce=False)
            turn.permission_denials.append(denial)
        aborted = e.is_error or (e.terminal_reason or "").startswith("aborted")
        if aborted:
            for call in calls.calls_of_turn(turn.index):
                if call.status in ("pending", "running") and not call.background:
                    call.status = "interrupted"
                    core.touch(call.item)
        self.status = "idle"
        self.live_thinking_tokens = 0
        self._pending_thinking = 0
        if not turn.local:
            core.add(TurnFooterItem(MAIN, e.line_no, turn.index, turn_ref=turn))
        core.session_changed()

    def _close_turn_on_disk(self, turn: Turn, line_no: int) -> None:
        """On disk there is no ``result``: ``turn_duration`` ends the turn."""
        if turn.closed:
            return
        turn.closed = True
        turn.end_line = line_no
        self.status = "idle"
        if not turn.local:
            self.number(turn)
            self._core.add(TurnFooterItem(MAIN, line_no, turn.index, turn_ref=turn))

    def on_turn_duration(self, e: F.TurnDuration, agent: str) -> None:
        turn = self._core.last_turn()
        if turn is not None and turn.duration_ms is None:
            turn.duration_ms = e.durationMs
            self._core.session_changed()
        if turn is not None and e.parentUuid is not None:
            self._close_turn_on_disk(turn, e.line_no)

    # --- thinking ----------------------------------------------------------------------------

    def on_thinking_tokens(self, e: F.ThinkingTokens, agent: str) -> None:
        delta = e.estimated_tokens_delta or 0
        self.thinking_tokens += delta
        self._pending_thinking += delta
        self.live_thinking_tokens = e.estimated_tokens or 0
        core = self._core
        turn = core.current_turn()
        if turn is None and core.source == MAIN and not e.parent_tool_use_id:
            # thinking can be a turn's first frame (a -p or stream-json prompt is not echoed)
            turn = self.ensure_turn(e.line_no)
        if turn is not None:
            turn.thinking_tokens += delta
        core.session_changed()

    def take_thinking(self) -> int:
        """A thinking block came whole: the tokens estimated while it streamed
        (none stream now)."""
        tokens = self._pending_thinking
        self._pending_thinking = 0
        self.live_thinking_tokens = 0
        return tokens

    # --- status and compaction ----------------------------------------------------------------

    def on_status(self, e: F.Status, agent: str) -> None:
        if e.permissionMode:
            self._info.permission_mode = e.permissionMode
        if e.status == "compacting":
            self.status = "compacting"
        elif e.status == "requesting":
            self.status = "requesting"
        elif e.status is None and self.status in ("compacting", "requesting"):
            self.status = "idle" if self._core.current_turn() is None else "requesting"
        core = self._core
        if e.compact_result == "failed":
            item = CompactionItem(MAIN, e.line_no, core.turn_index(), failed=True,
                                  error=e.compact_error or "compaction failed")
            core.add(item)
            self.compactions.append(item)
        core.session_changed()

    def on_compact_boundary(self, e: F.CompactBoundary, agent: str) -> None:
        core = self._core
        item = CompactionItem(
            MAIN, e.line_no, core.turn_index(),
            trigger=e.meta("trigger", "trigger"),
            pre_tokens=e.meta("pre_tokens", "preTokens"),
            post_tokens=e.meta("post_tokens", "postTokens"),
            duration_ms=e.meta("duration_ms", "durationMs"),
            uuid=e.uuid,
        )
        core.add(item)
        self.compactions.append(item)
        self._last_compaction = item
        self._awaiting_summary = True
        if item.post_tokens is not None:
            self._usage.context_tokens = item.post_tokens
        self._usage.compacted()
        core.session_changed()

    def compaction_summary(self, e: F.User, text: str) -> bool:
        """Whether the user row ``e`` (its text ``text``) is the summary of the
        latest compaction, which then holds it."""
        last = self._last_compaction
        if last is None:
            return False
        if self._awaiting_summary and e.synthetic:
            self._awaiting_summary = False
        elif not e.isCompactSummary:
            return False
        last.summary = text
        self._core.touch(last)
        return True

    # --- the session's own state --------------------------------------------------------------

    def on_session_state(self, e: F.SessionStateChanged, agent: str) -> None:
        if e.state == "idle" and self.status != "compacting":
            self.status = "idle"
        elif e.state == "running":
            self.status = "requesting"
        self._core.session_changed()

    def on_conversation_reset(self, e: F.ConversationReset, agent: str) -> None:
        self._usage.restart()
        if e.new_conversation_id:
            self._info.reset_to(e.new_conversation_id)
        self._core.notice(MAIN, e.line_no, "reset",
                          f"conversation reset ({e.trigger or 'clear'}): "
                          f"new session {e.new_conversation_id}")
        self._core.session_changed()

    def on_command_lifecycle(self, e: F.CommandLifecycle, agent: str) -> None:
        self.command_states[e.command_uuid] = e.state
        self._core.session_changed()

    def tables(self) -> list[list[Turn]]:
        """The containers it made itself that grow with the session."""
        return [self.turns]
