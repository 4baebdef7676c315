"""Hooks: runs from hook_started / hook_progress / hook_response (wire), hook
attachments and hook progress rows (disk), and stop-hook summaries;
queued-command attachments.
"""

from __future__ import annotations

from sys import intern

from .. import frames as F
from ..state import MAIN, HookItem, HookRun, HookStatus, StopSummaryItem
from .core import Core
from .tasks import Tasks
from .values import as_text, word

__all__ = ["Hooks"]

_OUTCOMES: dict[str, HookStatus] = {"success": "done", "error": "failed",
                                    "cancelled": "interrupted"}
"""``hook_response.outcome`` → the run's status."""


def _exit_status(exit_code: int | None, outcome: HookStatus) -> HookStatus:
    """A non-zero exit is a failed run, whatever else the frame says."""
    return "failed" if exit_code not in (0, None) else outcome


def _attachment_status(att: F.AttachmentBody) -> HookStatus:
    """A hook attachment's outcome: ``hook_cancelled`` is a timeout (failed) when
    it says ``timedOut``, else the user's interrupt; an ``…error`` type or a
    non-zero exit failed."""
    if att.type == "hook_cancelled":
        return "failed" if att.timedOut else "interrupted"
    return _exit_status(att.exitCode, "failed" if "error" in att.type else "done")


class Hooks:
    """Hook runs, each drawn as a chip in its turn."""

    def __init__(self, core: Core, tasks: Tasks) -> None:
        self._core = core
        self._tasks = tasks
        """For the task notifications queued commands carry."""
        self.hooks: dict[str, HookRun] = {}
        self.stop_summaries = 0

    # --- hooks -------------------------------------------------------------------------

    def _hook_run(self, e: F.HookStarted | F.HookProgress | F.HookResponse, agent: str) -> HookRun:
        """The run ``e`` reports on, made (with its chip) when this is its first frame."""
        hook = self.hooks.get(e.hook_id)
        if hook is None:
            core = self._core
            hook = HookRun(e.hook_id, intern(e.hook_name), intern(e.hook_event), e.line_no,
                           core.turn_index())
            self.hooks[e.hook_id] = hook
            hook.item = HookItem(agent, e.line_no, hook.turn, hook=hook)
            core.add(hook.item)
            turn = core.current_turn()
            if turn is not None:
                turn.hooks.append(e.hook_id)
        return hook

    def _hook_touched(self, hook: HookRun) -> None:
        core = self._core
        core.hook_changed(hook.hook_id)
        core.touch(hook.item)

    def on_hook_started(self, e: F.HookStarted, agent: str) -> None:
        self._hook_touched(self._hook_run(e, agent))

    def on_hook_progress(self, e: F.HookProgress, agent: str) -> None:
        hook = self._hook_run(e, agent)
        hook.progress += 1
        hook.stdout = e.stdout or hook.stdout
        hook.stderr = e.stderr or hook.stderr
        hook.output = e.output or hook.output
        self._hook_touched(hook)

    def on_hook_response(self, e: F.HookResponse, agent: str) -> None:
        hook = self._hook_run(e, agent)
        hook.status = _exit_status(e.exit_code, _OUTCOMES.get(e.outcome or "", "done"))
        hook.exit_code = e.exit_code
        hook.stdout = e.stdout or ""
        # mostly the same text as stdout: one string, not two (a restore makes each)
        hook.output = hook.stdout if e.output == e.stdout else e.output or ""
        hook.stderr = e.stderr or ""
        hook.end_line = e.line_no
        self._hook_touched(hook)

    def on_stop_hook_summary(self, e: F.StopHookSummary, agent: str) -> None:
        self.stop_summaries += 1
        core = self._core
        if core.source == MAIN and not e.isSidechain:
            # its parent_tool_use_id names the hook's tool use, not a sub-agent
            agent = MAIN
        turn = core.last_turn()
        if turn is not None and agent == MAIN:
            turn.stop_summaries += 1
        core.add(StopSummaryItem(agent, e.line_no, core.turn_index(), count=e.hookCount or 0,
                                 infos=list(e.hookInfos), errors=list(e.hookErrors),
                                 prevented=e.preventedContinuation, stop_reason=e.stopReason,
                                 level=e.level))

    def progress_row(self, e: F.Progress, agent: str) -> None:
        """CLI 2.1.14–2.1.42 wrote one ``progress/hook_progress`` row per hook it
        ran (and no attachment): a hook run whose outcome was not recorded."""
        data = e.data
        core = self._core
        hook_id = core.line_id(e.line_no)
        hook = HookRun(hook_id, word(data.hookName or data.hookEvent or "hook"),
                       word(data.hookEvent or ""),
                       e.line_no, core.turn_index())
        hook.status = "ran"
        hook.end_line = e.line_no
        hook.output = data.command or ""
        self.hooks[hook_id] = hook
        hook.item = HookItem(agent, e.line_no, hook.turn, hook=hook)
        core.add(hook.item)
        turn = core.current_turn()
        if turn is not None:
            turn.hooks.append(hook_id)
        core.hook_changed(hook_id)

    def on_attachment(self, e: F.Attachment, agent: str) -> None:
        att = e.attachment
        core = self._core
        if att.type.startswith("hook_"):
            hook_id = core.line_id(e.line_no)
            hook = HookRun(hook_id, word(att.hookName or att.type), word(att.hookEvent or ""),
                           e.line_no, core.turn_index())
            hook.status = _attachment_status(att)
            hook.end_line = e.line_no
            hook.exit_code = att.exitCode
            hook.stdout = att.stdout or ""
            hook.stderr = att.stderr or ""
            hook.output = as_text(att.content) if att.content is not None else ""
            self.hooks[hook_id] = hook
            hook.item = HookItem(agent, e.line_no, hook.turn, hook=hook)
            core.add(hook.item)
            core.hook_changed(hook_id)
        elif att.type == "queued_command":
            if isinstance(att.prompt, str) and "<task-notification>" in att.prompt \
                    and self._tasks.task_note(att.prompt, e.line_no):
                return
            core.notice(agent, e.line_no, "queued", as_text(att.content) or "queued command")

    def tables(self) -> list[dict[str, HookRun]]:
        """The containers it made itself that grow with the session."""
        return [self.hooks]
