"""The tasks panel's rows, read from the session: no Textual in here.

:func:`task_rows` builds every row of a session at once; :class:`TaskRowCache`
keeps them up to date from the fold's change records, so a refresh rebuilds
only the rows that changed (and the running ones, whose elapsed time moves)
instead of every task and sub-agent the session ever had.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterable
from dataclasses import dataclass, fields, replace
from typing import Any, assert_never

from cctv.reducer.costs import AgentMemo, Cost, cost_text
from cctv.reducer.safe import visible
from cctv.reducer.facts import agent_entry, agent_task, duration_moves, task_entry, task_owner, tasks_by_call
from cctv.reducer.fold import Session
from cctv.reducer.state import (
    MAIN,
    Agent,
    AgentAdded,
    AgentChanged,
    CallStatus,
    Change,
    HookChanged,
    ItemAdded,
    ItemUpdated,
    SessionChanged,
    Task,
    TaskChanged,
    TaskStatus,
    ToolItem,
    WorkflowAgent,
)

__all__ = ["KIND_ORDER", "KIND_LABELS", "Phase", "TaskRow", "TaskRowCache", "sort_key", "task_rows"]

KIND_ORDER = ("agent", "workflow", "shell", "monitor", "other")
KIND_LABELS = {"agent": "agent", "workflow": "workflow", "shell": "shell", "monitor": "monitor"}


@dataclass(frozen=True, slots=True)
class Phase:
    """One line under a workflow: a phase heading or one of its agents."""

    depth: int
    label: str
    status: TaskStatus | None = None
    elapsed: float | None = None
    tokens: int | None = None


@dataclass(frozen=True, slots=True)
class TaskRow:
    """One row of the panel, as read from the session (no Textual in here)."""

    key: str
    """Option id: ``"agent:<agent id>"`` for a sub-agent, else ``"task:<task id>"``."""
    kind: str
    """``agent``, ``workflow``, ``shell``, ``monitor`` or ``other``."""
    kind_label: str
    status: TaskStatus | CallStatus
    state: str | None
    """The CLI's own word for the task's state (``killed``, ``stopped``…), when it said one."""
    description: str
    subagent_type: str | None = None
    elapsed: float | None = None
    last_tool: str | None = None
    tokens: int | None = None
    tokens_are_output: bool = False
    tool_uses: int | None = None
    cost: str = ""
    """A sub-agent's cost (``~$0.12``; with the agents it started: ``~$0.12 (all ~$0.30)``)."""
    activity: str | None = None
    """What a running task says it is doing (its latest task_progress step)."""
    summary: str | None = None
    output_file: str | None = None
    error: str | None = None
    agent_id: str | None = None
    """Set when the row opens a sub-agent transcript."""
    task_id: str | None = None
    """The task it shows (a sub-agent's: the task it ran as, if any)."""
    depth: int = 0
    phases: tuple[Phase, ...] = ()
    started_line: int = 0

    @property
    def running(self) -> bool:
        return self.status in ("running", "pending")


def _phases(task: Task) -> tuple[Phase, ...]:
    """A workflow's phases, each followed by its agents; agents of no phase last."""
    phases, agents = task.workflow_phases or (), task.workflow_agents or ()
    out: list[Phase] = []
    seen: set[int] = set()
    for phase in phases:
        out.append(Phase(1, f"phase {phase.index} · {phase.title}".rstrip(" ·")))
        for i, agent in enumerate(agents):
            if agent.phase == phase.index:
                seen.add(i)
                out.append(_workflow_agent(agent, 2))
    out += [_workflow_agent(a, 1) for i, a in enumerate(agents) if i not in seen]
    return tuple(out)


def _workflow_agent(agent: WorkflowAgent, depth: int) -> Phase:
    return Phase(depth, agent.label, agent.status,
                 agent.duration_ms / 1000 if agent.duration_ms is not None else None,
                 agent.tokens)


_AGENTS = AgentMemo()
"""Each sub-agent's own and subtree cost, worked out once per change of the session's requests."""


def _agent_cost(session: Session, agent_id: str) -> str:
    """``~$0.12``, and ``(all ~$0.30)`` with the agents it started; ``""``: no cost known."""
    spent = _AGENTS.figures(session)
    figures = spent.get(agent_id) if spent is not None else None
    if figures is None or figures.cost_usd is None:
        return ""
    own = cost_text(Cost(figures.cost_usd, figures.cost_source))
    tree = cost_text(Cost(figures.subtree_cost_usd, "estimated"))
    return own if tree == own else f"{own} (all {tree})"


def _agent_row(session: Session, agent: Agent, task: Task | None,
               now: float | None) -> TaskRow:
    entry = agent_entry(session, agent, task, now)
    return TaskRow(
        key=entry.key,
        kind="agent",
        kind_label="agent",
        status=entry.status,
        state=entry.state,
        description=entry.description,
        subagent_type=entry.subagent_type,
        elapsed=entry.duration_s,
        last_tool=entry.last_tool,
        tokens=entry.tokens,
        tokens_are_output=entry.tokens_are_output,
        tool_uses=entry.tool_uses,
        cost=_agent_cost(session, agent.id),
        activity=task.activity if task else None,
        summary=task.summary if task else None,
        output_file=task.output_file if task else None,
        error=task.error if task else None,
        agent_id=agent.id,
        task_id=entry.task_id,
        depth=entry.depth,
        started_line=entry.started_line,
    )


def _task_row(session: Session, task: Task, now: float | None) -> TaskRow:
    entry = task_entry(session, task, now)
    return TaskRow(
        key=entry.key,
        kind=entry.kind,
        kind_label=KIND_LABELS.get(entry.kind, (task.task_type or "task").removeprefix("local_")[:8]),
        status=entry.status,
        state=entry.state,
        description=entry.description,
        subagent_type=entry.subagent_type,
        elapsed=entry.duration_s,
        last_tool=entry.last_tool,
        tokens=entry.tokens,
        tool_uses=entry.tool_uses,
        activity=task.activity,
        summary=task.summary,
        output_file=task.output_file,
        error=task.error,
        task_id=task.task_id,
        phases=_phases(task),
        started_line=entry.started_line,
    )


def task_rows(session: Session, now: float | None = None) -> list[TaskRow]:
    """Every sub-agent and task of ``session`` as rows: running ones first,
    then by kind (agents, workflows, shells, monitors, others), then by start."""
    return _rows(session, now, tasks_by_call(session))


def _rows(session: Session, now: float | None, by_call: dict[str, str],
          shown: Callable[[TaskRow], TaskRow] | None = None) -> list[TaskRow]:
    shown = shown or _visible_row
    rows: list[TaskRow] = []
    used: set[str] = set()
    for agent in session.agents.values():
        if agent.id == MAIN:
            continue
        task = agent_task(session, agent, by_call)
        if task is not None:
            used.add(task.task_id)
        rows.append(shown(_agent_row(session, agent, task, now)))
    for task in session.tasks.values():
        if task.task_id not in used:
            rows.append(shown(_task_row(session, task, now)))
    rows.sort(key=sort_key)
    return rows


_KIND_RANK = {k: i for i, k in enumerate(KIND_ORDER)}


def sort_key(row: TaskRow) -> tuple[bool, int, int, str]:
    """Where a row goes: running first, then by kind, then by the line it started at."""
    return (not row.running, _KIND_RANK.get(row.kind, len(KIND_ORDER)), row.started_line, row.key)


class TaskRowCache:
    """The rows of one session, kept up to date from its change records.

    :meth:`note` reads the change records of each folded batch (O(1) per
    record) and marks the rows they touch; :meth:`refresh` rebuilds those and
    the running ones (their elapsed time moves with ``now``) and moves a row
    only when its place changes. A different session object (a new source, a
    replay restored from a checkpoint) or :meth:`invalidate` means one full
    rebuild. The result is always what :func:`task_rows` would build."""

    def __init__(self) -> None:
        self._session: Session | None = None
        self._rows: dict[str, TaskRow] = {}
        self._keys: list[tuple[bool, int, int, str]] = []
        """The rows' sort keys, sorted: :attr:`rows` is in the same order."""
        self.rows: list[TaskRow] = []
        """The rows, in panel order (running first); read it, do not change it."""
        self._running: set[str] = set()
        self._live: set[str] = set()
        """Rows whose elapsed time is measured up to ``now``."""
        self._now: float | None = None
        self._by_call: dict[str, str] = {}
        """tool_use id → the id of the first task that names it."""
        self._dirty_agents: set[str] = set()
        self._dirty_tasks: set[str] = set()
        self._sizes = (0, 0)
        self._shown: dict[TaskRow, TaskRow] = {}
        """Each row as read from a session → the row made visible (a rebuild for
        another state of the same session finds most of its rows here)."""

    @property
    def running(self) -> int:
        """How many rows are running or pending."""
        return len(self._running)

    def row(self, key: str) -> TaskRow | None:
        """The row with this key, if there is one."""
        return self._rows.get(key)

    def invalidate(self) -> None:
        """Forget everything: the next :meth:`refresh` rebuilds every row."""
        self._session = None

    def note(self, session: Session, changes: Iterable[Change]) -> None:
        """Mark the rows ``changes`` (records ``session`` returned) touch."""
        if session is not self._session:
            return  # the next refresh rebuilds everything anyway
        agents, tasks = self._dirty_agents, self._dirty_tasks
        by_call = self._by_call
        for change in changes:  # (the commonest kinds first: a failed class test costs)
            match change:
                case ItemUpdated() | ItemAdded():
                    agent = session.agents.get(change.agent)
                    index = change.index
                    if agent is None or not 0 <= index < len(agent.items):
                        continue
                    item = agent.items[index]
                    if type(item) is ToolItem:  # a call's elapsed time and name show in rows
                        call = item.call
                        if call.subagent:
                            agents.add(call.subagent)
                        if call.task_id:
                            tasks.add(call.task_id)
                        task_id = by_call.get(call.id)
                        if task_id is not None:
                            tasks.add(task_id)
                case HookChanged() | SessionChanged():
                    pass
                case TaskChanged():
                    tasks.add(change.task_id)
                case AgentChanged() | AgentAdded():
                    agents.add(change.agent)
                case _:
                    assert_never(change)

    def refresh(self, session: Session, now: float | None = None) -> tuple[set[str], bool]:
        """Bring :attr:`rows` up to date: returns the keys of the rows rebuilt and
        whether rows were added, removed or moved (the panel then redraws all)."""
        sizes = (len(session.agents), len(session.tasks))
        if session is not self._session or sizes[0] < self._sizes[0] \
                or sizes[1] < self._sizes[1]:  # a new session, or one that was reset
            self._rebuild(session, now)
            return set(self._rows), True
        self._sizes = sizes
        changed: set[str] = set()
        moved = False
        by_call = self._by_call
        agents = self._dirty_agents
        for task_id in self._dirty_tasks:
            task = session.tasks.get(task_id)
            if task is None:
                continue
            if task.tool_use_id:
                by_call.setdefault(task.tool_use_id, task_id)
            owner = task_owner(session, task, by_call)
            if owner is not None:
                agents.add(owner)  # a sub-agent's task shows in its row
                moved |= self._drop(f"task:{task_id}")
            else:
                moved |= self._put(_task_row(session, task, now), task, changed)
        self._dirty_tasks = set()
        for agent_id in agents:
            agent = session.agents.get(agent_id)
            if agent is None:
                continue
            task = agent_task(session, agent, by_call)
            if task is not None:
                moved |= self._drop(f"task:{task.task_id}")
            moved |= self._put(_agent_row(session, agent, task, now), task, changed)
        self._dirty_agents = set()
        if now != self._now:
            self._now = now
            for key in list(self._live):  # their elapsed time moves with the clock
                if key not in changed:
                    moved |= self._rebuild_row(session, key, now, changed)
        return changed, moved

    def _rebuild_row(self, session: Session, key: str, now: float | None,
                     changed: set[str]) -> bool:
        row = self._rows[key]
        task = session.tasks.get(row.task_id) if row.task_id is not None else None
        if row.agent_id is not None:
            agent = session.agents[row.agent_id]
            return self._put(_agent_row(session, agent, task, now), task, changed)
        assert task is not None
        return self._put(_task_row(session, task, now), task, changed)

    def _visible(self, row: TaskRow) -> TaskRow:
        shown = self._shown.get(row)
        if shown is None:
            if len(self._shown) > 4 * len(self._rows) + 64:  # rows of states long gone
                self._shown.clear()
            shown = self._shown[row] = _visible_row(row)
        return shown

    def _put(self, row: TaskRow, task: Task | None, changed: set[str]) -> bool:
        """Set ``row`` (made visible) of ``task``; True when it is new or moved."""
        row = self._visible(row)
        key = row.key
        changed.add(key)
        new = sort_key(row)
        old_row = self._rows.get(key)
        self._rows[key] = row
        if row.running:
            self._running.add(key)
        else:
            self._running.discard(key)
        if duration_moves(task):
            self._live.add(key)
        else:
            self._live.discard(key)
        if old_row is not None:
            old = sort_key(old_row)
            at = bisect_left(self._keys, old)
            if old == new:
                self.rows[at] = row
                return False
            del self._keys[at], self.rows[at]
        at = bisect_left(self._keys, new)
        self._keys.insert(at, new)
        self.rows.insert(at, row)
        return True

    def _drop(self, key: str) -> bool:
        row = self._rows.pop(key, None)
        if row is None:
            return False
        self._running.discard(key)
        self._live.discard(key)
        at = bisect_left(self._keys, sort_key(row))
        del self._keys[at], self.rows[at]
        return True

    def _rebuild(self, session: Session, now: float | None) -> None:
        self._session = session
        self._sizes = (len(session.agents), len(session.tasks))
        self._by_call = tasks_by_call(session)
        self.rows = _rows(session, now, self._by_call, self._visible)
        self._keys = [sort_key(row) for row in self.rows]
        self._rows = {row.key: row for row in self.rows}
        self._running = {row.key for row in self.rows if row.running}
        self._now = now
        self._live = {row.key for row in self.rows
                      if duration_moves(session.tasks.get(row.task_id) if row.task_id else None)}
        self._dirty_agents = set()
        self._dirty_tasks = set()


_TEXT_FIELDS = tuple(f.name for f in fields(TaskRow)
                     if f.name not in ("key", "kind", "status", "phases"))


def _visible_row(row: TaskRow) -> TaskRow:
    """``row`` with every string from the session shown as visible, single-line
    text (:func:`reducer.safe.visible`): where the panel's state becomes text."""
    changes: dict[str, Any] = {}
    for name in _TEXT_FIELDS:
        value = getattr(row, name)
        if isinstance(value, str):
            shown = visible(value, oneline=True)
            if shown is not value:
                changes[name] = shown
    if row.phases:
        changes["phases"] = tuple(replace(p, label=visible(p.label, oneline=True))
                                  for p in row.phases)
    return replace(row, **changes) if changes else row
