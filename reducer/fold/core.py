"""The part every other part of the fold shares: the agents and their items,
the change records of the entry being folded, and where that entry belongs.

:class:`Core` adds and touches items, indexes them by the uuid of their row,
makes sub-agents, and knows the source file and arrival time of the entry
being folded. Every change record (:data:`~reducer.state.Change`) is made
here: when a sub-agent or a task changes, so does the card of the call that
started it (its version goes up, with an :class:`~reducer.state.ItemUpdated`),
so a view redraws from its own agent's records alone. It reads two tables
other parts keep: the tool calls (a sub-agent is named by the call that
started it) and the turns (new items belong to the latest one).
"""

from __future__ import annotations

from .. import frames as F
from ..state import (
    MAIN,
    SESSION_CHANGED,
    Agent,
    AgentAdded,
    AgentChanged,
    Change,
    HookChanged,
    Item,
    ItemAdded,
    ItemUpdated,
    NoticeItem,
    ProblemItem,
    Task,
    TaskChanged,
    ToolCall,
    Turn,
)

__all__ = ["Core"]


class Core:
    """Agents, items, change records and the routing context of one entry."""

    def __init__(self, calls: dict[str, ToolCall], turns: list[Turn]) -> None:
        self.agents: dict[str, Agent] = {MAIN: Agent(MAIN, description="main")}
        self.agent_file_ids: dict[str, str] = {}
        """On-disk ``agentId`` → the id of the sub-agent it names."""
        self._calls = calls
        """The tool calls (kept by :class:`~reducer.fold.calls.Calls`)."""
        self._turns = turns
        """The turns (kept by :class:`~reducer.fold.turns.Turns`)."""
        self._by_uuid: dict[str, Item | list[Item]] = {}
        """Items by the uuid of their frame: the item itself, or a list when a
        uuid has several (most have one; a list each cost ~20k lists per 100 MB)."""
        self._unclaimed_agent_calls: dict[str, ToolCall] = {}
        """Agent/Task calls no inline sub-agent transcript (CLI 1.0.x) claimed yet."""
        self._inline_rows: dict[str, str] = {}
        """uuid of an inline sidechain row → the sub-agent it belongs to."""
        self._last_inline: str | None = None
        self._awaited_parents: dict[str, list[str]] = {}
        """On-disk ``agentId`` of a parent not found yet → the sub-agents whose
        ``.meta.json`` named it."""
        # the entry being folded (see begin)
        self._now: float | None = None
        self._changes: list[Change] = []
        self._source: str = MAIN

    def begin(self, changes: list[Change], source: str, now: float | None) -> None:
        """The entries folded next come from ``source`` (:data:`MAIN` for the
        main source, else the agent id of the sub-agent transcript file),
        arrived at ``now`` (wall clock, ``None``: not live), and their change
        records go to ``changes``."""
        self._changes = changes
        self._source = source
        self._now = now

    def end(self) -> None:
        """The entries are folded: their change records (the caller's list,
        kept until the next :meth:`begin`) are let go of, so that a snapshot
        of the state does not hold them."""
        self._changes = []

    @property
    def source(self) -> str:
        """The file the entry being folded came from (see :meth:`begin`)."""
        return self._source

    @property
    def now(self) -> float | None:
        """When the entry being folded arrived (see :meth:`begin`)."""
        return self._now

    # --- agents --------------------------------------------------------------------------

    def agent_for(self, agent_id: str) -> Agent:
        """The agent with this id, created (as a sub-agent) if new."""
        agent = self.agents.get(agent_id)
        if agent is None:
            call = self._calls.get(agent_id)
            parent = call.agent if call else MAIN
            depth = self.agents[parent].depth + 1 if parent in self.agents else 1
            agent = Agent(agent_id, depth=depth, parent=parent)
            if call is not None:
                call.subagent = agent_id
                if isinstance(call.input, dict):
                    agent.description = str(call.input.get("description") or "")
                    agent.subagent_type = call.input.get("subagent_type")
            self.agents[agent_id] = agent
            self._changes.append(AgentAdded(agent_id))
            if call is not None:
                self.touch(call.item)  # its card now opens the sub-agent
        return agent

    def agent_file_found(self, agent_id: str, file_id: str, agent_type: str | None = None,
                         description: str | None = None, parent_file_id: str | None = None,
                         depth: int | None = None) -> list[Change]:
        """See :meth:`reducer.fold.Session.agent_file_found`."""
        changes: list[Change] = []
        self._changes = changes
        agent = self.agent_for(agent_id)
        agent.agent_file_id = file_id
        self.agent_file_ids.setdefault(file_id, agent_id)
        agent.subagent_type = agent.subagent_type or agent_type
        agent.description = agent.description or description or ""
        if parent_file_id:
            parent = self.agent_file_ids.get(parent_file_id)
            if parent is None:
                self._awaited_parents.setdefault(parent_file_id, []).append(agent_id)
            else:
                self.nest(agent_id, parent, depth)
        elif depth is not None:
            self.nest(agent_id, None, depth)
        for child in self._awaited_parents.pop(file_id, ()):
            self.nest(child, agent_id, None)
        self.agent_changed(agent_id)
        self.end()
        return changes

    def nest(self, agent_id: str, parent: str | None, depth: int | None) -> None:
        """The sub-agent ``agent_id`` was started by the agent ``parent`` (when
        given) at spawn depth ``depth`` (when given; else one below its parent):
        what its ``.meta.json`` or its task's start says, over the guess made
        from the call that started it (a nested agent's file may be read before
        its parent's)."""
        agent = self.agents.get(agent_id)
        if agent is None or agent_id == MAIN or parent == agent_id:
            return
        was = (agent.parent, agent.depth)
        if parent is not None and parent in self.agents:
            agent.parent = parent
        if depth is None:
            depth = self.agents[agent.parent].depth + 1 if agent.parent in self.agents else agent.depth
        if depth > 0:
            agent.depth = depth
        if (agent.parent, agent.depth) != was:
            self.agent_changed(agent_id)

    def agent_call_made(self, call: ToolCall) -> None:
        """An Agent/Task call of the main source: an inline sub-agent
        transcript (CLI 1.0.x) may claim it."""
        self._unclaimed_agent_calls[call.id] = call

    def sidechain_agent(self, e: F._Row) -> str:
        """The sub-agent an on-disk sidechain row of the main file belongs to:
        the one its ``agentId`` names, else (CLI 1.0.x) an inline one."""
        if e.agentId:
            return self.agent_file_ids.get(e.agentId, "agent-" + e.agentId)
        return self._inline_agent(e)

    def _inline_agent(self, e: F._Row) -> str:
        """CLI 1.0.x wrote a sub-agent's rows into the main file as ``isSidechain``
        rows with no ``agentId``: a row belongs to the sub-agent of its parent row;
        a root row (the sub-agent's prompt) to the Task call it answers: the one
        whose prompt it repeats, else the latest one not claimed yet."""
        agent = self._inline_rows.get(e.parentUuid) if e.parentUuid else None
        if agent is None:
            unclaimed = self._unclaimed_agent_calls
            text = e.message.content if isinstance(e, F.User) else None
            match = None
            for call in reversed(unclaimed.values()):
                if isinstance(text, str) and isinstance(call.input, dict) \
                        and call.input.get("prompt") == text:
                    match = call
                    break
                match = match or call
            if match is not None:
                del unclaimed[match.id]
                agent = match.id
            elif self._last_inline is not None:
                agent = self._last_inline  # its parent row is missing from the file
            else:
                return MAIN
        self._last_inline = agent
        if e.uuid:
            self._inline_rows[e.uuid] = agent
        return agent

    # --- turns ---------------------------------------------------------------------------

    def current_turn(self) -> Turn | None:
        """The turn still open, if any."""
        turns = self._turns
        if turns and not turns[-1].closed:
            return turns[-1]
        return None

    def last_turn(self) -> Turn | None:
        """The latest turn, open or closed."""
        return self._turns[-1] if self._turns else None

    def turn_index(self) -> int | None:
        """The turn new items belong to: sub-agents share the main turn numbering."""
        return self._turns[-1].index if self._turns else None

    # --- change records ----------------------------------------------------------------------

    def session_changed(self) -> None:
        """Session info, status or totals changed."""
        self._changes.append(SESSION_CHANGED)

    def hook_changed(self, hook_id: str) -> None:
        """The hook run ``hook_id`` changed (its chip is touched apart)."""
        self._changes.append(HookChanged(hook_id))

    def agent_changed(self, agent_id: str) -> None:
        """A fact of the sub-agent ``agent_id`` changed: so did the card of the
        call that started it, which shows its status, tools and tokens."""
        self._changes.append(AgentChanged(agent_id))
        call = self._calls.get(agent_id)
        if call is not None:
            self.touch(call.item)

    def task_changed(self, task: Task) -> None:
        """The task ``task`` changed: so did the card of the call it is shown
        on: the call that started it, else (an async sub-agent on disk, whose
        task id is its file id) the call that started that sub-agent."""
        self._changes.append(TaskChanged(task.task_id))
        calls = self._calls
        call = calls.get(task.tool_use_id) if task.tool_use_id else None
        if call is None:
            agent_id = self.agent_file_ids.get(task.task_id)
            call = calls.get(agent_id) if agent_id is not None else None
        if call is not None:
            self.touch(call.item)

    # --- items -------------------------------------------------------------------------------

    def add(self, item: Item) -> Item:
        agent = self.agents.get(item.agent) or self.agent_for(item.agent)
        item.source = self._source
        item.index = len(agent.items)
        agent.items.append(item)
        if item.uuid:
            self.index_uuid(item.uuid, item)
        self._changes.append(ItemAdded(item.agent, item.index))
        return item

    def index_uuid(self, uuid: str, item: Item) -> None:
        have = self._by_uuid.get(uuid)
        if have is None:
            self._by_uuid[uuid] = item
        elif type(have) is list:
            have.append(item)
        else:
            self._by_uuid[uuid] = [have, item]

    def uuid_items(self, uuid: str) -> list[Item] | tuple[Item, ...]:
        """The items indexed under ``uuid``, in the order they were indexed."""
        have = self._by_uuid.get(uuid)
        if have is None:
            return ()
        return have if type(have) is list else (have,)

    def touch(self, item: Item | None) -> None:
        if item is None:
            return
        item.version += 1
        self._changes.append(ItemUpdated(item.agent, item.index))

    def notice(self, agent: str, line_no: int, category: str, text: str, level: str = "info",
               detail: str | None = None) -> NoticeItem:
        item = NoticeItem(agent, line_no, self.turn_index(), category=category, text=text,
                          level=level, detail=detail)
        self.add(item)
        return item

    def source_notice(self, text: str, level: str = "info") -> list[Change]:
        """See :meth:`reducer.fold.Session.source_notice`."""
        changes: list[Change] = []
        self.begin(changes, MAIN, self._now)
        self.notice(MAIN, 0, "source", text, level)
        self.end()
        return changes

    def problem(self, agent: str, line_no: int, problem: str, kind_key: str,
                reason: str) -> None:
        """A line the fold could not use, shown in the transcript of the agent
        (and so the file) it came from."""
        self.add(ProblemItem(agent, line_no, self.turn_index(), problem=problem,
                             kind_key=kind_key, reason=reason, last_line_no=line_no))

    def line_id(self, line_no: int) -> str:
        """An id for something the entry being folded names no id for: unique
        across the main source and every sub-agent file."""
        return f"line-{line_no}" if self._source == MAIN else f"{self._source}:line-{line_no}"

    def tables(self) -> list[list[Item] | dict[str, Item | list[Item]] | dict[str, ToolCall]]:
        """The containers it made itself that grow with the session: every
        agent's items, the uuid index, the unclaimed Agent calls."""
        return [*(agent.items for agent in self.agents.values()), self._by_uuid,
                self._unclaimed_agent_calls]
