"""Hooks: runs from hook_started / hook_progress / hook_response (wire), hook
attachments (disk), and stop-hook summaries; queued-command attachments.
"""

from __future__ import annotations

from sys import intern

from .. import frames as F
from ..state import MAIN, HookItem, HookRun, StopSummaryItem
from .kernel import Kernel, as_text, word

__all__ = ["Hooks"]


class Hooks(Kernel):
    """Hook runs, each drawn as a chip in its turn."""

    # --- hooks -------------------------------------------------------------------------

    def _hook_run(self, e: F.HookStarted | F.HookProgress | F.HookResponse, agent: str) -> HookRun:
        """The run ``e`` reports on, made (with its chip) when this is its first frame."""
        hook = self.hooks.get(e.hook_id)
        if hook is None:
            hook = HookRun(e.hook_id, intern(e.hook_name), intern(e.hook_event), e.line_no,
                           self._turn_index(agent))
            self.hooks[e.hook_id] = hook
            hook.item = HookItem(agent, e.line_no, hook.turn, hook=hook)
            self._add(hook.item)
            turn = self.current_turn
            if turn is not None:
                turn.hooks.append(e.hook_id)
        return hook

    def _hook_touched(self, hook: HookRun) -> None:
        self._changed("hook", None, -1, hook.hook_id)
        self._touch(hook.item)

    def _hook_started(self, e: F.HookStarted, agent: str) -> None:
        self._hook_touched(self._hook_run(e, agent))

    def _hook_progress(self, e: F.HookProgress, agent: str) -> None:
        hook = self._hook_run(e, agent)
        hook.progress += 1
        hook.stdout = e.stdout or hook.stdout
        hook.stderr = e.stderr or hook.stderr
        hook.output = e.output or hook.output
        self._hook_touched(hook)

    def _hook_response(self, e: F.HookResponse, agent: str) -> None:
        hook = self._hook_run(e, agent)
        hook.status = word(e.outcome) or ("success" if e.exit_code in (0, None) else "error")
        hook.exit_code = e.exit_code
        hook.stdout = e.stdout or ""
        # mostly the same text as stdout: one string, not two (a restore makes each)
        hook.output = hook.stdout if e.output == e.stdout else e.output or ""
        hook.stderr = e.stderr or ""
        self._hook_touched(hook)

    def _stop_hook_summary(self, e: F.StopHookSummary, agent: str) -> None:
        self.stop_summaries += 1
        if self._source == MAIN and not e.isSidechain:
            # its parent_tool_use_id names the hook's tool use, not a sub-agent
            agent = MAIN
        turn = self.turns[-1] if self.turns else None
        if turn is not None and agent == MAIN:
            turn.stop_summaries += 1
        self._add(StopSummaryItem(agent, e.line_no, self._turn_index(agent), count=e.hookCount or 0,
                                  infos=list(e.hookInfos), errors=list(e.hookErrors),
                                  prevented=e.preventedContinuation, stop_reason=e.stopReason,
                                  level=e.level))

    def _hook_progress_row(self, e: F.Progress, agent: str) -> None:
        """CLI 2.1.14–2.1.42 wrote one ``progress/hook_progress`` row per hook it
        ran (and no attachment): a hook run whose outcome was not recorded."""
        data = e.data
        hook_id = self._line_id(e.line_no)
        hook = HookRun(hook_id, word(data.hookName or data.hookEvent or "hook"),
                       word(data.hookEvent or ""),
                       e.line_no, self._turn_index(agent))
        hook.status = "ran"
        hook.output = data.command or ""
        self.hooks[hook_id] = hook
        hook.item = HookItem(agent, e.line_no, hook.turn, hook=hook)
        self._add(hook.item)
        turn = self.current_turn
        if turn is not None:
            turn.hooks.append(hook_id)
        self._changed("hook", None, -1, hook_id)

    def _attachment(self, e: F.Attachment, agent: str) -> None:
        att = e.attachment
        if att.type.startswith("hook_"):
            hook_id = self._line_id(e.line_no)
            hook = HookRun(hook_id, word(att.hookName or att.type), word(att.hookEvent or ""),
                           e.line_no, self._turn_index(agent))
            hook.status = "error" if "error" in att.type else "success"
            hook.exit_code = att.exitCode
            hook.stdout = att.stdout or ""
            hook.stderr = att.stderr or ""
            hook.output = as_text(att.content) if att.content is not None else ""
            self.hooks[hook_id] = hook
            hook.item = HookItem(agent, e.line_no, hook.turn, hook=hook)
            self._add(hook.item)
            self._changed("hook", None, -1, hook_id)
        elif att.type == "queued_command":
            if isinstance(att.prompt, str) and "<task-notification>" in att.prompt \
                    and self._task_note(att.prompt, e.line_no):
                return
            self._notice(agent, e.line_no, "queued", as_text(att.content) or "queued command")
