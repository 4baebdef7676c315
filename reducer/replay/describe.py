"""What one frame changed, in words, from the change records the fold returned.

:class:`ChangeDescriber` keeps the few values a sentence compares against
(task, call and hook statuses, cost, activity) as of the frame before, so it
can say "task b0q8… running → completed" and "cost +$0.0123". Folding on
without words keeps them from the change records (:meth:`ChangeDescriber.track`,
what the records touched only); a replay checkpoint keeps them with the state
it restores; a state without them is read whole (:meth:`ChangeDescriber.sync`,
every call, task and hook: ~10 ms at 100 MB).
"""

from __future__ import annotations

from typing import assert_never

from .. import facts
from ..fold import Session
from ..format import clip, format_cost, short_id
from ..state import (
    MAIN,
    AgentAdded,
    AgentChanged,
    Change,
    CompactionItem,
    HookChanged,
    HookItem,
    Item,
    ItemAdded,
    ItemUpdated,
    NoticeItem,
    ProblemItem,
    PromptItem,
    SessionChanged,
    StopSummaryItem,
    TaskChanged,
    TextItem,
    ThinkingItem,
    ToolItem,
    TurnFooterItem,
)

__all__ = ["ChangeDescriber"]


def _tokens(n: int | None) -> str:
    return "?" if n is None else f"{n:,}"


class ChangeDescriber:
    """Turns a frame's :data:`~reducer.state.Change` records into sentences."""

    def __init__(self) -> None:
        self._tasks: dict[str, str] = {}
        self._calls: dict[str, str] = {}
        self._hooks: dict[str, str] = {}
        self._cost: float | None = None
        self._activity = "idle"
        self._context: int | None = None

    @classmethod
    def of(cls, session: Session) -> ChangeDescriber:
        """A describer synced with ``session`` (see :meth:`sync`)."""
        describer = cls()
        describer.sync(session)
        return describer

    def sync(self, session: Session) -> None:
        """Take the values to compare against from ``session`` (after a restore)."""
        self._tasks = {tid: t.status for tid, t in session.tasks.items()}
        self._calls = {cid: c.status for cid, c in session.calls.items()}
        self._hooks = {hid: h.status for hid, h in session.hooks.items()}
        self._session_values(session)

    def track(self, session: Session, changes: list[Change]) -> None:
        """Move the compared values on over ``changes`` (applied to ``session``
        since the values were taken) without saying anything: what a
        :meth:`sync` would take, at the cost of the records, not of the state
        (every status a frame changes comes with a record of its call, task
        or hook; a test checks it on every recording in the fixtures)."""
        for change in changes:  # (the commonest kinds first: a failed class test costs)
            match change:
                case ItemUpdated() | ItemAdded():
                    item = _item(session, change.agent, change.index)
                    if isinstance(item, ToolItem) and item.call is not None:
                        self._calls[item.call.id] = item.call.status
                case HookChanged():
                    hook = session.hooks.get(change.hook_id)
                    if hook is not None:
                        self._hooks[change.hook_id] = hook.status
                case SessionChanged() | AgentChanged() | AgentAdded():
                    pass
                case TaskChanged():
                    task = session.tasks.get(change.task_id)
                    if task is not None:
                        self._tasks[change.task_id] = task.status
                case _:
                    assert_never(change)
        self._session_values(session)

    def catch_up(self, session: Session, changes: list[Change]) -> None:
        """Move the compared values on over ``changes`` by the cheaper way:
        :meth:`track` when the records are fewer than half the statuses a
        :meth:`sync` reads (a record costs about twice a status: at 100 MB,
        10,606 records 6.6 ms, 27k statuses 7.9 ms), else :meth:`sync`."""
        if 2 * len(changes) < len(session.calls) + len(session.tasks) + len(session.hooks):
            self.track(session, changes)
        else:
            self.sync(session)

    def _session_values(self, session: Session) -> None:
        self._cost = facts.recorded_cost(session)
        self._activity = session.activity.text
        self._context = session.context_tokens

    def describe(self, session: Session, changes: list[Change]) -> list[str]:
        """Sentences for ``changes`` (applied to ``session`` just now); also
        moves the compared values on to the state after them."""
        out: list[str] = []
        seen: set[Change] = set()
        session_changed = False
        for change in changes:
            if change in seen:
                continue
            seen.add(change)
            match change:
                case ItemAdded(agent_id, index) | ItemUpdated(agent_id, index):
                    item = _item(session, agent_id, index)
                    if item is not None:
                        text = self._item_text(item, added=type(change) is ItemAdded)
                        if text:
                            out.append(text)
                case AgentAdded(agent_id):
                    agent = session.agents.get(agent_id)
                    label = (agent.description or agent.subagent_type) if agent else None
                    out.append(f"sub-agent {label or short_id(agent_id or '?', 8)} started")
                case AgentChanged():
                    pass  # told by its card's record: how its call ended, its tools and tokens
                case TaskChanged(task_id):
                    out += self._task_text(session, task_id)
                case HookChanged(hook_id):
                    out += self._hook_text(session, hook_id)
                case SessionChanged():
                    session_changed = True
                case _:
                    assert_never(change)
        if session_changed or changes:
            out += self._session_text(session)
        return _dedupe(out)

    # --- pieces ------------------------------------------------------------------------

    def _item_text(self, item: Item, *, added: bool) -> str | None:
        where = "" if item.agent == MAIN else f" (sub-agent {short_id(item.agent, 8)})"
        if isinstance(item, ToolItem):
            call = item.call
            before = self._calls.get(call.id)
            self._calls[call.id] = call.status
            name = call.name or "tool"
            if added or before is None:
                return f"tool call {name} {_call_word(call.status)}{where}"
            if before != call.status:
                if call.status in ("failed", "denied", "interrupted", "done"):
                    return f"tool call {name} {_call_word(call.status)}{where}"
                return f"tool call {name} {before} → {call.status}{where}"
            return None
        if not added:
            if isinstance(item, CompactionItem) and item.summary:
                return f"compaction summary ({len(item.summary):,} chars){where}"
            if isinstance(item, TextItem):
                return f"assistant text now {len(item.text):,} chars{where}"
            if isinstance(item, ThinkingItem):
                return f"thinking now {len(item.text):,} chars{where}"
            return None
        match item:
            case PromptItem():
                return f"prompt: “{clip(item.text, 48, one_line=True)}”{where}"
            case TextItem():
                return f"assistant text ({len(item.text):,} chars){where}"
            case ThinkingItem():
                return "thinking (redacted)" + where if item.redacted \
                    else f"thinking ({len(item.text):,} chars){where}"
            case CompactionItem():
                if item.failed:
                    return f"compaction failed: {clip(item.error or '?', 48, one_line=True)}{where}"
                trigger = f" ({item.trigger})" if item.trigger else ""
                return (f"compaction{trigger}: {_tokens(item.pre_tokens)} → "
                        f"{_tokens(item.post_tokens)} tokens{where}")
            case HookItem():
                return None  # told by the "hook" record
            case StopSummaryItem():
                blocked = ", stopped the turn" if item.prevented else ""
                return f"stop hooks: {item.count} ran{blocked}{where}"
            case NoticeItem():
                return f"{item.category}: {clip(item.text, 48, one_line=True)}{where}"
            case TurnFooterItem():
                turn = item.turn_ref
                outcome = "error" if turn.is_error else (turn.subtype or "done")
                return f"turn {turn.number} ended ({outcome}){where}"
            case ProblemItem():
                return f"{item.problem} line {item.line_no}: {clip(item.reason, 48, one_line=True)}"
            case _:
                return f"{item.kind} added{where}"

    def _task_text(self, session: Session, task_id: str) -> list[str]:
        task = session.tasks.get(task_id)
        if task is None:
            return []
        before = self._tasks.get(task_id)
        self._tasks[task_id] = task.status
        name = f"task {short_id(task_id)}"
        if before is None:
            kind = f" ({task.task_type})" if task.task_type else ""
            return [f"{name} started{kind}: {clip(task.description, 40, one_line=True)}"
                    if task.description else f"{name} started{kind}"]
        if before != task.status:
            said = f" ({task.state})" if task.status == "interrupted" and task.state else ""
            return [f"{name} {before} → {task.status}{said}"]
        if task.activity:
            return [f"{name}: {clip(task.activity, 40, one_line=True)}"]
        return [f"{name} updated ({task.status})"]

    def _hook_text(self, session: Session, hook_id: str) -> list[str]:
        hook = session.hooks.get(hook_id)
        if hook is None:
            return []
        before = self._hooks.get(hook_id)
        self._hooks[hook_id] = hook.status
        label = f"hook {hook.label}"
        if before == hook.status:
            return []
        code = f" (exit {hook.exit_code})" if hook.exit_code not in (None, 0) else ""
        if before is None or before == "running":
            return [f"{label} {hook.status}{code}"]
        return [f"{label} {before} → {hook.status}{code}"]

    def _session_text(self, session: Session) -> list[str]:
        out: list[str] = []
        cost = facts.recorded_cost(session)  # None: no frame recorded a cost yet
        delta = (cost or 0.0) - (self._cost or 0.0)
        if cost is not None and abs(delta) >= 0.00005:
            sign = "+" if delta > 0 else "-"
            out.append(f"cost {sign}{format_cost(abs(delta))} (now {format_cost(cost)})")
        self._cost = cost
        activity = session.activity.text
        if activity != self._activity:
            out.append(f"activity {self._activity} → {activity}")
        self._activity = activity
        if session.context_tokens != self._context and session.context_tokens is not None:
            out.append(f"context {_tokens(self._context)} → {_tokens(session.context_tokens)} tokens")
        self._context = session.context_tokens
        return out


def _item(session: Session, agent_id: str, index: int) -> Item | None:
    """``items[index]`` of the agent ``agent_id``, if both exist."""
    agent = session.agents.get(agent_id)
    if agent is None or not 0 <= index < len(agent.items):
        return None
    return agent.items[index]


def _call_word(status: str) -> str:
    return {"pending": "called", "running": "running", "done": "done", "failed": "failed",
            "denied": "denied", "interrupted": "interrupted"}.get(status, status)


def _dedupe(lines: list[str]) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for line in lines:
        if line not in seen:
            seen.add(line)
            out.append(line)
    return out
