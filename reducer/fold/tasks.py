"""Tasks: background shells, sub-agents, monitors and workflows, by task_id,
from task_started / task_progress / task_updated / task_notification and the
background roster; a task's fate is shared with the call that started it.
"""

from __future__ import annotations

import re

from .. import frames as F
from ..notes import parse_task_notification, task_note_line
from ..state import MAIN, PromptItem, Task, TaskStatus, ToolCall, WorkflowAgent, WorkflowPhase
from .core import Core
from .turns import Turns

__all__ = ["Tasks"]

_TASK_NOTE = re.compile(r"<(task-id|tool-use-id|output-file|status|summary)>(.*?)</\1>", re.S)

_STATUSES: dict[str, TaskStatus] = {
    "pending": "pending", "running": "running", "paused": "running", "completed": "done",
    "failed": "failed", "killed": "interrupted", "stopped": "interrupted",
    "cancelled": "interrupted",
}
"""The CLI's words for a task's state (``task_updated.patch.status``,
``task_notification.status``) → its status; a word not listed here leaves
the task running."""


def _set_state(task: Task, state: str) -> None:
    """The task's latest frame says ``state`` (the CLI's word)."""
    task.state = state
    task.status = _STATUSES.get(state, "running")


_AGENT_STATES: dict[str, TaskStatus] = {"done": "done", **{
    k: v for k, v in _STATUSES.items() if v in ("failed", "interrupted")}}
"""A workflow agent's ``state`` → its status (``start``, ``progress``: running)."""


def _number(value: object) -> float | None:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _workflow(task: Task, steps: list[F.WorkflowStep]) -> None:
    """A workflow's latest progress snapshot: its phases and agents."""
    phases: list[WorkflowPhase] = []
    agents: list[WorkflowAgent] = []
    for step in steps:
        if not isinstance(step, dict):
            continue
        if step.get("type") == "workflow_phase":
            phases.append(WorkflowPhase(step.get("index"), str(step.get("title") or "")))
        elif step.get("type") == "workflow_agent":
            tokens = step.get("tokens")
            agents.append(WorkflowAgent(
                str(step.get("label") or step.get("agentId") or "agent"), step.get("phaseIndex"),
                _AGENT_STATES.get(str(step.get("state")), "running"),
                _number(step.get("durationMs")), tokens if type(tokens) is int else None))
    task.workflow_phases, task.workflow_agents = phases, agents


class Tasks:
    """The task table and its links to tool calls."""

    def __init__(self, core: Core, tasks: dict[str, Task], calls: dict[str, ToolCall],
                 turns: Turns) -> None:
        self._core = core
        self._calls = calls
        """The tool calls (kept by :class:`~reducer.fold.calls.Calls`): a
        backgrounded call shares its task's fate."""
        self._turns = turns
        self.tasks = tasks
        self.roster: list[str] = []
        """The ids of the background tasks the latest roster listed."""
        self._background_running: set[str] = set()
        """Ids of backgrounded tasks still running."""

    def running(self) -> list[Task]:
        """The tasks still running."""
        return [t for t in self.tasks.values() if t.running]

    def background_running(self) -> bool:
        """Whether a backgrounded task still runs."""
        return bool(self._background_running)

    # --- tasks -------------------------------------------------------------------------

    def _task(self, task_id: str, line_no: int) -> Task:
        task = self.tasks.get(task_id)
        if task is None:
            task = Task(task_id, started_line=line_no, started_at=self._core.now,
                        turn=self._core.turn_index())
            self.tasks[task_id] = task
        return task

    def _link_call(self, task: Task, tool_use_id: str | None) -> None:
        if not tool_use_id:
            return
        task.tool_use_id = task.tool_use_id or tool_use_id
        call = self._calls.get(tool_use_id)
        if call is not None:
            call.task_id = task.task_id
            if task.backgrounded:
                call.background = True
            if call.status == "pending":
                call.status = "running"
            self._sync_call(call, task)
            self._core.touch(call.item)

    def _sync_call(self, call: ToolCall, task: Task) -> None:
        """A backgrounded call shares its task's fate (one identity across the switch)."""
        if not call.background or task.running:
            return
        if call.status in ("running", "pending", "done"):
            call.status = task.status

    def _task_changed(self, task: Task) -> None:
        """``task`` changed: so may the sub-agent and the call it belongs to."""
        self._note_background(task)
        core = self._core
        if task.tool_use_id and task.total_tokens is not None:
            agent = core.agents.get(task.tool_use_id)
            if agent is not None and agent.total_tokens != task.total_tokens:
                agent.total_tokens = task.total_tokens  # a sub-agent's tokens are its task's usage
                core.agent_changed(agent.id)
        if task.tool_use_id:
            call = self._calls.get(task.tool_use_id)
            if call is not None:
                self._sync_call(call, task)
        core.task_changed(task)  # (and the card of its call)

    def _note_background(self, task: Task) -> None:
        if task.backgrounded and task.running:
            self._background_running.add(task.task_id)
        else:
            self._background_running.discard(task.task_id)

    def on_task_started(self, e: F.TaskStarted, agent: str) -> None:
        task = self._task(e.task_id, e.line_no)
        task.task_type = e.task_type or task.task_type
        task.description = e.description or task.description
        task.subagent_type = e.subagent_type or task.subagent_type
        if e.is_backgrounded is not None:
            task.backgrounded = bool(e.is_backgrounded)
        if task.running:
            task.status = "running"
        self._link_call(task, e.tool_use_id)
        if e.prompt:
            self._subagent_prompt(e.tool_use_id, e.prompt, e.line_no)
        if e.parent_task_id or e.spawn_depth is not None:
            self._nest(e)
        self._task_changed(task)

    def _nest(self, e: F.TaskStarted) -> None:
        """A sub-agent's task names the task that started it and its depth."""
        call = self._calls.get(e.tool_use_id or "")
        if call is None or not call.subagent:
            return
        parent_task = self.tasks.get(e.parent_task_id or "")
        parent_call = self._calls.get(parent_task.tool_use_id or "") if parent_task else None
        parent = parent_call.subagent if parent_call is not None else None
        self._core.nest(call.subagent, parent, e.spawn_depth)

    def _subagent_prompt(self, tool_use_id: str | None, prompt: str, line_no: int) -> None:
        """A sub-agent's task started with ``prompt``: the first item of its
        transcript (a background sub-agent's frames never come on stdout; a
        foreground one's own prompt frame then takes this item over)."""
        call = self._calls.get(tool_use_id or "")
        if call is None or not call.subagent:
            return
        core = self._core
        agent = core.agent_for(call.subagent)
        if not agent.items:
            core.add(PromptItem(agent.id, line_no, None, text=prompt))

    def on_task_progress(self, e: F.TaskProgress, agent: str) -> None:
        task = self._task(e.task_id, e.line_no)
        # progress frames describe the current step ("Reading utils.py"), not the task
        task.description = task.description or e.description
        task.activity = e.description or task.activity
        if e.usage is not None:
            task.total_tokens = e.usage.total_tokens
            task.tool_uses = e.usage.tool_uses
            task.duration_ms = e.usage.duration_ms
        task.last_tool = e.last_tool_name or task.last_tool
        task.summary = e.summary or task.summary
        if e.workflow_progress:
            _workflow(task, e.workflow_progress)
        self._link_call(task, e.tool_use_id)
        self._task_changed(task)

    def on_task_updated(self, e: F.TaskUpdated, agent: str) -> None:
        task = self._task(e.task_id, e.line_no)
        patch = e.patch
        if patch.status:
            _set_state(task, patch.status)
            if not task.running:
                task.ended_at = self._core.now
        if patch.description:
            task.description = patch.description
        if patch.end_time is not None:
            task.end_time = patch.end_time
        if patch.error:
            task.error = patch.error
        if patch.is_backgrounded is not None:
            task.backgrounded = patch.is_backgrounded
        self._task_changed(task)

    def on_task_notification(self, e: F.TaskNotification, agent: str) -> None:
        task = self._task(e.task_id, e.line_no)
        if self._core.current_turn() is None and self._turns.turns and e.status != "stopped":
            self._turns.start_next_by_task(e.summary or "")  # the model will answer it: a new turn
        _set_state(task, e.status or "completed")
        task.ended_at = self._core.now
        task.output_file = e.output_file or task.output_file
        task.summary = e.summary or task.summary
        if e.usage is not None:
            task.total_tokens = e.usage.total_tokens
            task.tool_uses = e.usage.tool_uses
            task.duration_ms = e.usage.duration_ms
        self._link_call(task, e.tool_use_id)
        self._task_changed(task)

    def on_background_tasks(self, e: F.BackgroundTasksChanged, agent: str) -> None:
        ids: list[str] = []
        for entry in e.tasks:
            task_id = str(entry.get("task_id") or "")
            if not task_id:
                continue
            ids.append(task_id)
            task = self._task(task_id, e.line_no)
            task.task_type = entry.get("task_type") or task.task_type
            task.description = entry.get("description") or task.description
            task.subagent_type = entry.get("subagent_type") or task.subagent_type
            task.backgrounded = True
            self._note_background(task)
        for task_id in set(self.roster) | set(ids):
            task = self.tasks.get(task_id)
            if task is not None:
                task.in_roster = task_id in ids
                self._core.task_changed(task)
        self.roster = ids

    def task_note(self, text: str, line_no: int) -> bool:
        """A ``<task-notification>`` on disk: fold it into its task and show it as one
        ``task`` notice (``a3a5… completed · 1,217 tokens · …``, the result as detail)."""
        note = parse_task_notification(text)
        if note is None:
            return False
        self.task_notification_text(text, line_no)
        task = self.tasks.get(note.task_id)
        if task is not None and note.total_tokens is not None:
            task.total_tokens, task.tool_uses = note.total_tokens, note.tool_uses
            task.duration_ms = note.duration_ms
            self._core.task_changed(task)
        level = {"failed": "error", "killed": "warning", "stopped": "warning"}.get(note.status, "info")
        self._core.notice(MAIN, line_no, "task", task_note_line(note), level, note.result or None)
        return True

    def task_notification_text(self, text: str, line_no: int) -> None:
        """On disk a background task's end is only a queued ``<task-notification>``
        prompt (no system/task_notification row): fold it like that frame."""
        fields = dict(_TASK_NOTE.findall(text))
        if fields.get("task-id"):
            call = self._calls.get(fields.get("tool-use-id") or "")
            if call is not None and call.background:  # its tool_result named the task
                self._task(fields["task-id"], line_no).backgrounded = True
            self.on_task_notification(F.TaskNotification(
                subtype="task_notification", task_id=fields["task-id"],
                tool_use_id=fields.get("tool-use-id"), status=fields.get("status") or "",
                output_file=fields.get("output-file"), summary=fields.get("summary"),
                line_no=line_no), MAIN)

    def tables(self) -> list[dict[str, Task]]:
        """The containers it made itself that grow with the session."""
        return [self.tasks]
