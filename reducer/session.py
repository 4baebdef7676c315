"""The fold: decoded frames in, session state out.

:class:`Session` takes entries one at a time (:meth:`Session.apply`) and keeps
what a viewer needs: turns, tool calls paired with their results, sub-agents,
tasks, hooks, compactions, cost and usage. Each ``apply`` returns the
:class:`~reducer.state.Change` records for what it touched. The fold is
deterministic and does no I/O; the rules follow WIRE.md §4 and FOLD-NOTES.md.
"""

from __future__ import annotations

import pickle
import re
from collections import Counter
from functools import partial
from typing import Any

import msgspec

from . import frames as F
from .state import (
    MAIN,
    TERMINAL_TASK_STATUSES,
    Agent,
    Change,
    CompactionItem,
    HookItem,
    HookRun,
    Item,
    NoticeItem,
    ProblemItem,
    PromptItem,
    StopSummaryItem,
    Task,
    TextItem,
    ThinkingItem,
    ToolCall,
    ToolItem,
    Totals,
    Turn,
    TurnFooterItem,
)

__all__ = ["Session", "SUBAGENT_TOOLS", "NON_PROMPT_MARKERS"]

SUBAGENT_TOOLS = frozenset({"Agent", "Task"})
"""Tool names whose call starts a sub-agent."""

NON_PROMPT_MARKERS = (
    "<local-command-stdout>", "<local-command-stderr>", "<session-start-hook>",
    "<system-reminder>", "[Request interrupted by user", "<ide_opened_file>",
    "<ide_selection>", "<command-message>", "<user-prompt-submit-hook>", "<task-notification>",
)
"""User-text prefixes the CLI writes itself: shown as notices, they open no turn."""

_HEARTBEAT = "-heartbeat-"

_REWIND_WALK = 100_000
"""How far up the on-disk parent chain a rewind's target is looked for."""
_FINAL_STOPS = frozenset({"end_turn", "stop_sequence", "max_tokens", "refusal"})

_new_change = partial(tuple.__new__, Change)
"""``Change(*fields)`` without the Python-level ``NamedTuple.__new__`` call
(the fold makes ~2 change records per frame)."""

_TASK_NOTE = re.compile(r"<(task-id|tool-use-id|output-file|status|summary)>(.*?)</\1>", re.S)


class _ToolResultHead(msgspec.Struct, gc=False):
    """The few keys of a structured tool result the fold reads."""

    backgroundTaskId: str | None = None
    agentId: str | None = None
    interrupted: bool | None = None
    status: str | None = None


_RESULT_HEAD = msgspec.json.Decoder(_ToolResultHead)


def _result_head(payload: msgspec.Raw | None) -> _ToolResultHead | None:
    if not payload:
        return None
    try:
        return _RESULT_HEAD.decode(payload)
    except msgspec.DecodeError:  # not an object (a string or a list)
        return None


def _usage(u: F.Usage | None) -> Totals:
    if u is None:
        return Totals()
    return Totals(
        u.input_tokens or 0, u.output_tokens or 0,
        u.cache_creation_input_tokens or 0, u.cache_read_input_tokens or 0,
    )


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


class Session:
    """Session state folded from frames of either format.

    ``apply(entry)`` is O(1) amortised; ``checkpoint()``/``restore()`` snapshot it
    for seeking in a replay.
    """

    def __init__(self) -> None:
        # what was read
        self.lines = 0
        """Lines of the main source folded."""
        self.agent_file_lines = 0
        """Lines folded from sub-agent transcript files."""
        self.kinds: Counter[str] = Counter()
        self.malformed: list[tuple[int, str]] = []
        self.unknown: list[tuple[int, str]] = []
        self.format: str = "unknown"
        # session info
        self.session_id: str | None = None
        self.session_ids: list[str] = []
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
        # conversation
        self.agents: dict[str, Agent] = {MAIN: Agent(MAIN, description="main")}
        self.turns: list[Turn] = []
        self.calls: dict[str, ToolCall] = {}
        self._calls_in_turn_order = True
        self.tasks: dict[str, Task] = {}
        self.roster: list[str] = []
        self.hooks: dict[str, HookRun] = {}
        self.stop_summaries = 0
        self.compactions: list[CompactionItem] = []
        self.permission_denials: list[dict[str, Any]] = []
        self._denied_ids: set[str] = set()
        self.rate_limit: dict[str, Any] | None = None
        self.api_retries = 0
        self.notifications = 0
        self.command_states: dict[str, str] = {}
        self.heartbeats = 0
        self.thinking_tokens = 0
        self.live_thinking_tokens = 0
        """Estimated tokens of the thinking block now streaming (0 when none)."""
        # cost and usage
        self.cost_usd = 0.0
        self._cost_base = 0.0
        self._cost_last = 0.0
        self.result_usage = Totals()
        self.assistant_usage = Totals()
        self._usage_by_message: dict[tuple[str, str | None], Totals] = {}
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
        """On-disk ``agentId`` → the tool_use id that started that sub-agent."""
        self._parents: dict[str, str | None] = {}
        self._depth: dict[str, int] | None = {}
        """Depth of each node of :attr:`_parents` (rows, and parents not seen as
        rows yet at depth 0) while that graph is a forest grown a leaf at a
        time; ``None`` once a row re-parents a known node (then rewinds are
        found by walking, as before)."""
        self._leaf: str | None = None
        self.rewinds = 0
        """On-disk branches abandoned by a rewind (their items are hidden)."""
        self._pending_thinking = 0
        self._last_compaction: CompactionItem | None = None
        self._awaiting_summary = False

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
    def activity(self) -> str:
        """What the session is doing now, for a status bar."""
        if self.status == "compacting":
            return "compacting"
        turn = self.current_turn
        if turn is None or self.status == "idle":
            return "idle"
        if self.live_thinking_tokens:
            return "thinking"
        for call in reversed(self.calls.values()):
            if call.turn != turn.index:
                break
            if not call.finished and not call.background:
                if call.awaiting_permission:
                    return "awaiting permission for " + call.name
                return "running " + call.name
        return "requesting"

    def checkpoint(self) -> bytes:
        """A snapshot of the whole state (for replay seeking)."""
        return pickle.dumps(self, protocol=pickle.HIGHEST_PROTOCOL)

    @staticmethod
    def restore(snapshot: bytes) -> Session:
        """The state saved by :meth:`checkpoint`."""
        return pickle.loads(snapshot)

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
        return agent

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
        if agent is None:
            self.lines += 1
        else:
            self.agent_file_lines += 1
        self.kinds[entry.kind_key] += 1
        self._now = received_at
        self._changes = changes
        try:
            self._dispatch(entry, agent)
        except Exception as exc:  # the fold must never take the viewer down
            self._problem(entry.line_no, "malformed", entry.kind_key,
                          f"cctv could not fold this frame: {type(exc).__name__}: {exc}")

    def _dispatch(self, e: F.Entry, forced_agent: str | None) -> None:
        if isinstance(e, F._Row):
            if e.version is not None:
                self._row_seen(e)
            if e.uuid and forced_agent is None and not e.isSidechain \
                    and (e.parentUuid is not None or e.sessionId is not None):
                self._chain(e)
        if isinstance(e, F.Assistant):
            self._assistant(e, forced_agent)
        elif isinstance(e, F.User):
            self._user(e, forced_agent)
        elif isinstance(e, F.System):
            self._system(e, forced_agent)
        elif isinstance(e, F.StreamEvent):
            self._stream_event(e)
        elif isinstance(e, F.ToolProgress):
            self._tool_progress(e)
        elif isinstance(e, F.Result):
            self._result(e)
        elif isinstance(e, F.Progress):
            self._progress_row(e)
        elif isinstance(e, F.Attachment):
            self._attachment(e)
        elif isinstance(e, F.RateLimitEvent):
            self._rate_limit(e)
        elif isinstance(e, F.CommandLifecycle):
            self.command_states[e.command_uuid] = e.state
            self._changed("session")
        elif isinstance(e, F.ConversationReset):
            self._conversation_reset(e)
        elif isinstance(e, F.ToolUseSummary):
            self._notice(MAIN, e.line_no, "tool summary", e.summary)
        elif isinstance(e, F.CostState):
            if e.totalCostUSD is not None and not self.results:
                self.cost_usd = e.totalCostUSD
                if e.modelUsage:
                    self.model_usage = e.modelUsage
                self._changed("session")
        elif isinstance(e, (F.Summary, F.CustomTitle, F.AiTitle, F.LastPrompt)):
            self._title_row(e)
        elif isinstance(e, F.ControlRequest):
            self._control_request(e)
        elif isinstance(e, F.Malformed):
            self.malformed.append((e.line_no, e.reason))
            self._problem(e.line_no, "malformed", "malformed", e.reason)
        elif isinstance(e, F.Unknown):
            self.unknown.append((e.line_no, e.kind_key))
            self._problem(e.line_no, "unknown", e.kind_key, f"unknown frame kind {e.kind_key!r}")
        # control responses, keep-alives, metadata rows and blank lines draw nothing

    def _control_request(self, e: F.ControlRequest) -> None:
        """``can_use_tool``: the CLI asks the host for permission; the call waits
        until its result (allowed or denied) or a sign that it runs."""
        request = e.request
        if request.get("subtype") != "can_use_tool":
            return
        call = self.calls.get(str(request.get("tool_use_id") or ""))
        if call is not None and not call.finished:
            call.awaiting_permission = True
            self._touch(call.item)
            self._changed("session")

    # --- item bookkeeping ----------------------------------------------------------------

    def _changed(self, what: str, agent: str | None = None, index: int = -1,
                 key: str | None = None) -> None:
        self._changes.append(_new_change((what, agent, index, key)))

    def _add(self, item: Item) -> Item:
        agent = self.agent_for(item.agent)
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

    def _notice(self, agent: str, line_no: int, category: str, text: str, level: str = "info",
                detail: str | None = None) -> NoticeItem:
        item = NoticeItem(agent, line_no, self._turn_index(agent), category, text, level, detail)
        self._add(item)
        return item

    def _problem(self, line_no: int, problem: str, kind_key: str, reason: str) -> None:
        self._add(ProblemItem(MAIN, line_no, self._turn_index(MAIN), problem, kind_key, reason))

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

    def _route(self, parent_tool_use_id: str | None, e: F._Row | None, forced: str | None) -> str:
        if forced is not None:
            return forced
        if parent_tool_use_id:
            return parent_tool_use_id
        if e is not None and e.isSidechain and e.agentId:
            return self.agent_file_ids.get(e.agentId, "agent-" + e.agentId)
        return MAIN

    def _row_seen(self, e: F._Row) -> None:
        """Session facts every on-disk row repeats: CLI version, cwd, branch."""
        if e.version and e.version != self.cli_version:
            self.cli_version = e.version
            self._changed("session")
        if e.cwd and not self.cwd:
            self.cwd = e.cwd
        if e.gitBranch:
            self.git_branch = e.gitBranch

    def _chain(self, e: F._Row) -> None:
        """Rebuild the on-disk conversation by ``parentUuid``: a user or assistant
        row whose parent is an *ancestor* of the current leaf abandons the rows
        in between (a rewind); their items are hidden. Tool-result rows and
        rows hanging off later rows never count as rewinds."""
        uuid = e.uuid or ""
        parent = e.parentUuid
        fresh_parent = self._depth is not None and parent is not None and parent not in self._depth
        self._link(uuid, parent)
        if not isinstance(e, (F.User, F.Assistant)) or e.isMeta:
            return
        leaf = self._leaf
        self._leaf = uuid
        if parent is None or leaf is None or parent == leaf:
            return
        if isinstance(e, F.User) and isinstance(e.message.content, list) and any(
                b.type == "tool_result" for b in e.message.content):
            return
        abandoned = self._path_up(leaf, parent, fresh_parent)
        if abandoned is None:
            return  # the parent is not an ancestor: no rewind
        hidden = 0
        for gone in abandoned:
            for item in self._uuid_items(gone):
                if not item.hidden:
                    item.hidden = True
                    hidden += 1
                    self._touch(item)
        if hidden:
            self.rewinds += 1
            self._notice(MAIN, e.line_no, "rewind",
                         f"conversation rewound: {hidden} item(s) of an abandoned branch hidden",
                         level="warning")

    def _link(self, uuid: str, parent: str | None) -> None:
        """``_parents[uuid] = parent``, keeping :attr:`_depth` exact while it can be."""
        parents = self._parents
        depth = self._depth
        if depth is not None:
            if uuid in parents:
                if parents[uuid] != parent:
                    self._depth = None  # a known node moves: depths below it change
            elif uuid in depth:  # named as a parent before its own row came
                if parent is not None:
                    self._depth = None
            elif parent is None:
                depth[uuid] = 0
            elif parent == uuid:
                self._depth = None
            else:
                up = depth.get(parent)
                if up is None:
                    depth[parent] = up = 0  # not seen: a root as far as any walk goes
                depth[uuid] = up + 1
        parents[uuid] = parent

    def _path_up(self, leaf: str, parent: str, fresh_parent: bool) -> list[str] | None:
        """The nodes from ``leaf`` up to, not including, ``parent`` when ``parent``
        is an ancestor of ``leaf`` at most :data:`_REWIND_WALK` steps up, else None.

        Walking up from the leaf to the root for every row whose parent is not
        the leaf (an attachment or system row between two messages, i.e. most
        user and assistant rows on disk) made a long transcript quadratic. With
        exact depths, node ``i`` steps up has depth ``depth[leaf] - i``, so the
        parent can only be the node ``depth[leaf] - depth[parent]`` steps up: one
        comparison when it is not above the leaf, a walk of the rewind's length
        when it is. A parent first named by this row cannot be on the leaf's
        path. Without depths, the walk is the original one."""
        parents = self._parents
        depth = self._depth
        if depth is not None:
            if fresh_parent:
                return None
            steps = depth[leaf] - depth[parent]
            if steps <= 0 or steps >= _REWIND_WALK:
                return None
            path: list[str] = []
            node: str | None = leaf
            for _ in range(steps):
                path.append(node)  # type: ignore[arg-type]
                node = parents.get(node)  # type: ignore[arg-type]
            return path if node == parent else None
        abandoned: list[str] = []
        node = leaf
        for _ in range(_REWIND_WALK):
            if node is None:
                return None
            if node == parent:
                return abandoned
            abandoned.append(node)
            node = parents.get(node)
        return None

    def _session_seen(self, sid: str | None) -> None:
        if sid and sid != self.session_id and sid not in self.session_ids:
            self.session_ids.append(sid)
            if self.session_id is None:
                self.session_id = sid
            self._changed("session")

    def _open_turn(self, prompt: str | None, line_no: int, uuid: str | None = None,
                   images: int = 0) -> Turn:
        turn = Turn(len(self.turns), prompt, line_no, session_id=self.session_id)
        self.turns.append(turn)
        if prompt is not None:
            self._add(PromptItem(MAIN, line_no, turn.index, prompt, images, uuid))
        self.status = "requesting"
        self._changed("session")
        return turn

    def _ensure_turn(self, line_no: int) -> Turn:
        return self.current_turn or self._open_turn(None, line_no)

    # --- assistant ---------------------------------------------------------------------

    def _assistant(self, e: F.Assistant, forced: str | None) -> None:
        sid = e.sid
        if sid != self.session_id:
            self._session_seen(sid)
        agent_id = self._route(e.parent_tool_use_id, e, forced)
        agent = self.agent_for(agent_id)
        msg = e.message
        if agent_id == MAIN:
            self._ensure_turn(e.line_no)
            if self.status != "compacting":
                # a final stop reason (on-disk rows carry it) means the model is done
                self.status = "idle" if msg.stop_reason in _FINAL_STOPS else "requesting"
        if msg.model and msg.model != "<synthetic>" and agent_id == MAIN:
            self.model = self.model or msg.model
        turn = self._turn_index(agent_id)
        if e.supersedes:
            for uuid in e.supersedes:
                for item in self._uuid_items(uuid):
                    item.hidden = True
                    self._touch(item)
        # usage: once per (message id, request id), the latest frame's figures
        key = (msg.id, e.request_id or e.requestId)
        if msg.usage is not None and msg.id:
            new = _usage(msg.usage)
            old = self._usage_by_message.get(key)
            if old is not None:
                agent.output_tokens -= old.output_tokens
            self._usage_by_message[key] = new
            agent.output_tokens += new.output_tokens
            if agent_id == MAIN:  # main loop only, like result.usage
                if old is not None:
                    self.assistant_usage.add(old, -1)
                self.assistant_usage.add(new)
                self.context_tokens = (new.input_tokens + new.cache_creation_input_tokens
                                       + new.cache_read_input_tokens + new.output_tokens)
        mkey = (agent_id, msg.id)
        streamed = self._streaming.get(mkey)
        for block in msg.content:
            btype = block.type
            if btype == "text":
                item = self._take_streamed(streamed, TextItem)
                if item is not None:
                    item.text = block.text or ""
                    item.streaming = False
                    item.line_no = e.line_no
                    item.uuid = e.uuid
                    self._index_uuid(e.uuid or "", item)
                    self._touch(item)
                else:
                    item = self._add(TextItem(agent_id, e.line_no, turn, block.text or "", msg.id,
                                              uuid=e.uuid))
            elif btype in ("thinking", "redacted_thinking"):
                text = block.thinking or ""
                redacted = btype == "redacted_thinking" or not text
                tokens = self._pending_thinking
                self._pending_thinking = 0
                self.live_thinking_tokens = 0
                item = self._take_streamed(streamed, ThinkingItem)
                if item is not None:
                    item.text = text or item.text
                    item.redacted = redacted and not item.text
                    item.tokens = tokens or item.tokens
                    item.streaming = False
                    item.line_no = e.line_no
                    self._touch(item)
                else:
                    item = self._add(ThinkingItem(agent_id, e.line_no, turn, text, redacted, tokens,
                                                  msg.id, uuid=e.uuid))
            elif btype in ("tool_use", "server_tool_use"):
                item = self._tool_use(agent, block, e, turn)
            else:
                label = btype or "block"
                item = self._notice(agent_id, e.line_no, "content", f"[{label}]")
                item.uuid = e.uuid
        if streamed is not None and not streamed:
            del self._streaming[mkey]
        if e.error or e.isApiErrorMessage:
            text = block_text(msg.content) or str(e.error)
            self._notice(agent_id, e.line_no, "api error", f"API error: {e.error or ''} {text}".strip(),
                         level="error")
        if e.aborted:
            self._notice(agent_id, e.line_no, "interrupted", "response cut short by an interrupt",
                         level="warning")

    def _take_streamed(self, streamed: list[Item] | None, cls: type) -> Any:
        if not streamed:
            return None
        for i, item in enumerate(streamed):
            if isinstance(item, cls):
                del streamed[i]
                return item
        return None

    def _tool_use(self, agent: Agent, block: F.Block, e: F.Assistant, turn: int | None) -> Item:
        call_id = block.id or f"line-{e.line_no}"
        call = self.calls.get(call_id)
        if call is not None and call.item is not None:  # a repeat (resume copies rows)
            return call.item
        call = ToolCall(call_id, block.name or "?", block.input, agent.id, turn, e.line_no)
        if call_id in self.calls:  # replaces a call left half-made by a failed fold
            self._calls_in_turn_order = False
        self.calls[call_id] = call
        agent.tool_calls += 1
        agent.last_tool = call.name
        if agent.id != MAIN:
            self._touch_agent_call(agent.id)
        cur = self.current_turn
        if cur is not None and agent.id == MAIN:
            cur.tool_calls += 1
        if call.name in SUBAGENT_TOOLS:
            call.subagent = call_id
        if call_id in self._denied_ids:
            call.status = "denied"
        item = ToolItem(agent.id, e.line_no, turn, call, e.uuid)
        call.item = item
        self._add(item)
        return item

    def _touch_agent_call(self, agent_id: str) -> None:
        """A sub-agent did something: redraw the card of the call that started it."""
        call = self.calls.get(agent_id)
        if call is not None:
            if call.status == "pending":
                call.status = "running"
            self._touch(call.item)

    # --- user --------------------------------------------------------------------------

    def _user(self, e: F.User, forced: str | None) -> None:
        sid = e.sid
        if sid != self.session_id:
            self._session_seen(sid)
        agent_id = self._route(e.parent_tool_use_id, e, forced)
        content = e.message.content
        results = [b for b in content if b.type == "tool_result"] if isinstance(content, list) else []
        if results:
            payload = e.result_payload
            for block in results:
                self._tool_result(block, payload if len(results) == 1 else None, e)
            return
        text = block_text(content)
        images = sum(1 for b in content if b.type == "image") if isinstance(content, list) else 0
        if self._awaiting_summary and e.synthetic and self._last_compaction is not None:
            self._last_compaction.summary = text
            self._awaiting_summary = False
            self._touch(self._last_compaction)
            return
        if e.isCompactSummary and self._last_compaction is not None:
            self._last_compaction.summary = text
            self._touch(self._last_compaction)
            return
        stripped = text.lstrip()
        if agent_id != MAIN:
            agent = self.agent_for(agent_id)
            if not agent.items and not e.synthetic:
                self._add(PromptItem(agent_id, e.line_no, None, text, images, e.uuid))
            else:
                self._notice(agent_id, e.line_no, "message", text)
            self._touch_agent_call(agent_id)
            return
        if e.synthetic or e.isReplay and stripped.startswith("<local-command-stdout>"):
            self._notice(MAIN, e.line_no, "harness", _strip_tags(text))
            return
        if stripped.startswith("<command-name>"):
            self._open_turn(_command_text(stripped), e.line_no, e.uuid)
            return
        if stripped.startswith(NON_PROMPT_MARKERS):
            level = "warning" if stripped.startswith("[Request interrupted") else "info"
            self._notice(MAIN, e.line_no, "harness", _strip_tags(text), level=level)
            return
        if self._title_rank > 3 and text.strip():
            self._set_title(text, 3)
        self._open_turn(text, e.line_no, e.uuid, images)

    def _tool_result(self, block: F.Block, payload: msgspec.Raw | None, e: F.User) -> None:
        call_id = block.tool_use_id or ""
        call = self.calls.get(call_id)
        if call is None:
            # a result whose call we never saw (history cut, or a resumed session)
            agent_id = self._route(e.parent_tool_use_id, e, None)
            call = ToolCall(call_id, "?", None, agent_id, self._turn_index(agent_id), e.line_no)
            self.calls[call_id] = call
            call.item = ToolItem(agent_id, e.line_no, call.turn, call, e.uuid)
            self._add(call.item)
        call.result = block.content
        asked = call.awaiting_permission
        call.awaiting_permission = False
        call.is_error = bool(block.is_error)
        call.result_line_no = e.line_no
        call.result_payload = payload
        head = _result_head(payload)
        text = block_text(block.content) if call.is_error else ""
        if head is not None and head.agentId and call.subagent:
            self.agent_file_ids[head.agentId] = call.id
            self.agent_for(call.id).agent_file_id = head.agentId
        if call.status == "denied" or call_id in self._denied_ids:
            call.status = "denied"
        elif (head is not None and head.interrupted) or text.startswith("[Request interrupted"):
            call.status = "interrupted"
        elif call.is_error:
            call.status = "failed"
            # an error straight after the CLI asked for permission is the refusal
            if asked or _looks_denied(text):
                call.status = "denied"
                call.denied_reason = text
        else:
            task = self.tasks.get(call.task_id) if call.task_id else None
            if head is not None and head.backgroundTaskId:
                call.background = True
                call.task_id = call.task_id or head.backgroundTaskId
                task = self.tasks.get(call.task_id)
            if task is not None and task.backgrounded:
                call.background = True
            if call.background and (task is None or task.running):
                call.status = "running"
            else:
                call.status = "done"
        if call.status == "failed":
            turn = self.current_turn
            if turn is not None:
                turn.failed_calls += 1
        if call.subagent and call.subagent in self.agents:
            sub = self.agents[call.subagent]
            if call.status != "running":
                sub.status = call.status
                self._changed("agent_added", call.subagent)
        self._touch(call.item)

    # --- system ------------------------------------------------------------------------

    def _system(self, e: F.System, forced: str | None) -> None:
        sid = e.sid
        if sid != self.session_id:
            self._session_seen(sid)
        if isinstance(e, (F.HookStarted, F.HookProgress, F.HookResponse)):
            self._hook(e, forced)
        elif isinstance(e, F.Init):
            self._init(e)
        elif isinstance(e, F.Status):
            self._status(e)
        elif isinstance(e, F.CompactBoundary):
            self._compact_boundary(e)
        elif isinstance(e, F.TaskStarted):
            self._task_started(e)
        elif isinstance(e, F.TaskProgress):
            self._task_progress(e)
        elif isinstance(e, F.TaskUpdated):
            self._task_updated(e)
        elif isinstance(e, F.TaskNotification):
            self._task_notification(e)
        elif isinstance(e, F.BackgroundTasksChanged):
            self._background_tasks(e)
        elif isinstance(e, F.ThinkingTokens):
            delta = e.estimated_tokens_delta or 0
            self.thinking_tokens += delta
            self._pending_thinking += delta
            self.live_thinking_tokens = e.estimated_tokens or 0
            turn = self.current_turn
            if turn is None and forced is None and not e.parent_tool_use_id:
                # thinking can be a turn's first frame (a -p or stream-json prompt is not echoed)
                turn = self._ensure_turn(e.line_no)
            if turn is not None:
                turn.thinking_tokens += delta
            self._changed("session")
        elif isinstance(e, F.StopHookSummary):
            self._stop_hook_summary(e, forced)
        elif isinstance(e, F.TurnDuration):
            turn = self.turns[-1] if self.turns else None
            if turn is not None and turn.duration_ms is None:
                turn.duration_ms = e.durationMs
                self._changed("session")
            if turn is not None and e.parentUuid is not None:
                self._close_turn_on_disk(turn, e.line_no)
        elif isinstance(e, F.SessionStateChanged):
            if e.state == "idle" and self.status != "compacting":
                self.status = "idle"
            elif e.state == "running":
                self.status = "requesting"
            self._changed("session")
        elif isinstance(e, F.ApiRetry):
            self.api_retries += 1
            err = e.error if isinstance(e.error, str) else (e.error or "")
            self._notice(MAIN, e.line_no, "api retry",
                         f"API retry {e.attempt}/{e.max_retries} in {(e.retry_delay_ms or 0) / 1000:.1f}s"
                         f" ({e.error_status or 'no status'} {err})".rstrip(), level="warning")
        elif isinstance(e, F.ApiError):
            self.api_retries += 1
            self._notice(self._route(None, e, forced), e.line_no, "api error",
                         f"API error (attempt {e.retryAttempt}/{e.maxRetries}): {e.error}",
                         level="warning")
        elif isinstance(e, F.Notification):
            self.notifications += 1
            level = "warning" if e.priority in ("high", "immediate") else "info"
            self._notice(MAIN, e.line_no, "notification", e.text, level=level,
                         detail=e.key)
        elif isinstance(e, F.PermissionDenied):
            self._deny(e.tool_use_id, e.tool_name, e.message or e.decision_reason or "",
                       e.line_no, {"tool_name": e.tool_name, "tool_use_id": e.tool_use_id})
        elif isinstance(e, F.Informational):
            self._notice(MAIN, e.line_no, "info", _as_text(e.content),
                         level="warning" if e.level == "warning" else "info")
        elif isinstance(e, F.LocalCommandOutput):
            self._notice(MAIN, e.line_no, "command output", _as_text(e.content))
        else:
            # a subtype with no rule of its own: show it, generically
            text = _as_text(e.content) if e.content is not None else ""
            level = e.level if e.level in ("warning", "error") else "info"
            self._notice(self._route(e.parent_tool_use_id, e, forced), e.line_no,
                         f"system/{e.subtype}", text or e.subtype, level=level)

    def _init(self, e: F.Init) -> None:
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

    def _status(self, e: F.Status) -> None:
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

    def _compact_boundary(self, e: F.CompactBoundary) -> None:
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

    # --- tasks -------------------------------------------------------------------------

    def _task(self, task_id: str, line_no: int) -> Task:
        task = self.tasks.get(task_id)
        if task is None:
            task = Task(task_id, started_line=line_no, started_at=self._now,
                        turn=self._turn_index(MAIN))
            self.tasks[task_id] = task
        return task

    def _link_call(self, task: Task, tool_use_id: str | None) -> None:
        if not tool_use_id:
            return
        task.tool_use_id = task.tool_use_id or tool_use_id
        call = self.calls.get(tool_use_id)
        if call is not None:
            call.task_id = task.task_id
            if task.backgrounded:
                call.background = True
            if call.status == "pending":
                call.status = "running"
            self._sync_call(call, task)
            self._touch(call.item)

    def _sync_call(self, call: ToolCall, task: Task) -> None:
        """A backgrounded call shares its task's fate (one identity across the switch)."""
        if not call.background or task.running:
            return
        if call.status in ("running", "pending", "done"):
            call.status = {"failed": "failed", "killed": "interrupted",
                           "stopped": "interrupted", "cancelled": "interrupted"}.get(
                task.status, "done")

    def _task_changed(self, task: Task) -> None:
        self._changed("task", key=task.task_id)
        if task.tool_use_id:
            call = self.calls.get(task.tool_use_id)
            if call is not None:
                self._sync_call(call, task)
                self._touch(call.item)

    def _task_started(self, e: F.TaskStarted) -> None:
        task = self._task(e.task_id, e.line_no)
        task.task_type = e.task_type or task.task_type
        task.description = e.description or task.description
        task.subagent_type = e.subagent_type or task.subagent_type
        if e.is_backgrounded is not None:
            task.backgrounded = bool(e.is_backgrounded)
        if task.status not in TERMINAL_TASK_STATUSES:
            task.status = "running"
        self._link_call(task, e.tool_use_id)
        self._task_changed(task)

    def _task_progress(self, e: F.TaskProgress) -> None:
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
            task.workflow_progress = e.workflow_progress
        self._link_call(task, e.tool_use_id)
        self._task_changed(task)

    def _task_updated(self, e: F.TaskUpdated) -> None:
        task = self._task(e.task_id, e.line_no)
        patch = e.patch
        if patch.status:
            task.status = patch.status
            if patch.status in TERMINAL_TASK_STATUSES:
                task.ended_at = self._now
        if patch.description:
            task.description = patch.description
        if patch.end_time is not None:
            task.end_time = patch.end_time
        if patch.error:
            task.error = patch.error
        if patch.is_backgrounded is not None:
            task.backgrounded = patch.is_backgrounded
        self._task_changed(task)

    def _task_notification(self, e: F.TaskNotification) -> None:
        task = self._task(e.task_id, e.line_no)
        task.status = e.status or "completed"
        task.ended_at = self._now
        task.output_file = e.output_file or task.output_file
        task.summary = e.summary or task.summary
        if e.usage is not None:
            task.total_tokens = e.usage.total_tokens
            task.tool_uses = e.usage.tool_uses
            task.duration_ms = e.usage.duration_ms
        self._link_call(task, e.tool_use_id)
        self._task_changed(task)

    def _background_tasks(self, e: F.BackgroundTasksChanged) -> None:
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
        for task_id in set(self.roster) | set(ids):
            task = self.tasks.get(task_id)
            if task is not None:
                task.in_roster = task_id in ids
                self._changed("task", key=task_id)
        self.roster = ids

    # --- hooks -------------------------------------------------------------------------

    def _hook(self, e: F.HookStarted | F.HookProgress | F.HookResponse, forced: str | None) -> None:
        hook = self.hooks.get(e.hook_id)
        agent = self._route(e.parent_tool_use_id, e, forced)
        if hook is None:
            hook = HookRun(e.hook_id, e.hook_name, e.hook_event, e.line_no, self._turn_index(agent))
            self.hooks[e.hook_id] = hook
            hook.item = HookItem(agent, e.line_no, hook.turn, hook)
            self._add(hook.item)
            turn = self.current_turn
            if turn is not None:
                turn.hooks.append(e.hook_id)
        if isinstance(e, F.HookProgress):
            hook.progress += 1
            hook.stdout = e.stdout or hook.stdout
            hook.stderr = e.stderr or hook.stderr
            hook.output = e.output or hook.output
        elif isinstance(e, F.HookResponse):
            hook.status = e.outcome or ("success" if e.exit_code in (0, None) else "error")
            hook.exit_code = e.exit_code
            hook.output = e.output or ""
            hook.stdout = e.stdout or ""
            hook.stderr = e.stderr or ""
        self._changed("hook", key=e.hook_id)
        self._touch(hook.item)

    def _stop_hook_summary(self, e: F.StopHookSummary, forced: str | None) -> None:
        self.stop_summaries += 1
        agent = MAIN if forced is None and not e.isSidechain else self._route(None, e, forced)
        turn = self.turns[-1] if self.turns else None
        if turn is not None and agent == MAIN:
            turn.stop_summaries += 1
        self._add(StopSummaryItem(agent, e.line_no, self._turn_index(agent), e.hookCount or 0,
                                  list(e.hookInfos), list(e.hookErrors), e.preventedContinuation,
                                  e.stopReason, e.level))

    # --- heartbeats and progress -----------------------------------------------------------

    def _tool_progress(self, e: F.ToolProgress) -> None:
        tid = e.tool_use_id
        if e.subagent_retry:
            retry = e.subagent_retry
            self._notice(e.parent_tool_use_id or MAIN, e.line_no, "api retry",
                         f"sub-agent API retry {retry.get('attempt')}/{retry.get('max_retries')}",
                         level="warning")
            return
        if _HEARTBEAT in tid:
            self.heartbeats += 1
            target = e.parent_tool_use_id or tid.rsplit(_HEARTBEAT, 1)[0]
            call = self.calls.get(target)
            if call is None:
                return
            if tid.startswith("hook-"):
                call.hook_heartbeats += 1
            else:
                call.heartbeats += 1
                call.elapsed = e.elapsed_time_seconds
                if call.status == "pending":
                    call.status = "running"
            self._touch(call.item)
            return
        call = self.calls.get(tid)
        if call is not None:
            call.elapsed = e.elapsed_time_seconds
            if call.status == "pending":
                call.status = "running"
            self._touch(call.item)

    def _progress_row(self, e: F.Progress) -> None:
        """On-disk ``progress`` rows: bash progress acts as a heartbeat; the rest are skipped."""
        data = e.data
        if data.type in ("bash_progress", "powershell_progress", "tool_heartbeat"):
            call = self.calls.get(e.toolUseID or e.parentToolUseID or "")
            if call is not None:
                self.heartbeats += 1
                call.heartbeats += 1
                call.elapsed = data.elapsedTimeSeconds
                self._touch(call.item)

    def _attachment(self, e: F.Attachment) -> None:
        att = e.attachment
        if att.type.startswith("hook_"):
            hook_id = f"line-{e.line_no}"
            agent = self._route(None, e, None)
            hook = HookRun(hook_id, att.hookName or att.type, att.hookEvent or "",
                           e.line_no, self._turn_index(agent))
            hook.status = "error" if "error" in att.type else "success"
            hook.exit_code = att.exitCode
            hook.stdout = att.stdout or ""
            hook.stderr = att.stderr or ""
            hook.output = _as_text(att.content) if att.content is not None else ""
            self.hooks[hook_id] = hook
            hook.item = HookItem(agent, e.line_no, hook.turn, hook)
            self._add(hook.item)
            self._changed("hook", key=hook_id)
        elif att.type == "queued_command":
            if isinstance(att.prompt, str) and "<task-notification>" in att.prompt:
                self._task_notification_text(att.prompt, e.line_no)
            self._notice(MAIN, e.line_no, "queued", _as_text(att.content) or "queued command")

    def _task_notification_text(self, text: str, line_no: int) -> None:
        """On disk a background task's end is only a queued ``<task-notification>``
        prompt (no system/task_notification row): fold it like that frame."""
        fields = dict(_TASK_NOTE.findall(text))
        if fields.get("task-id"):
            call = self.calls.get(fields.get("tool-use-id") or "")
            if call is not None and call.background:  # its tool_result named the task
                self._task(fields["task-id"], line_no).backgrounded = True
            self._task_notification(F.TaskNotification(
                subtype="task_notification", task_id=fields["task-id"],
                tool_use_id=fields.get("tool-use-id"), status=fields.get("status") or "",
                output_file=fields.get("output-file"), summary=fields.get("summary"),
                line_no=line_no))

    # --- results and cost ----------------------------------------------------------------

    def _result(self, e: F.Result) -> None:
        self._session_seen(e.session_id)
        self.results += 1
        self.last_result = e
        turn = self.current_turn or self._open_turn(None, e.line_no)
        total = e.total_cost_usd
        if total is not None:
            if total < self._cost_last:  # a new query() run: its total starts again
                self._cost_base += self._cost_last
            turn.cost_usd = max(total - self._cost_last, 0.0) if total >= self._cost_last else total
            self._cost_last = total
            self.cost_usd = self._cost_base + total
        usage = _usage(e.usage)
        turn.usage = usage
        self.result_usage.add(usage)
        if e.modelUsage:
            self.model_usage = e.modelUsage
            turn.model_usage = e.modelUsage
            for mu in e.modelUsage.values():
                window = mu.get("contextWindow") if isinstance(mu, dict) else None
                if window:
                    self.context_window = window
        turn.closed = True
        turn.end_line = e.line_no
        turn.is_error = e.is_error
        turn.subtype = e.subtype
        turn.terminal_reason = e.terminal_reason
        turn.stop_reason = e.stop_reason
        turn.errors = list(e.errors or [])
        turn.duration_ms = e.duration_ms
        turn.duration_api_ms = e.duration_api_ms
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
        self._add(TurnFooterItem(MAIN, e.line_no, turn))
        self._changed("session")

    def _close_turn_on_disk(self, turn: Turn, line_no: int) -> None:
        """On disk there is no ``result``: ``turn_duration`` ends the turn."""
        if turn.closed:
            return
        turn.closed = True
        turn.end_line = line_no
        self.status = "idle"
        self._add(TurnFooterItem(MAIN, line_no, turn))

    def _deny(self, tool_use_id: str | None, tool_name: str, reason: str, line_no: int,
              record: dict[str, Any], announce: bool = True) -> None:
        if tool_use_id and tool_use_id in self._denied_ids:
            return
        if tool_use_id:
            self._denied_ids.add(tool_use_id)
        self.permission_denials.append(record)
        call = self.calls.get(tool_use_id or "")
        if call is not None:
            if call.status == "failed" and call.turn is not None and call.turn < len(self.turns):
                turn = self.turns[call.turn]  # counted as failed when its error result came
                turn.failed_calls = max(turn.failed_calls - 1, 0)
            call.status = "denied"
            call.denied_reason = call.denied_reason or reason
            self._touch(call.item)
        if announce and call is None:  # a known call shows its denial itself, once
            self._notice(MAIN, line_no, "permission denied",
                         f"permission denied: {tool_name} {reason}".rstrip(), level="warning")
        self._changed("session")

    def _rate_limit(self, e: F.RateLimitEvent) -> None:
        info = e.rate_limit_info
        prev = (self.rate_limit or {}).get("status")
        self.rate_limit = info
        status = info.get("status")
        if status and status != "allowed" and status != prev:
            kind = info.get("rateLimitType") or "rate limit"
            util = info.get("utilization")
            pct = f" at {util * 100:.0f}%" if isinstance(util, (int, float)) else ""
            level = "error" if status == "rejected" else "warning"
            self._notice(MAIN, e.line_no, "rate limit", f"rate limit {status}: {kind}{pct}",
                         level=level)
        self._changed("session")

    def _conversation_reset(self, e: F.ConversationReset) -> None:
        self._cost_base += self._cost_last
        self._cost_last = 0.0
        if e.new_conversation_id:
            self.session_id = e.new_conversation_id
            if e.new_conversation_id not in self.session_ids:
                self.session_ids.append(e.new_conversation_id)
        self._notice(MAIN, e.line_no, "reset",
                     f"conversation reset ({e.trigger or 'clear'}): new session {e.new_conversation_id}")
        self._changed("session")

    # --- streaming partial messages ---------------------------------------------------------

    def _stream_event(self, e: F.StreamEvent) -> None:
        ev = e.event
        agent_id = e.parent_tool_use_id or MAIN
        if ev.type == "message_start" and ev.message is not None:
            self._stream_msg = ev.message.id
            if agent_id == MAIN:
                self._ensure_turn(e.line_no)
                self.status = "requesting"
                self._changed("session")
            return
        msg_id = e.api_message_id or getattr(self, "_stream_msg", "") or ""
        if ev.type == "content_block_start" and ev.content_block is not None:
            btype = ev.content_block.type
            turn = self._turn_index(agent_id)
            item: Item | None = None
            if btype == "text":
                item = TextItem(agent_id, e.line_no, turn, ev.content_block.text or "", msg_id,
                                streaming=True)
            elif btype == "thinking":
                item = ThinkingItem(agent_id, e.line_no, turn, "", False, 0, msg_id, streaming=True)
            if item is not None:
                self._add(item)
                self._streaming.setdefault((agent_id, msg_id), []).append(item)
                self._stream_blocks[(agent_id, ev.index or 0)] = item
            return
        if ev.type == "content_block_delta" and ev.delta is not None:
            item = self._stream_blocks.get((agent_id, ev.index or 0))
            if item is None or not getattr(item, "streaming", False):
                return
            d = ev.delta
            if d.type == "text_delta" and isinstance(item, TextItem):
                item.text += d.text or ""
                self._touch(item)
            elif d.type == "thinking_delta" and isinstance(item, ThinkingItem):
                item.text += d.thinking or ""
                self._touch(item)

    # --- titles ------------------------------------------------------------------------

    def _title_row(self, e: F.Entry) -> None:
        if isinstance(e, F.CustomTitle):
            self._set_title(e.customTitle, 0)
        elif isinstance(e, F.AiTitle):
            self._set_title(e.aiTitle, 1)
        elif isinstance(e, F.Summary):
            self._set_title(e.summary, 2)

    def _set_title(self, text: str, rank: int) -> None:
        if rank <= self._title_rank and text:
            self.title = " ".join(text.split())[:200]
            self._title_rank = rank
            self._changed("session")


def _looks_denied(text: str) -> bool:
    low = text.lower()
    return ("permission" in low and ("denied" in low or "not granted" in low
                                     or "haven't granted" in low or "rejected" in low)) \
        or "user doesn't want to proceed" in low or "the user denied" in low


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    try:
        return msgspec.json.encode(value).decode()
    except Exception:
        return str(value)


def _strip_tags(text: str) -> str:
    import re

    return re.sub(r"</?[a-z][a-z0-9_-]*>", "", text).strip()


def _command_text(text: str) -> str:
    import re

    name = re.search(r"<command-name>(.*?)</command-name>", text, re.S)
    args = re.search(r"<command-args>(.*?)</command-args>", text, re.S)
    out = (name.group(1).strip() if name else "").strip()
    if not out.startswith("/"):
        out = "/" + out
    if args and args.group(1).strip():
        out += " " + args.group(1).strip()
    return out
