"""The state a viewer draws, as the fold builds it.

Mutable msgspec Structs: the fold updates them in place and
reports what it touched as :class:`Change` records. Each transcript item is an
:class:`Item` with a ``version`` that goes up whenever it changes, so a view
can cache what it rendered per ``(item, version, width)``.
"""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

import msgspec

__all__ = [
    "Change", "Item", "PromptItem", "TextItem", "ThinkingItem", "ToolItem", "CompactionItem",
    "HookItem", "StopSummaryItem", "NoticeItem", "TurnFooterItem", "ProblemItem",
    "ToolCall", "HookRun", "Task", "Turn", "Agent", "Totals", "MAIN", "CallStatus",
    "TERMINAL_TASK_STATUSES", "ChangeKind", "Activity", "ActivityKind", "TurnStart", "RateLimit", "TurnOutcome",
]

MAIN = ""
"""Agent id of the main conversation; sub-agents are keyed by the tool_use id that spawned them."""

CallStatus = Literal["pending", "running", "done", "failed", "denied", "interrupted"]

TurnStart = Literal["prompt", "command", "task-notification"]
TurnOutcome = Literal["success", "failed", "interrupted"]

TERMINAL_TASK_STATUSES = frozenset({"completed", "failed", "killed", "stopped", "cancelled"})


ChangeKind = Literal["item_added", "item_updated", "agent_added", "agent_updated", "task",
                     "hook", "session"]
"""What a :class:`Change` is about:

- ``item_added`` / ``item_updated``: the item ``agent``'s ``items[index]`` is new / changed
  (a view appends on ``item_added`` and re-measures on ``item_updated``);
- ``agent_added``: the agent ``agent`` now exists (its transcript is empty so far);
- ``agent_updated``: the agent ``agent`` changed (its status: done, failed…);
- ``task`` / ``hook``: the task or hook run with id ``key`` changed;
- ``session``: session info, status or totals changed.

A source that is truncated or replaced is not a change: the viewer starts a
new :class:`~reducer.fold.Session` (and its views) from scratch."""


class Change(NamedTuple):
    """What one applied frame touched (see :data:`ChangeKind`)."""

    what: ChangeKind
    agent: str | None = None
    index: int = -1
    key: str | None = None


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
    status: str = "running"
    """running | success | error | cancelled | ran (on disk, outcome not recorded)."""
    exit_code: int | None = None
    output: str = ""
    stdout: str = ""
    stderr: str = ""
    progress: int = 0
    item: HookItem | None = None


class Task(msgspec.Struct, eq=False):
    """A background shell, sub-agent, monitor or workflow, keyed by task_id."""

    task_id: str
    task_type: str | None = None
    description: str = ""
    tool_use_id: str | None = None
    backgrounded: bool = False
    status: str = "running"
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
    workflow_progress: list[dict[str, Any]] | None = None
    in_roster: bool = False
    turn: int | None = None

    @property
    def running(self) -> bool:
        return self.status not in TERMINAL_TASK_STATUSES


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
    status: str = "running"
    agent_file_id: str | None = None
    total_tokens: int | None = None
    """All tokens the sub-agent used, from its task's usage (stream-json), when known."""
