"""A session's figures, derived once: every number and state a surface shows.

The status bar, the cards and turn footers, the tasks panel, ``cctv summary``,
the session index (``cctv sessions``, the browser's columns and preview) and
the Markdown export all read their figures here, so a session reads the same
wherever it is looked at. Each figure has one definition, in this module, and
one description, in the README's ``cctv summary --json`` table; the words the
screens label them with are :data:`reducer.format.WORDS`.

:func:`session_facts` makes every figure of a folded session at once (a walk
over its calls, agents and tasks: for a summary, an index row, an export).
What a status bar redraws ten times a second has O(1) functions of its own,
which :func:`session_facts` uses too: :func:`tokens`, :func:`recorded_cost` and
``Session.model_turns``; :func:`final_state` is O(1) but for a session that
looks mid-turn (it then looks back over the items the CLI wrote after the
model's last word).

Pure: no Textual, no I/O.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any, Literal

import msgspec

from .costs import AgentFigures, CostSource, agent_figures, cost_of
from .fold import SUBAGENT_TOOLS, Session
from .state import MAIN, ActivityKind, Agent, CallStatus, Task, TaskStatus, TextItem, ToolCall, Totals

__all__ = [
    "FinalState", "CostSource", "TaskKind", "Tokens", "CallCounts", "TaskFacts", "SessionFacts",
    "session_facts", "tokens", "recorded_cost", "prompt_count", "subagent_count", "call_counts",
    "call_duration", "task_duration", "duration_moves", "final_state", "call_task", "agent_task",
    "task_owner", "tasks_by_call", "task_kind", "agent_entry", "task_entry", "task_list",
]

FinalState = Literal["idle", "background", "requesting", "running", "awaiting_permission",
                     "compacting", "thinking", "ended"]
"""What a session was doing when its input ended (:func:`final_state`): an
:data:`~reducer.state.ActivityKind`, or ``ended`` when the user ended it (``/exit``)."""


TaskKind = Literal["agent", "workflow", "shell", "monitor", "other"]
"""What a task is: a sub-agent, a workflow, a background shell, a monitor, else ``other``."""


class Tokens(msgspec.Struct, frozen=True, gc=False):
    """Tokens of the main agent's API calls, split four ways.

    ``in`` on every screen is :attr:`total_in`: every input token the model
    read, fresh or through the cache; ``out`` is :attr:`output`."""

    input: int = 0
    """Input tokens read fresh (the API's ``input_tokens``: neither written to
    nor read from the prompt cache)."""
    output: int = 0
    cache_read: int = 0
    """Input tokens read from the prompt cache (``cache_read_input_tokens``)."""
    cache_write: int = 0
    """Input tokens written to the prompt cache (``cache_creation_input_tokens``)."""

    @classmethod
    def of(cls, totals: Totals) -> Tokens:
        return cls(totals.input_tokens, totals.output_tokens, totals.cache_read_input_tokens,
                   totals.cache_creation_input_tokens)

    @property
    def total_in(self) -> int:
        """What ``in`` counts: fresh input, cache reads and cache writes."""
        return self.input + self.cache_read + self.cache_write

    def as_usage(self) -> dict[str, int]:
        """The API's own names (``cctv summary --json``'s ``usage``)."""
        return {"input_tokens": self.input, "output_tokens": self.output,
                "cache_creation_input_tokens": self.cache_write,
                "cache_read_input_tokens": self.cache_read}


class CallCounts(msgspec.Struct, frozen=True, kw_only=True):
    """Tool calls of the main agent and its sub-agents together, by outcome."""

    total: int = 0
    failed: int = 0
    denied: int = 0
    interrupted: int = 0
    unpaired: int = 0
    """Calls whose result never came."""
    by_name: dict[str, int] = msgspec.field(default_factory=dict)
    """Calls per tool name, names sorted."""


class TaskFacts(msgspec.Struct, frozen=True, kw_only=True):
    """One entry of a session's one list of tasks (:func:`task_list`): a
    sub-agent (with the task it ran as, if any), or a task that is no
    sub-agent (a background shell, a monitor, a workflow…)."""

    kind: TaskKind
    task_id: str | None
    """The CLI's task id (``None``: a sub-agent no task frame named)."""
    agent_id: str | None
    """The sub-agent it is, whose transcript it opens (``None``: not a sub-agent)."""
    tool_use_id: str | None
    """The call that started it."""
    task_type: str | None
    subagent_type: str | None
    description: str
    status: TaskStatus | CallStatus
    state: str | None
    """The CLI's own word for its state (``completed``, ``killed``…), when a frame said one."""
    backgrounded: bool
    duration_s: float | None
    """How long it ran (:func:`task_duration`)."""
    tokens: int | None
    """Its tokens: all of them (its task's usage) unless :attr:`tokens_are_output`."""
    tokens_are_output: bool
    """:attr:`tokens` counts only the sub-agent's output tokens (no task usage came)."""
    tool_uses: int | None
    last_tool: str | None
    depth: int
    """0 for a task of the main agent, 1 for a sub-agent's sub-agent…"""
    started_line: int
    """The line it started at (its task's first frame, else its call's)."""

    @property
    def running(self) -> bool:
        return self.status in ("pending", "running")

    @property
    def key(self) -> str:
        """Unique in a session: ``agent:<agent id>`` or ``task:<task id>``."""
        return f"agent:{self.agent_id}" if self.agent_id is not None else f"task:{self.task_id}"


class SessionFacts(msgspec.Struct, kw_only=True):
    """Every figure of one session (:func:`session_facts`)."""

    title: str | None
    """The fold's title (``None`` when none: drawn as ``(untitled)``)."""
    state: FinalState
    turns: int
    """Model turns (``Session.model_turns``): a local command is a prompt, not a turn."""
    prompts: int
    tool_calls: CallCounts
    subagents: int
    tasks: list[TaskFacts]
    cost_usd: float | None
    """Recorded by the CLI, else estimated from the tokens (:mod:`reducer.costs`); ``None``: unknown."""
    cost_source: CostSource | None
    """``recorded``, ``estimated``, ``mixed``; ``None`` with no cost."""
    cost_unpriced: str | None
    """Why the cost leaves tokens out (``no price known for …``), else ``None``."""
    tokens: Tokens
    agents: list[AgentFigures]
    """The main loop and each sub-agent: own and subtree cost, tokens, tool calls, time."""

    def as_json(self) -> dict[str, Any]:
        """The figures under the keys ``cctv summary --json`` and ``cctv sessions
        --json`` share (the README's table)."""
        return {
            "title": self.title,
            "status": self.state,
            "turns": self.turns,
            "prompts": self.prompts,
            "tool_calls": msgspec.to_builtins(self.tool_calls),
            "subagents": self.subagents,
            "cost_usd": self.cost_usd,
            "cost_source": self.cost_source,
            "cost_unpriced": self.cost_unpriced,
            "usage": self.tokens.as_usage(),
            "agents": [a.as_dict() for a in self.agents],
        }


# --- O(1): what a status bar redraws ----------------------------------------------------------


def tokens(session: Session) -> Tokens:
    """The session's tokens: the main loop's, summed from ``result`` frames
    when there are any, else from assistant messages counted once per
    (message id, request id) (:attr:`reducer.fold.Session.usage`)."""
    return Tokens.of(session.usage)


def recorded_cost(session: Session) -> float | None:
    """The cost the CLI recorded so far (``None``: none yet, not $0): what
    replay's inspector follows frame by frame. A screen shows the session's
    cost (:func:`reducer.costs.cost_of`, estimates included) through a
    :class:`reducer.costs.CostMemo`."""
    usd = session.cost_usd
    return None if usd is None else round(usd, 6)


# --- counts ------------------------------------------------------------------------------------


def prompt_count(session: Session) -> int:
    """Human prompts, slash commands included (a stream-json prompt is not
    echoed on stdout, but each one ends in a result)."""
    return sum(1 for t in session.turns if t.started_by in ("prompt", "command")
               or t.started_by is None and t.subtype is not None)


def subagent_count(session: Session) -> int:
    """Sub-agents: every agent the fold made but the main one, CLI 1.0.x's
    inline sidechains included; the compaction and warm-up agents' files are
    never read as sub-agents (:func:`viewer.discovery.not_a_subagent`)."""
    return len(session.agents) - 1


def call_counts(calls: Iterable[ToolCall]) -> CallCounts:
    """``calls`` counted by outcome and by name."""
    total = failed = denied = interrupted = unpaired = 0
    names: Counter[str] = Counter()
    for call in calls:
        total += 1
        names[call.name] += 1
        status = call.status
        if status == "failed":
            failed += 1
        elif status == "denied":
            denied += 1
        elif status == "interrupted":
            interrupted += 1
        if call.result_line_no is None:
            unpaired += 1
    return CallCounts(total=total, failed=failed, denied=denied, interrupted=interrupted,
                      unpaired=unpaired, by_name=dict(sorted(names.items())))


# --- durations ---------------------------------------------------------------------------------


def call_duration(call: ToolCall) -> float | None:
    """How long a call took, as every surface shows it: once finished, its
    :attr:`~reducer.state.ToolCall.duration` (the result's own figure, else
    result time minus call time); while it runs (and when no duration is
    known), the elapsed time its heartbeats last reported."""
    if call.duration is not None and call.finished:
        return call.duration
    return call.elapsed


def task_duration(task: Task, call: ToolCall | None, now: float | None) -> float | None:
    """How long a task ran, as every surface shows it (the tasks panel, the
    sub-agent's card, ``cctv summary``).

    Finished: the CLI's own figure (its usage's ``duration_ms``); else, for a
    task that ran in the foreground, what its call took (:func:`call_duration`:
    the call lasted the whole run); else from its first frame to its end as
    they arrived (live only). Running: the clock since its first frame arrived
    (``now``: none on a surface that does not tick), else the CLI's figure so
    far. Last, what its call shows."""
    if task.running:
        if task.started_at is not None and now is not None:
            return max(0.0, now - task.started_at)
    elif task.duration_ms is None:
        took = call_duration(call) if call is not None and not task.backgrounded else None
        if took is not None:
            return took
        if task.started_at is not None and task.ended_at is not None:
            return max(0.0, task.ended_at - task.started_at)
    if task.duration_ms is not None:
        return task.duration_ms / 1000
    return call_duration(call) if call is not None else None


def duration_moves(task: Task | None) -> bool:
    """Whether :func:`task_duration` of ``task`` moves with ``now`` (a ticking surface redraws it)."""
    return task is not None and task.running and task.started_at is not None


# --- the final state --------------------------------------------------------------------------

_AFTERWORDS = frozenset({"system", "harness", "info", "command output"})
"""Notices the CLI writes after the model's last word: they do not reopen a turn."""


def final_state(session: Session) -> FinalState:
    """What the session was doing when its input ended: what a settled file
    reads, on every surface.

    ``ended`` once the user ended it (``/exit``: a later prompt, as a resumed
    session writes, takes that back). A turn that ended (a ``result``, a
    ``turn_duration``, a final assistant message with a stop reason) is
    ``idle``; so is one whose last entry is the model's text of a CLI that
    writes no stop reason (1.0.x) or the output of a local command.
    ``background`` when a background task still runs; else what
    :attr:`Session.activity` says (``requesting``, ``running``: the input was
    cut mid-turn)."""
    if session.exited:
        return "ended"
    kind: ActivityKind = session.activity.kind
    if kind == "requesting" and _turn_over(session):
        kind = "background" if session.background_running else "idle"
    return kind


def _turn_over(session: Session) -> bool:
    """The session reads ``requesting``, but its last turn is over: closed, or
    ended on the model's final text, or on a local command's output."""
    turn = session.turns[-1] if session.turns else None
    if turn is None or turn.closed:
        return True
    items = (i for i in reversed(session.main.items) if not i.hidden
             and i.kind not in ("hook", "stop_summary"))
    last = next(items, None)
    if last is not None and last.kind == "notice" and turn.answered:
        # after the model's answer, the CLI's own rows (a hook result, ! bash output)
        last = next((i for i in items if i.kind != "notice"
                     or i.category not in _AFTERWORDS), None)
    return (isinstance(last, TextItem) and not last.streaming) or (
        last is not None and last.kind == "notice" and last.category == "harness"
        and not turn.answered)


# --- the one list of tasks --------------------------------------------------------------------


def call_task(session: Session, call: ToolCall) -> Task | None:
    """The task a call became: by the id its result named, else (an async
    sub-agent on disk) by its sub-agent's file id, which is the task id of its
    notification."""
    if call.task_id:
        return session.tasks.get(call.task_id)
    agent = session.agents.get(call.subagent) if call.subagent else None
    return session.tasks.get(agent.agent_file_id) if agent and agent.agent_file_id else None


def agent_task(session: Session, agent: Agent, by_call: dict[str, str] | None = None) -> Task | None:
    """The task the sub-agent ``agent`` ran as, if any: its call's
    (:func:`call_task`), else the task its file id names, else the first task
    that names its call (``by_call``: tool_use id → that task's id, made by the
    caller when it asks for many agents)."""
    call = session.calls.get(agent.id)
    task = call_task(session, call) if call is not None else None
    if task is None and agent.agent_file_id:
        task = session.tasks.get(agent.agent_file_id)
    if task is None:
        if by_call is None:
            task = next((t for t in session.tasks.values() if t.tool_use_id == agent.id), None)
        else:
            task_id = by_call.get(agent.id)
            task = session.tasks.get(task_id) if task_id is not None else None
    return task


def task_owner(session: Session, task: Task, by_call: dict[str, str] | None = None) -> str | None:
    """The sub-agent whose entry shows ``task`` (:func:`agent_task` the other
    way round), if any."""
    for agent_id in (task.tool_use_id, session.agent_file_ids.get(task.task_id)):
        agent = session.agents.get(agent_id) if agent_id else None
        if agent is not None and agent.id != MAIN and agent_task(session, agent, by_call) is task:
            return agent.id
    return None


def tasks_by_call(session: Session) -> dict[str, str]:
    """tool_use id → the id of the first task that names it."""
    out: dict[str, str] = {}
    for task in session.tasks.values():
        if task.tool_use_id:
            out.setdefault(task.tool_use_id, task.task_id)
    return out


def task_kind(session: Session, task: Task) -> TaskKind:
    """What ``task`` is, from its type and the tool of its call."""
    task_type = (task.task_type or "").lower()
    call = session.calls.get(task.tool_use_id) if task.tool_use_id else None
    name = call.name if call is not None else ""
    if "agent" in task_type or name in SUBAGENT_TOOLS:
        return "agent"
    if "workflow" in task_type:
        return "workflow"
    if name == "Monitor" or "monitor" in task_type:
        return "monitor"
    if "bash" in task_type or "shell" in task_type or name == "Bash":
        return "shell"
    return "other"


def agent_entry(session: Session, agent: Agent, task: Task | None,
                now: float | None = None) -> TaskFacts:
    """The entry of the sub-agent ``agent``, which ran as ``task`` (if any)."""
    call = session.calls.get(agent.id)
    if task is not None:
        tokens_of = task.total_tokens
        tool_uses = task.tool_uses
    else:
        tokens_of = tool_uses = None
    return TaskFacts(
        kind="agent",
        task_id=task.task_id if task is not None else None,
        agent_id=agent.id,
        tool_use_id=call.id if call is not None else None,
        task_type=task.task_type if task is not None else None,
        subagent_type=agent.subagent_type or (task.subagent_type if task else None),
        description=agent.description or (task.description if task else "") or agent.id,
        status=task.status if task is not None else agent.status,
        state=task.state if task is not None else None,
        backgrounded=task.backgrounded if task is not None else False,
        duration_s=(task_duration(task, call, now) if task is not None
                    else call_duration(call) if call is not None else None),
        tokens=tokens_of if tokens_of is not None else agent.output_tokens or None,
        tokens_are_output=tokens_of is None,
        tool_uses=tool_uses if tool_uses is not None else agent.tool_calls or None,
        last_tool=agent.last_tool or (task.last_tool if task else None),
        depth=max(0, agent.depth - 1),
        started_line=(task.started_line if task and task.started_line
                      else call.line_no if call else 0),
    )


def task_entry(session: Session, task: Task, now: float | None = None) -> TaskFacts:
    """The entry of ``task``, which is no sub-agent's."""
    call = session.calls.get(task.tool_use_id) if task.tool_use_id else None
    return TaskFacts(
        kind=task_kind(session, task),
        task_id=task.task_id,
        agent_id=None,
        tool_use_id=task.tool_use_id,
        task_type=task.task_type,
        subagent_type=task.subagent_type,
        description=task.description or task.task_id,
        status=task.status,
        state=task.state,
        backgrounded=task.backgrounded,
        duration_s=task_duration(task, call, now),
        tokens=task.total_tokens,
        tokens_are_output=False,
        tool_uses=task.tool_uses,
        last_tool=task.last_tool,
        depth=0,
        started_line=task.started_line or 0,
    )


def task_list(session: Session, now: float | None = None) -> list[TaskFacts]:
    """The session's one list of tasks: every sub-agent (with the task it ran
    as), then every task that is no sub-agent's, in the order they started."""
    by_call = tasks_by_call(session)
    out: list[TaskFacts] = []
    shown: set[str] = set()
    for agent in session.agents.values():
        if agent.id == MAIN:
            continue
        task = agent_task(session, agent, by_call)
        if task is not None:
            shown.add(task.task_id)
        out.append(agent_entry(session, agent, task, now))
    out += [task_entry(session, task, now) for task in session.tasks.values()
            if task.task_id not in shown]
    out.sort(key=lambda entry: (entry.started_line, entry.key))
    return out


# --- all of them --------------------------------------------------------------------------------


def session_facts(session: Session) -> SessionFacts:
    """Every figure of ``session`` (O(calls + agents + tasks + turns))."""
    cost = cost_of(session)
    return SessionFacts(
        title=session.title,
        state=final_state(session),
        turns=session.model_turns,
        prompts=prompt_count(session),
        tool_calls=call_counts(session.calls.values()),
        subagents=subagent_count(session),
        tasks=task_list(session),
        cost_usd=None if cost.usd is None else round(cost.usd, 6),
        cost_source=cost.source,
        cost_unpriced=cost.reason,
        tokens=tokens(session),
        agents=agent_figures(session),
    )
