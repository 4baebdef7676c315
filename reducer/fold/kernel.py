"""The fold's kernel: the state, the change records, and routing.

Everything a handler module needs and nothing about any one frame kind:
:class:`Kernel` holds the session state, adds and touches items (each one a
:class:`~reducer.state.Change`), and decides once per entry which agent and
which source file it belongs to (:meth:`Kernel._fold_all`). The handlers live in
the sibling modules (messages, tools, tasks, hooks, turns, chain) and the
``{kind: handler}`` table in :mod:`reducer.fold.session`.
"""

from __future__ import annotations

import io
import pickle
from collections import Counter
from collections.abc import Mapping, Sequence
from functools import partial
from sys import intern
from typing import Any, Callable, NamedTuple, Never, assert_never

import msgspec

from .. import frames as F
from ..state import (
    MAIN,
    Activity,
    Agent,
    RateLimit,
    Change,
    CompactionItem,
    HookItem,
    HookRun,
    Item,
    NoticeItem,
    ProblemItem,
    Task,
    ToolCall,
    ToolItem,
    Totals,
    Turn,
)

__all__ = ["Kernel", "SUBAGENT_TOOLS", "MALFORMED_KEPT", "block_text", "usage_totals", "usage_counts",
           "Handler", "word"]

MALFORMED_KEPT = 10_000
"""Malformed lines listed by line in :attr:`Kernel.malformed` (all are counted)."""

SUBAGENT_TOOLS = frozenset({"Agent", "Task"})
"""Tool names whose call starts a sub-agent."""

_new_change = partial(tuple.__new__, Change)
"""``Change(*fields)`` without the Python-level ``NamedTuple.__new__`` call
(the fold makes ~2 change records per frame)."""

Handler = Callable[[Any, Any, str], None]
"""``handler(session, entry, agent)``: folds one entry already routed to ``agent``."""


def word(value: Any) -> Any:
    """A string of a few distinct values (a hook's name, a tool's name, a
    status) as the one shared copy of it: a decoded frame makes a new string
    each time, and a big session holds ~100k of them (memory, and the objects
    a replay's restore rebuilds). Anything else as it is."""
    return intern(value) if type(value) is str else value


def usage_totals(u: F.Usage | None) -> Totals:
    """Token counters of an API ``usage`` object (``None`` fields read as 0)."""
    if u is None:
        return Totals()
    return Totals(*usage_counts(u))


def usage_counts(u: F.Usage) -> tuple[int, int, int, int]:
    """:func:`usage_totals` as the tuple :attr:`Totals.counts` (no Totals made)."""
    return (u.input_tokens or 0, u.output_tokens or 0,
            u.cache_creation_input_tokens or 0, u.cache_read_input_tokens or 0)


def block_text(content: Any) -> str:
    """Plain text of a message or tool_result ``content`` (a string or blocks)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content:
        if isinstance(block, F.Block):
            if block.text is not None:
                parts.append(block.text)
            elif block.type == "image":
                parts.append("[image]")
            elif block.type == "document":
                parts.append("[document]")
            elif block.content is not None:
                parts.append(block_text(block.content))
        elif isinstance(block, dict):
            parts.append(str(block.get("text", "")))
    return "\n".join(parts)


def _subclasses(cls: type) -> frozenset[type]:
    out = {cls}
    for sub in cls.__subclasses__():
        out |= _subclasses(sub)
    return frozenset(out)


_ROWS = _subclasses(F._Row)
"""Message rows (user, assistant, system, progress, attachment): exact classes,
so the fold asks ``type(e) in _ROWS`` once instead of ``isinstance`` thrice."""
_MESSAGE_ROWS = _subclasses(F.Assistant) | _subclasses(F.User) | _subclasses(F.System)
"""The rows whose session id the session records."""


class _Route(NamedTuple):
    """How :meth:`Kernel._fold` treats one entry class, decided once per class."""

    handler: Handler
    row: bool
    """A message row (user, assistant, system, progress, attachment)."""
    message_row: bool
    """A row whose session id the session records."""
    kind: str | None
    """The class's :attr:`~reducer.frames.Entry.kind_key` when it is the same
    for every entry of the class; ``None``: ask the entry."""
    parented: bool
    """The class has a ``parent_tool_use_id`` (a sub-agent's frame names its agent there)."""


_ROUTES: dict[type, _Route] = {}


def _route(cls: type, handlers: dict[type, Handler]) -> _Route:
    """The route of ``cls``, made and kept on first use."""
    fixed = _SYSTEM_KINDS.get(cls) or (
        cls.kind if getattr(cls, "kind_key") is _CONSTANT_KIND_KEY else None)
    route = _Route(handlers.get(cls, _unhandled), cls in _ROWS, cls in _MESSAGE_ROWS, fixed,
                   "parent_tool_use_id" in getattr(cls, "__struct_fields__", ()))
    _ROUTES[cls] = route
    return route


_CONSTANT_KIND_KEY = F.Entry.__dict__["kind_key"]
"""The base ``kind_key`` (the class's ``kind``): a class that keeps it counts under one key."""

_SYSTEM_KINDS = {cls: f"system/{name}" for name, cls in F.SYSTEM_SUBTYPES.items()}
"""The kind key of each system subtype's class: the decoder makes an entry of
that class only from a frame of that subtype (``SystemOther`` has many)."""


class Kernel:
    """The folded state and the bookkeeping every handler shares."""

    _handlers: dict[type, Handler] = {}
    """Filled by :mod:`reducer.fold.session`: entry class → handler."""

    def __init__(self) -> None:
        # what was read
        self.lines = 0
        """Lines of the main source folded."""
        self.agent_file_lines = 0
        """Lines folded from sub-agent transcript files."""
        self.kinds: Counter[str] = Counter()
        self.malformed: list[tuple[int, str]] = []
        """(line, reason) of the first :data:`MALFORMED_KEPT` malformed lines."""
        self.malformed_count = 0
        """How many malformed lines there were in all."""
        self.unknown: list[tuple[int, str]] = []
        self.format: str = "unknown"
        # session info
        self.session_id: str | None = None
        self.session_ids: list[str] = []
        """Every session id seen, in order (a stream of ``claude -p`` runs has many)."""
        self._session_id_set: set[str] = set()
        self.cwd: str | None = None
        self.model: str | None = None
        self.cli_version: str | None = None
        self.permission_mode: str | None = None
        self.tools: list[str] = []
        self.mcp_servers: list[dict[str, Any]] = []
        self.status: str = "idle"
        """requesting | thinking | tool | compacting | idle (see :attr:`activity`)."""
        self.git_branch: str | None = None
        self.title: str | None = None
        self._title_rank = 99
        self._pending_summaries: dict[str, str] = {}
        """``summary`` rows whose ``leafUuid`` was not (yet) a row of this session."""
        # conversation
        self.agents: dict[str, Agent] = {MAIN: Agent(MAIN, description="main")}
        self.turns: list[Turn] = []
        self.calls: dict[str, ToolCall] = {}
        self._calls_in_turn_order = True
        self._background_running: set[str] = set()
        """Ids of backgrounded tasks still running (kept by the tasks handlers)."""
        self._api_last = 0.0
        self._open_calls: dict[str, ToolCall] = {}
        """Calls that may still be open, in call order: finished, backgrounded and
        earlier turns' calls are dropped when :attr:`activity` passes them, so
        asking is O(1) amortised however many calls a turn made."""
        self.tasks: dict[str, Task] = {}
        self.roster: list[str] = []
        self.hooks: dict[str, HookRun] = {}
        self.stop_summaries = 0
        self.compactions: list[CompactionItem] = []
        self.permission_denials: list[dict[str, Any]] = []
        self._denied_ids: set[str] = set()
        self.rate_limit: dict[str, Any] | None = None
        """The latest ``rate_limit_info`` as the CLI wrote it (see :attr:`rate_limit_state`)."""
        self.rate_limit_state = RateLimit()
        self.api_retries = 0
        self.notifications = 0
        self.command_states: dict[str, str] = {}
        self.heartbeats = 0
        self.thinking_tokens = 0
        self.live_thinking_tokens = 0
        """Estimated tokens of the thinking block now streaming (0 when none)."""
        # cost and usage
        self.cost_usd: float | None = None
        """Total cost in USD; ``None`` while no frame recorded one (unknown, not $0)."""
        self._cost_base = 0.0
        self._cost_last = 0.0
        self.result_usage = Totals()
        self.assistant_usage = Totals()
        self._usage_by_message: dict[tuple[str, str | None], tuple[int, int, int, int]] = {}
        """(message id, request id) → the :attr:`Totals.counts` last counted for it."""
        self.model_usage: dict[str, dict[str, Any]] = {}
        self.context_window: int | None = None
        self.context_tokens: int | None = None
        self.results = 0
        self.is_error = False
        self.last_result: F.Result | None = None
        # routing
        self._by_uuid: dict[str, Item | list[Item]] = {}
        """Items by the uuid of their frame: the item itself, or a list when a
        uuid has several (most have one; a list each cost ~20k lists per 100 MB)."""
        self._streaming: dict[tuple[str, str], list[Item]] = {}
        self._stream_blocks: dict[tuple[str, int], Item] = {}
        self.agent_file_ids: dict[str, str] = {}
        self._unclaimed_agent_calls: dict[str, ToolCall] = {}
        """Agent/Task calls no inline sub-agent transcript (CLI 1.0.x) claimed yet."""
        self._inline_rows: dict[str, str] = {}
        """uuid of an inline sidechain row → the sub-agent it belongs to."""
        self._last_inline: str | None = None
        """On-disk ``agentId`` → the tool_use id that started that sub-agent."""
        self._parents: dict[str, str | None] = {}
        self._on_path: set[str] | None = set()
        """The rows from the root to :attr:`_leaf` (see :mod:`reducer.fold.chain`);
        ``None`` makes the fold find rewinds by walking up from the leaf instead
        (the slow reference the tests compare it with)."""
        self._leaving: list[str] = []
        self._leaf: str | None = None
        self.rewinds = 0
        """On-disk branches abandoned by a rewind (their items are hidden)."""
        self._pending_thinking = 0
        self._pending_start: str | None = None
        """A background task's summary when its notification came between turns:
        the next turn is the one it started."""
        self._last_compaction: CompactionItem | None = None
        self._awaiting_summary = False
        # the entry being folded (set by _fold)
        self._now: float | None = None
        self._changes: list[Change] = []
        self._source: str = MAIN
        """The file the entry being folded came from: :data:`MAIN` for the main
        source, else the agent id of the sub-agent transcript file."""

    # --- public helpers ----------------------------------------------------------------

    @property
    def main(self) -> Agent:
        return self.agents[MAIN]

    @property
    def current_turn(self) -> Turn | None:
        if self.turns and not self.turns[-1].closed:
            return self.turns[-1]
        return None

    @property
    def usage(self) -> Totals:
        """Main-loop usage: summed from ``result`` frames when there are any, else
        from assistant messages counted once per (message id, request id)."""
        return self.result_usage if self.results else self.assistant_usage

    @property
    def running_tasks(self) -> list[Task]:
        return [t for t in self.tasks.values() if t.running]

    @property
    def activity(self) -> Activity:
        """What the session is doing now, for a status bar."""
        if self.status == "compacting":
            return Activity("compacting")
        turn = self.current_turn
        if turn is None or self.status == "idle":
            # the turn is over; a background shell or agent may still run
            return Activity("background") if self._background_running else Activity("idle")
        if self.live_thinking_tokens:
            return Activity("thinking")
        open_calls = self._open_calls
        closed: list[str] = []
        found: ToolCall | None = None
        for call_id, call in reversed(open_calls.items()):
            if call.turn != turn.index:
                if call.turn is not None and call.turn < turn.index:
                    closed.append(call_id)
                break
            if call.finished or call.background:
                closed.append(call_id)
            else:
                found = call
                break
        for call_id in closed:
            del open_calls[call_id]
        if found is None:
            return Activity("requesting")
        if found.awaiting_permission:
            return Activity("awaiting_permission", found.id, found.name)
        return Activity("running", found.id, found.name)

    def __getstate__(self) -> dict[str, Any]:
        """What a snapshot keeps: everything but the change records of the
        last entry folded (``_fold`` gives each entry the list it appends to)."""
        state = self.__dict__.copy()
        state["_changes"] = []
        return state

    def checkpoint(self, extra: Any = None, shared: Mapping[int, int] | None = None) -> bytes:
        """A snapshot of the whole state (for replay seeking), and of ``extra``:
        something derived from the state that a restore would otherwise
        derive again (pickled with it, it shares the state's objects; see
        :meth:`restore_with_extra`).

        The state classes pickle as ``(class, field tuple)``, which cannot hold
        a cycle: the back references of calls and hook runs to their cards are
        left out of the state and pickled after it as ``(owner, card)`` pairs.

        ``shared`` maps ``id(obj)`` of objects a restore takes from a pool
        instead of building them to their index there (see
        :mod:`reducer.replay.pool`): each is pickled as that index (a
        persistent id), and their back references are the pool's own."""
        links = self.back_links()
        for owner, _ in links:
            owner.item = None
        try:
            if not shared:
                return pickle.dumps((self, links, extra), protocol=pickle.HIGHEST_PROTOCOL)
            kept = [(owner, item) for owner, item in links if id(owner) not in shared]
            out = io.BytesIO()
            _SharingPickler(out, shared).dump((self, kept, extra))
            return out.getvalue()
        finally:
            for owner, item in links:
                owner.item = item

    def back_links(self) -> list[tuple[ToolCall | HookRun, Item]]:
        """Every call and hook run that points back at its card, with the card:
        the state's only cycles (those of the cards, and those kept by id,
        which are the same but for a call replaced in place)."""
        seen: set[int] = set()
        links: list[tuple[ToolCall | HookRun, Item]] = []

        def note(owner: ToolCall | HookRun | None) -> None:
            if owner is not None and owner.item is not None and id(owner) not in seen:
                seen.add(id(owner))
                links.append((owner, owner.item))

        for agent in self.agents.values():
            for item in agent.items:
                if type(item) is ToolItem:
                    note(item.call)
                elif type(item) is HookItem:
                    note(item.hook)
        for call in self.calls.values():
            note(call)
        for hook in self.hooks.values():
            note(hook)
        return links

    def own_tables(self) -> list[list[Any] | dict[Any, Any]]:
        """The big containers the fold made itself: the agents' items, calls,
        hooks, tasks, turns and the indexes over them. (A state also holds
        objects of the decoded frames, such as a result's model usage, which
        a fold from the same frames reads again: those are not its own.)"""
        tables: list[list[Any] | dict[Any, Any]] = [a.items for a in self.agents.values()]
        tables += [self.calls, self.hooks, self.tasks, self.turns, self._by_uuid,
                   self._usage_by_message, self._open_calls, self._unclaimed_agent_calls]
        return tables

    @staticmethod
    def restore(snapshot: Any, *, packed: bool = False,
                cancelled: Callable[[], bool] | None = None,
                leftovers: list[Any] | None = None,
                shared: Sequence[Any] | None = None) -> Any:
        """The state saved by :meth:`checkpoint` (see :meth:`restore_with_extra`)."""
        return Kernel.restore_with_extra(snapshot, packed=packed, cancelled=cancelled,
                                         leftovers=leftovers, shared=shared)[0]

    @staticmethod
    def restore_with_extra(snapshot: Any, *, packed: bool = False,
                           cancelled: Callable[[], bool] | None = None,
                           leftovers: list[Any] | None = None,
                           shared: Sequence[Any] | None = None) -> tuple[Any, Any]:
        """The state saved by :meth:`checkpoint`, and the ``extra`` saved with
        it. ``packed``: the snapshot as
        :func:`~reducer.fold.snapshot.pack` left it (as replay keeps them),
        read by the unpickler a frame at a time (:class:`~reducer.fold.snapshot.Inflating`):
        other threads run between frames, and ``cancelled`` is asked before
        each: once it says so the restore stops with :class:`EOFError`.
        ``leftovers``: the unpickler is put there instead of freed (its memo
        holds every object read: ~30 ms to let go of at 100 MB), for the
        caller to drop after the screen is drawn. ``shared``: the pool a
        checkpoint taken with ``shared`` indexes into (its objects are taken
        from there, not built)."""
        if packed:
            from .snapshot import Inflating

            reader: Any = Inflating(snapshot, cancelled)
        else:
            reader = io.BytesIO(snapshot)
        unpickler = pickle.Unpickler(reader)
        if shared is not None:
            unpickler.persistent_load = shared.__getitem__  # type: ignore[assignment]
        try:
            state, links, extra = unpickler.load()
        finally:
            reader.close()
        if leftovers is not None:
            leftovers.append(unpickler)
        for owner, item in links:
            owner.item = item
        return state, extra

    def agent_for(self, agent_id: str) -> Agent:
        """The agent with this id, created (as a sub-agent) if new."""
        agent = self.agents.get(agent_id)
        if agent is None:
            call = self.calls.get(agent_id)
            parent = call.agent if call else MAIN
            depth = self.agents[parent].depth + 1 if parent in self.agents else 1
            agent = Agent(agent_id, depth=depth, parent=parent)
            if call is not None:
                call.subagent = agent_id
                if isinstance(call.input, dict):
                    agent.description = str(call.input.get("description") or "")
                    agent.subagent_type = call.input.get("subagent_type")
            self.agents[agent_id] = agent
            self._changed("agent_added", agent_id)
        return agent

    def agent_file_found(self, agent_id: str, file_id: str, agent_type: str | None = None,
                         description: str | None = None) -> list[Change]:
        """A transcript file of the sub-agent ``agent_id`` (``agent-<file_id>.jsonl``)
        was found beside the session, its ``.meta.json`` naming its type and
        description: the agent (made if new) records them; returns the change records."""
        changes: list[Change] = []
        self._changes = changes
        agent = self.agent_for(agent_id)
        agent.agent_file_id = file_id
        self.agent_file_ids.setdefault(file_id, agent_id)
        agent.subagent_type = agent.subagent_type or agent_type
        agent.description = agent.description or description or ""
        self._changed("agent_updated", agent_id)
        return changes

    # --- the fold ----------------------------------------------------------------------

    def apply(self, entry: F.Entry, *, agent: str | None = None,
              received_at: float | None = None) -> list[Change]:
        """Fold one decoded line into the state and return what changed.

        ``agent`` routes the entry to a sub-agent (used for the rows of a
        sub-agent transcript file); ``received_at`` is the wall-clock time a
        live frame arrived, for elapsed-time displays."""
        changes: list[Change] = []
        self._fold(entry, agent, received_at, changes)
        return changes

    def _fold(self, entry: F.Entry, agent: str | None, received_at: float | None,
              changes: list[Change]) -> None:
        """:meth:`apply`, appending the change records to ``changes`` (so a
        batch of lines shares one list instead of making and joining one each)."""
        self._fold_all((entry,), agent, received_at, changes)

    def _fold_all(self, entries: Sequence[F.Entry], agent: str | None, received_at: float | None,
                  changes: list[Change]) -> None:
        """:meth:`_fold` for each of ``entries`` in turn, all of one source and
        one arrival time: what is the same for the whole batch is set once."""
        if agent is None:
            self.lines += len(entries)
            source = MAIN
        else:
            self.agent_file_lines += len(entries)
            source = agent
        self._now = received_at
        self._changes = changes
        self._source = source
        kinds = self.kinds
        routes = _ROUTES
        for entry in entries:
            cls = type(entry)
            route = routes.get(cls) or _route(cls, self._handlers)
            kinds[route.kind or entry.kind_key] += 1
            where = source
            try:
                if agent is None:
                    # the agent, decided once: the sub-agent its parent_tool_use_id
                    # names, else that of an on-disk sidechain row, else the main one
                    parent = entry.parent_tool_use_id if route.parented else None
                    if parent:
                        where = parent
                    elif route.row and entry.isSidechain:
                        where = self._sidechain_agent(entry)
                if route.row:
                    if entry.version is not None or entry.parentUuid is not None \
                            or entry.sessionId is not None:
                        self._row(entry, agent, route.message_row)
                    elif route.message_row:  # a wire message: only its session id to note
                        sid = entry.session_id
                        if sid != self.session_id:
                            self._session_seen(sid)
                elif cls is F.Result:
                    self._session_seen(entry.session_id)
                route.handler(self, entry, where)
            except Exception as exc:  # the fold must never take the viewer down
                self._problem(where, entry.line_no, "malformed", entry.kind_key,
                              f"cctv could not fold this frame: {type(exc).__name__}: {exc}")

    def _row(self, e: F._Row, forced: str | None, message_row: bool) -> None:
        """What every on-disk row and wire message says about the session, before
        its own handler: CLI version, cwd, branch, session id, its place in the
        conversation chain. ``message_row``: a user, assistant or system row,
        whose session id the session records."""
        if e.version is not None:
            self._row_seen(e)
        if e.uuid and forced is None and not e.isSidechain \
                and (e.parentUuid is not None or e.sessionId is not None):
            self._chain(e)  # type: ignore[attr-defined]
            if self._pending_summaries:
                title = self._pending_summaries.pop(e.uuid, None)
                if title is not None:
                    self._set_title(title, 2)  # type: ignore[attr-defined]
        if message_row:
            sid = e.session_id or e.sessionId
            if sid != self.session_id:
                self._session_seen(sid)

    def _sidechain_agent(self, e: F._Row) -> str:
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

    # --- item bookkeeping ----------------------------------------------------------------

    def _changed(self, what: str, agent: str | None = None, index: int = -1,
                 key: str | None = None) -> None:
        self._changes.append(_new_change((what, agent, index, key)))

    def _add(self, item: Item) -> Item:
        agent = self.agents.get(item.agent) or self.agent_for(item.agent)
        item.source = self._source
        item.index = len(agent.items)
        agent.items.append(item)
        if item.uuid:
            self._index_uuid(item.uuid, item)
        self._changes.append(_new_change(("item_added", item.agent, item.index, None)))
        return item

    def _index_uuid(self, uuid: str, item: Item) -> None:
        have = self._by_uuid.get(uuid)
        if have is None:
            self._by_uuid[uuid] = item
        elif type(have) is list:
            have.append(item)
        else:
            self._by_uuid[uuid] = [have, item]

    def _uuid_items(self, uuid: str) -> list[Item] | tuple[Item, ...]:
        """The items indexed under ``uuid``, in the order they were indexed."""
        have = self._by_uuid.get(uuid)
        if have is None:
            return ()
        return have if type(have) is list else (have,)

    def _touch(self, item: Item | None) -> None:
        if item is None:
            return
        item.version += 1
        self._changes.append(_new_change(("item_updated", item.agent, item.index, None)))

    def source_notice(self, text: str, level: str = "info") -> list[Change]:
        """Add a notice from the reader of the input (the file was replaced, the
        command exited, ...) to the main transcript, after what was read so far.

        It belongs to no line of the input: its ``line_no`` is 0."""
        changes: list[Change] = []
        self._changes = changes
        self._source = MAIN
        self._notice(MAIN, 0, "source", text, level)
        return changes

    def _notice(self, agent: str, line_no: int, category: str, text: str, level: str = "info",
                detail: str | None = None) -> NoticeItem:
        item = NoticeItem(agent, line_no, self._turn_index(agent), category=category, text=text,
                          level=level, detail=detail)
        self._add(item)
        return item

    def _problem(self, agent: str, line_no: int, problem: str, kind_key: str,
                 reason: str) -> None:
        """A line the fold could not use, shown in the transcript of the agent
        (and so the file) it came from."""
        self._add(ProblemItem(agent, line_no, self._turn_index(agent), problem=problem,
                              kind_key=kind_key, reason=reason, last_line_no=line_no))

    def _line_id(self, line_no: int) -> str:
        """An id for something the entry being folded names no id for: unique
        across the main source and every sub-agent file."""
        return f"line-{line_no}" if self._source == MAIN else f"{self._source}:line-{line_no}"

    def _turn_index(self, agent: str) -> int | None:
        """The turn new items belong to: sub-agents share the main turn numbering."""
        turn = self.turns[-1] if self.turns else None
        return turn.index if turn is not None else None

    def _calls_of_turn(self, index: int) -> list[ToolCall]:
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

    def _row_seen(self, e: F._Row) -> None:
        """Session facts every on-disk row repeats: CLI version, cwd, branch."""
        if e.version and e.version != self.cli_version:
            self.cli_version = e.version
            self._changed("session")
        if e.cwd and not self.cwd:
            self.cwd = e.cwd
        if e.gitBranch:
            self.git_branch = e.gitBranch

    def _session_seen(self, sid: str | None) -> None:
        if sid and sid != self.session_id and sid not in self._session_id_set:
            self._add_session_id(sid)
            if self.session_id is None:
                self.session_id = sid
            self._changed("session")

    def _add_session_id(self, sid: str) -> None:
        self._session_id_set.add(sid)
        self.session_ids.append(sid)

    # --- entries with no rule of their own ------------------------------------------------

    def _malformed(self, e: F.Malformed, agent: str) -> None:
        """A malformed line: a row of its own, or one more line of the row just
        before when that row holds the previous line of the same file with the
        same reason (so ``cctv run -- yes`` costs one row, not one per line)."""
        self.malformed_count += 1
        if len(self.malformed) < MALFORMED_KEPT:
            self.malformed.append((e.line_no, e.reason))
        items = self.agents[agent].items if agent in self.agents else None
        last = items[-1] if items else None
        if (type(last) is ProblemItem and last.problem == "malformed"
                and last.source == self._source and last.last_line_no == e.line_no - 1
                and last.reason == e.reason):
            last.count += 1
            last.last_line_no = e.line_no
            self._touch(last)
            return
        self._problem(agent, e.line_no, "malformed", "malformed", e.reason)

    def _fold_repeated_malformed(self, line_no: int, changes: list[Change]) -> bool:
        """Fold a main-source line whose bytes are those of the malformed line
        before it, without decoding it: one more line of that line's row.
        False (nothing done) if that row is not the last one of the main transcript."""
        items = self.agents[MAIN].items
        last = items[-1] if items else None
        if not (type(last) is ProblemItem and last.problem == "malformed"
                and last.source == MAIN and last.last_line_no == line_no - 1):
            return False
        self.lines += 1
        self.kinds["malformed"] += 1
        self.malformed_count += 1
        if len(self.malformed) < MALFORMED_KEPT:
            self.malformed.append((line_no, last.reason))
        last.count += 1
        last.last_line_no = line_no
        last.version += 1
        change = _new_change(("item_updated", MAIN, last.index, None))
        if not changes or changes[-1] != change:
            changes.append(change)
        return True

    def _unknown(self, e: F.Unknown, agent: str) -> None:
        self.unknown.append((e.line_no, e.kind_key))
        self._problem(agent, e.line_no, "unknown", e.kind_key, f"unknown frame kind {e.kind_key!r}")

    def _nothing(self, e: F.Entry, agent: str) -> None:
        """Control responses, keep-alives, metadata rows and blank lines draw nothing."""


class _SharingPickler(pickle.Pickler):
    """Pickles the objects ``shared`` names (by ``id``) as their index there."""

    def __init__(self, file: io.BytesIO, shared: Mapping[int, int]) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self._index = shared.get

    def persistent_id(self, obj: Any) -> int | None:
        return self._index(id(obj))


def _unhandled(session: Kernel, entry: Never, agent: str) -> None:
    """The table's end: a decodable class with no handler (the import-time check
    in :mod:`reducer.fold.session` makes this unreachable)."""
    assert_never(entry)


def as_text(value: Any) -> str:
    """A value shown as text: strings as they are, anything else as JSON."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    try:
        return msgspec.json.encode(value).decode()
    except Exception:
        return str(value)
