"""The state a viewer draws, as the fold builds it.

Mutable msgspec Structs: the fold updates them in place and
reports what it touched as :data:`Change` records (:class:`ItemAdded`,
:class:`ItemUpdated`, :class:`AgentChanged`…). Each transcript item is an
:class:`Item` with a ``version`` that goes up whenever its look changes (what
it shows of a sub-agent or a task included), so a view can cache what it
rendered per ``(item, version, width)``.
"""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

import msgspec

__all__ = [
    "Change", "ItemAdded", "ItemUpdated", "AgentAdded", "AgentChanged", "TaskChanged",
    "HookChanged", "SessionChanged", "SESSION_CHANGED",
    "Item", "PromptItem", "TextItem", "ThinkingItem", "ToolItem", "CompactionItem",
    "HookItem", "StopSummaryItem", "NoticeItem", "TurnFooterItem", "ProblemItem",
    "ToolCall", "HookRun", "Task", "Turn", "Agent", "Totals", "MAIN", "CallStatus", "HookStatus",
    "TaskStatus", "WorkflowPhase", "WorkflowAgent", "Activity", "ActivityKind", "TurnStart", "RateLimit", "TurnOutcome",
    "Request", "RequestTokens",
]

MAIN = ""
"""Agent id of the main conversation; sub-agents are keyed by the tool_use id that spawned them."""

CallStatus = Literal["pending", "running", "done", "failed", "denied", "interrupted"]
"""A tool call, and a sub-agent (the status of the call that started it)."""

TaskStatus = Literal["pending", "running", "done", "failed", "interrupted"]
"""A task: ``interrupted`` when it was killed, stopped or cancelled (its
:attr:`Task.state` keeps the CLI's own word)."""

HookStatus = Literal["running", "done", "failed", "interrupted", "ran"]
"""A hook run: ``running`` until its outcome, then ``done`` (exit 0), ``failed``
(a non-zero exit, an error, a timeout) or ``interrupted`` (cancelled by the user);
``ran`` when the transcript says only that it ran (on disk, CLI 2.1.14–2.1.42
wrote a ``hook_progress`` row and no outcome)."""

TurnStart = Literal["prompt", "command", "task-notification"]
TurnOutcome = Literal["success", "failed", "interrupted"]


# --- change records -----------------------------------------------------------------------
#
# What one folded entry touched, one record per fact, as a tagged union matched
# with ``match`` and ``assert_never``. Frozen msgspec Structs without GC
# tracking (they hold only strings and ints): a third of the cost of a
# NamedTuple to make, compared and hashed by class and fields. A source that
# is truncated or replaced is not a change: the viewer starts a new
# :class:`~reducer.fold.Session` (and its views) from scratch.


class ItemAdded(msgspec.Struct, frozen=True, gc=False):
    """``items[index]`` of the agent ``agent`` is new (a view appends it)."""

    agent: str
    index: int


class ItemUpdated(msgspec.Struct, frozen=True, gc=False):
    """``items[index]`` of the agent ``agent`` looks different now: its
    ``version`` went up (a view draws it again). That includes what the item
    shows of other state: the card of the call that started a sub-agent or a
    task is updated whenever that sub-agent or task changes."""

    agent: str
    index: int


class AgentAdded(msgspec.Struct, frozen=True, gc=False):
    """The sub-agent ``agent`` now exists (its transcript is empty so far)."""

    agent: str


class AgentChanged(msgspec.Struct, frozen=True, gc=False):
    """A fact of the sub-agent ``agent`` changed: its status, description or
    type, file id, tool count, last tool or tokens."""

    agent: str


class TaskChanged(msgspec.Struct, frozen=True, gc=False):
    """The task ``task_id`` changed (``Session.tasks``)."""

    task_id: str


class HookChanged(msgspec.Struct, frozen=True, gc=False):
    """The hook run ``hook_id`` changed (``Session.hooks``)."""

    hook_id: str


class SessionChanged(msgspec.Struct, frozen=True, gc=False):
    """Session info, status or totals changed (one instance: :data:`SESSION_CHANGED`)."""


SESSION_CHANGED = SessionChanged()
"""The one :class:`SessionChanged` record (it has no fields)."""

Change = ItemAdded | ItemUpdated | AgentAdded | AgentChanged | TaskChanged | HookChanged \
    | SessionChanged
"""What one applied frame touched: match it with a ``case`` per class and
``case _: assert_never(change)``."""


ActivityKind = Literal["idle", "requesting", "thinking", "running", "awaiting_permission",
                       "compacting", "background"]
"""What a session is doing now: ``background`` is a finished turn whose
background shell or agent still runs."""


class Activity(NamedTuple):
    """What the session is doing now (:attr:`Session.activity`), for a status bar."""

    kind: ActivityKind
    call_id: str | None = None
    """For ``running`` / ``awaiting_permission``: the call (``Session.calls`` key)."""
    tool: str | None = None
    """That call's tool name."""

    @property
    def text(self) -> str:
        """As words: ``"running Bash"``, ``"awaiting permission for Write"``, ``"idle"``…"""
        if self.kind == "running":
            return f"running {self.tool}"
        if self.kind == "awaiting_permission":
            return f"awaiting permission for {self.tool}"
        if self.kind == "background":
            return "running in background"
        return self.kind


class RateLimit(msgspec.Struct):
    """The latest ``rate_limit_event`` (every one updates it)."""

    status: str | None = None
    """``allowed`` | ``allowed_warning`` | ``rejected``."""
    kind: str | None = None
    """``rateLimitType``: ``five_hour``, ``seven_day``…"""
    utilization: float | None = None
    """0..1 when the CLI gives it."""
    resets_at: float | None = None
    """``resetsAt`` (unix seconds)."""
    overage_status: str | None = None
    overage_resets_at: float | None = None
    events: int = 0
    """How many rate_limit_event frames came."""

    def as_dict(self) -> dict[str, Any]:
        return {"status": self.status, "type": self.kind, "utilization": self.utilization,
                "resets_at": self.resets_at, "overage_status": self.overage_status,
                "overage_resets_at": self.overage_resets_at, "events": self.events}


# --- transcript items --------------------------------------------------------------------
#
# The state classes are msgspec Structs (not dataclasses or ``__slots__``
# classes): made in C, ~4x cheaper to build, and pickled as ``(class, field
# tuple)``, which a replay's restore rebuilds ~4x faster than a slotted
# object's per-object state dict. An item takes ``agent, line_no, turn`` and
# ``uuid`` by position and its own fields by keyword, at every call site: the
# fields after the first three all have defaults, so a fifth positional value
# would fill ``index``, not the item's own field. ``eq=False``: items, calls,
# turns... are compared and hashed by identity.


class Item(msgspec.Struct, eq=False):
    """One row group of a transcript: a prompt, a text block, a tool call, …"""

    agent: str
    line_no: int
    turn: int | None
    uuid: str | None = None
    index: int = -1
    hidden: bool = False
    version: int = 0
    source: str = MAIN
    """The file ``line_no`` is a line of: :data:`MAIN` for the main source,
    else the agent id of a sub-agent transcript file. ``(source, line_no)``
    is the entry the item was drawn from."""

    kind = "item"


class PromptItem(Item, eq=False):
    """A human prompt (or, in a sub-agent, the prompt it was given)."""

    text: str = ""
    images: tuple[Any, ...] = ()
    """The ``source`` of each image block the prompt carried (base64 data kept)."""
    context: tuple[str, ...] = ()
    """What the IDE attached (``opened tokenizer.html``, ``selected lines 5-9 of
    x.py``), shown as small chips beside the prompt."""

    kind = "prompt"


class TextItem(Item, eq=False):
    """Assistant text (Markdown). ``streaming`` while partial messages arrive."""

    text: str = ""
    message_id: str = ""
    streaming: bool = False

    kind = "text"


class ThinkingItem(Item, eq=False):
    """A thinking block; ``redacted`` when only a signature (or redacted data) came."""

    text: str = ""
    redacted: bool = False
    tokens: int = 0
    message_id: str = ""
    streaming: bool = False

    kind = "thinking"


class ToolItem(Item, eq=False):
    """A tool call card; everything about the call is in :attr:`call`."""

    call: ToolCall | None = None

    kind = "tool"


class CompactionItem(Item, eq=False):
    """A compaction boundary (or a failed compaction)."""

    trigger: str | None = None
    pre_tokens: int | None = None
    post_tokens: int | None = None
    duration_ms: float | None = None
    failed: bool = False
    error: str | None = None
    summary: str | None = None

    kind = "compaction"


class HookItem(Item, eq=False):
    """One hook run, drawn as a chip."""

    hook: HookRun | None = None

    kind = "hook"


class StopSummaryItem(Item, eq=False):
    """A stop-hook summary: how many hooks ran, their commands and durations, errors."""

    count: int = 0
    infos: list[dict[str, Any]] = msgspec.field(default_factory=list)
    errors: list[Any] = msgspec.field(default_factory=list)
    prevented: bool = False
    stop_reason: str | None = None
    level: str | None = None

    kind = "stop_summary"


class NoticeItem(Item, eq=False):
    """A one-line event: API retry, rate limit, notification, denial, system message…

    ``level`` is ``info``, ``warning`` or ``error``; ``detail`` is optional longer text."""

    category: str = ""
    text: str = ""
    level: str = "info"
    detail: str | None = None

    kind = "notice"


class TurnFooterItem(Item, eq=False):
    """The end of a turn: duration, cost, tokens, outcome (``turn`` is
    ``turn_ref.index``)."""

    turn_ref: Turn | None = None

    kind = "turn_footer"


class ProblemItem(Item, eq=False):
    """A malformed line or a frame of an unknown kind, shown with its line number.

    A run of consecutive malformed lines with the same reason is one item:
    ``count`` lines, ``line_no`` to ``last_line_no``."""

    problem: str = "malformed"
    """``malformed`` | ``unknown``."""
    kind_key: str = ""
    reason: str = ""
    count: int = 1
    last_line_no: int = 0

    kind = "problem"


# --- things items point at ------------------------------------------------------------------


class ToolCall(msgspec.Struct, eq=False):
    """A tool_use paired with its result, keyed by the tool_use id."""

    id: str
    name: str
    input: Any
    agent: str
    turn: int | None
    line_no: int
    status: CallStatus = "pending"
    result: Any = None
    """The tool_result ``content`` (a string or a list of blocks)."""
    is_error: bool = False
    result_payload: Any = None
    """The structured ``tool_use_result`` as a ``msgspec.Raw`` (decode on demand)."""
    result_line_no: int | None = None
    heartbeats: int = 0
    hook_heartbeats: int = 0
    elapsed: float | None = None
    """Seconds the call has been running, from heartbeats and progress frames."""
    started_at: float | None = None
    """When the call was made (epoch seconds, from the row's timestamp or the
    frame's arrival), for :attr:`duration`."""
    duration: float | None = None
    """How long the call took (seconds), once finished: the result's own
    ``durationMs`` when it gives one, else result time minus call time."""
    task_id: str | None = None
    """The task this call became (a background shell, a sub-agent, a monitor…)."""
    background: bool = False
    subagent: str | None = None
    """The agent id of the sub-agent this call started (its own tool_use id)."""
    denied_reason: str | None = None
    awaiting_permission: bool = False
    """The CLI asked the host (``can_use_tool``) and no answer has shown yet."""
    item: ToolItem | None = None
    tool: Any = None
    """The canonical :data:`reducer.tools.Tool` of ``name`` and ``input``, built once on
    first use by :func:`reducer.queries.canonical_tool` (``None`` until then)."""

    @property
    def finished(self) -> bool:
        return self.status in ("done", "failed", "denied", "interrupted")


class HookRun(msgspec.Struct, eq=False):
    """One hook execution, from hook_started to hook_response (or a disk attachment)."""

    hook_id: str
    name: str
    event: str
    line_no: int
    turn: int | None
    status: HookStatus = "running"
    exit_code: int | None = None
    output: str = ""
    stdout: str = ""
    stderr: str = ""
    progress: int = 0
    item: HookItem | None = None

    @property
    def label(self) -> str:
        """The hook as it is named: its name, which says its event
        (``PreToolUse:Bash``, ``SessionStart:startup``, ``Stop``), else ``event:name``."""
        name, event = self.name, self.event
        if not name or not event or name.startswith(event):
            return name or event
        return f"{event}:{name}"


class Task(msgspec.Struct, eq=False):
    """A background shell, sub-agent, monitor or workflow, keyed by task_id."""

    task_id: str
    task_type: str | None = None
    description: str = ""
    tool_use_id: str | None = None
    backgrounded: bool = False
    status: TaskStatus = "running"
    state: str | None = None
    """The CLI's own word for the task's state, as its latest frame said it
    (``completed``, ``killed``, ``stopped``, ``paused``…)."""
    subagent_type: str | None = None
    started_line: int | None = None
    started_at: float | None = None
    ended_at: float | None = None
    end_time: float | None = None
    """``task_updated.patch.end_time`` (epoch ms) when the CLI gives it."""
    total_tokens: int | None = None
    tool_uses: int | None = None
    duration_ms: float | None = None
    last_tool: str | None = None
    activity: str | None = None
    """What the task is doing now, from its latest ``task_progress``."""
    summary: str | None = None
    output_file: str | None = None
    error: str | None = None
    workflow_phases: list[WorkflowPhase] | None = None
    """A workflow's phases, from its latest ``task_progress`` (``None``: not a workflow)."""
    workflow_agents: list[WorkflowAgent] | None = None
    """A workflow's agents, from the same frame."""
    in_roster: bool = False
    turn: int | None = None

    @property
    def running(self) -> bool:
        return self.status in ("pending", "running")


class WorkflowPhase(msgspec.Struct, eq=False):
    """One phase of a workflow (a ``workflow_phase`` step)."""

    index: int | None
    title: str


class WorkflowAgent(msgspec.Struct, eq=False):
    """One agent of a workflow (a ``workflow_agent`` step), as its latest snapshot said."""

    label: str
    phase: int | None
    """The index of its :class:`WorkflowPhase` (``None``: in none)."""
    status: TaskStatus
    duration_ms: float | None = None
    tokens: int | None = None


class Totals(msgspec.Struct):
    """Token counters."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0

    def add(self, other: Totals, sign: int = 1) -> None:
        self.input_tokens += sign * other.input_tokens
        self.output_tokens += sign * other.output_tokens
        self.cache_creation_input_tokens += sign * other.cache_creation_input_tokens
        self.cache_read_input_tokens += sign * other.cache_read_input_tokens

    def add_counts(self, new: tuple[int, int, int, int],
                   old: tuple[int, int, int, int] | None = None) -> None:
        """Add :attr:`counts` ``new``, taking away ``old`` (what was added before
        for the same message), without making a Totals of either."""
        if old is None:
            self.input_tokens += new[0]
            self.output_tokens += new[1]
            self.cache_creation_input_tokens += new[2]
            self.cache_read_input_tokens += new[3]
        else:
            self.input_tokens += new[0] - old[0]
            self.output_tokens += new[1] - old[1]
            self.cache_creation_input_tokens += new[2] - old[2]
            self.cache_read_input_tokens += new[3] - old[3]

    @property
    def counts(self) -> tuple[int, int, int, int]:
        """The four counters in field order (``Totals(*counts)`` makes them
        again): a tuple is a third of the cost of a Totals to restore."""
        return (self.input_tokens, self.output_tokens, self.cache_creation_input_tokens,
                self.cache_read_input_tokens)

    @property
    def total(self) -> int:
        return (self.input_tokens + self.output_tokens + self.cache_creation_input_tokens
                + self.cache_read_input_tokens)

    def as_dict(self) -> dict[str, int]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_creation_input_tokens": self.cache_creation_input_tokens,
            "cache_read_input_tokens": self.cache_read_input_tokens,
        }


class Turn(msgspec.Struct, eq=False):
    """One human prompt and everything until its ``result``."""

    index: int
    prompt: str | None
    line_no: int
    session_id: str | None = None
    end_line: int | None = None
    closed: bool = False
    is_error: bool = False
    subtype: str | None = None
    terminal_reason: str | None = None
    stop_reason: str | None = None
    errors: list[str] = msgspec.field(default_factory=list)
    duration_ms: float | None = None
    duration_api_ms: float | None = None
    num_turns: int | None = None
    cost_usd: float | None = None
    usage: Totals = msgspec.field(default_factory=Totals)
    thinking_tokens: int = 0
    tool_calls: int = 0
    failed_calls: int = 0
    hooks: list[str] = msgspec.field(default_factory=list)
    stop_summaries: int = 0
    permission_denials: list[dict[str, Any]] = msgspec.field(default_factory=list)
    local_command: str | None = None
    result_text: str | None = None
    api_error_status: int | None = None
    """The HTTP status of the API error that ended the turn (``result.api_error_status``)."""
    started_by: TurnStart | None = None
    """What opened the turn: a typed ``prompt``, a slash ``command``, a background
    task's ``task-notification``; ``None`` when the input did not say (a ``-p``
    prompt is not echoed)."""
    api_total_ms: float | None = None
    """The result's ``duration_api_ms`` as sent: the query's running total (see
    :attr:`duration_api_ms`, this turn's own share)."""
    answered: bool = False
    """The model took part: an assistant message came, or its ``result`` counted
    model turns (a local command such as ``/clear`` or ``/compact`` has none)."""
    number: int | None = None
    """This turn's number among the session's model turns (1 for the first), as
    its prompt and footer say it; ``None`` until it is known to be one (a slash
    command's turn is one once the model answers), and for a local command."""
    local: bool = False
    """A local command (``/compact``, ``/model``, ``/exit``…): a prompt the CLI
    answered itself; no model turn, no number, no footer."""

    @property
    def outcome(self) -> TurnOutcome | None:
        """How the turn ended (``None`` while open): ``interrupted`` when it was
        aborted, ``failed`` when its result says ``is_error`` whatever its subtype,
        else ``success``."""
        if not self.closed:
            return None
        if (self.terminal_reason or "").startswith("aborted"):
            return "interrupted"
        return "failed" if self.is_error else "success"


class RequestTokens(NamedTuple):
    """The tokens one API request was billed for, by price."""

    input: int
    """Input tokens not read from or written to the cache."""
    output: int
    cache_read: int
    cache_write_5m: int
    """Cache writes kept 5 minutes (and those of a usage that does not say: the default)."""
    cache_write_1h: int

    @property
    def total_input(self) -> int:
        """Everything the request sent: what a long-context tier is decided on."""
        return self.input + self.cache_read + self.cache_write_5m + self.cache_write_1h


class Request(msgspec.Struct, gc=False):
    """One API request's tokens, counted once (its message id and request id)
    wherever its rows appear: main file, sub-agent file, a resumed or forked
    copy. The latest frame's figures count."""

    agent: str
    """The agent that made it (:data:`MAIN` or a sub-agent's id)."""
    model: str
    at: str | None
    """When it was made (ISO 8601): the date its price is looked up for."""
    tokens: RequestTokens
    turn: int = -1
    """The main-loop turn it belongs to (``Turn.index``), ``-1`` for none."""
    after_compaction: bool = False
    """The main loop's first request after a compaction (its context is the summary)."""


class Agent(msgspec.Struct, eq=False):
    """A conversation with its own transcript: the main one or a sub-agent."""

    id: str
    depth: int = 0
    parent: str | None = None
    """The agent whose call started this one (``None`` for the main agent)."""
    description: str = ""
    subagent_type: str | None = None
    items: list[Item] = msgspec.field(default_factory=list)
    tool_calls: int = 0
    last_tool: str | None = None
    output_tokens: int = 0
    status: CallStatus = "running"
    agent_file_id: str | None = None
    total_tokens: int | None = None
    """All tokens the sub-agent used, from its task's usage (stream-json), when known."""
