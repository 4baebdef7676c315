"""Typed frames: the msgspec Structs that both input formats decode into.

One tagged union (``type`` is the tag) covers the CLI's stream-json stdout and
the on-disk transcript rows under ``~/.claude/projects``: both share ``user``,
``assistant`` and ``system``, so those Structs carry the snake_case wire fields
and the camelCase row fields side by side. ``system`` frames are decoded a
second time by ``subtype`` into their own Struct.

Decoding is lossless: every frame keeps its line number, byte offset and the
original bytes (``raw``); fields that are not modelled are still in ``raw``
and :func:`reducer.decode.extras` returns them. Nothing here imports Textual.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, TypeAlias, TypedDict, Union

import msgspec
from msgspec import Raw, field

__all__ = [
    "Frame", "Block", "Usage", "AssistantMessage", "UserMessage",
    "Assistant", "User", "Result", "StreamEvent", "ToolProgress", "RateLimitEvent",
    "CommandLifecycle", "ConversationReset", "ToolUseSummary", "PromptSuggestion", "ControlRequest",
    "ControlResponse", "ControlCancelRequest", "KeepAlive", "Progress", "Attachment", "Summary", "CustomTitle",
    "AiTitle", "LastPrompt", "CostState", "MetadataRow", "System", "Init", "Status", "CompactBoundary",
    "ApiRetry", "TaskStarted", "TaskProgress", "TaskUpdated", "TaskNotification",
    "BackgroundTasksChanged", "ThinkingTokens", "HookStarted", "HookProgress", "HookResponse",
    "StopHookSummary", "TurnDuration", "SessionStateChanged", "Notification",
    "PermissionDenied", "Informational", "LocalCommandOutput", "LocalCommand", "ApiError", "SystemOther",
    "Unknown", "Malformed", "Blank", "Entry", "TOP_LEVEL", "SYSTEM_SUBTYPES", "META_FIELDS",
    "JSON", "MAX_DEPTH", "VALUE_DEPTH", "BLOCK_DEPTH", "dec_hook", "TOOL_INPUT_SHAPES", "CompactMetadata", "RateLimitInfo",
    "ModelUsage", "PermissionDenial", "SubagentRetry", "BackgroundTask", "WorkflowStep", "HookInfo",
]

# Wire names no JSON frame uses, so decoding never fills the bookkeeping fields.
_LINE = "@cctv:line_no"
_OFFSET = "@cctv:offset"
_RAW = "@cctv:raw"

_NO_RAW = Raw()

META_FIELDS = frozenset({"line_no", "offset", "raw"})
"""Struct fields that are cctv's bookkeeping, not part of the frame."""


# --- how deep a frame may nest ---------------------------------------------------------
#
# Real frames nest at most 14 arrays/objects deep. Every free-form value the
# fold reads (a tool's input, a hook's output, a dict of counters) is typed
# JSON: its first TYPED_DEPTH levels are a plain union msgspec checks in C, and
# anything below reaches `dec_hook`, which measures the rest (rare: real values
# stop above it). A value nested deeper than VALUE_DEPTH is a validation error,
# so the decoder reports a malformed line and nothing after it ever walks a
# deep value. Content blocks are bounded the same way (BLOCK_DEPTH). The whole
# line, unmodelled fields included, is held to MAX_DEPTH where it is walked as
# a whole: `cctv check`'s round trip and the raw view
# (:func:`reducer.decode.nesting_exceeds`).

MAX_DEPTH = 64
"""Deepest nesting of arrays and objects a line may have."""

VALUE_DEPTH = 48
"""Deepest nesting of a free-form value below its field (with the field's own
depth, under MAX_DEPTH)."""

BLOCK_DEPTH = 6
"""Content blocks inside content blocks (a tool_result's blocks): real frames use 2."""

_TYPED_DEPTH = 4
"""Levels of a free-form value typed as a union (the type graph doubles per level,
and msgspec walks all of it for every field typed :data:`JSON` when it builds the
decoders: at 6 that was ~60 ms of every start; values deeper than this are rare
and cost one :func:`dec_hook` walk each)."""


class _AnyValue(type):
    def __instancecheck__(cls, obj: object) -> bool:
        return True  # msgspec checks what dec_hook returns: any value is one


class _Deeper(metaclass=_AnyValue):
    """The type of a free-form value found ``_TYPED_DEPTH`` levels below its field:
    msgspec decodes it as ``Any`` and hands it to :func:`dec_hook` to measure."""


def _too_deep(value: Any, limit: int) -> bool:
    """Whether ``value`` nests more than ``limit`` lists/dicts deep (iteratively)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if type(item) is dict else item if type(item) is list else ()
        for child in children:
            if type(child) is dict or type(child) is list:
                if depth >= limit:
                    return True
                stack.append((child, depth + 1))
    return False


def dec_hook(kind: type, value: Any) -> Any:
    """msgspec ``dec_hook`` of every frame decoder: measures deep free-form values."""
    if kind is _Deeper:
        if (type(value) is dict or type(value) is list) and _too_deep(value, VALUE_DEPTH - _TYPED_DEPTH):
            raise ValueError(f"nested too deep (a value more than {VALUE_DEPTH} levels deep)")
        return value
    raise NotImplementedError(f"no decoder for {kind!r}")


def _bounded_json(depth: int) -> Any:
    """A JSON value whose first ``depth`` levels are typed, the rest :class:`_Deeper`."""
    value: Any = _Deeper
    for _ in range(depth):
        value = Union[None, bool, int, float, str, list[value], dict[str, value]]  # noqa: UP007
    return value


# A free-form JSON value of bounded depth: decoded to dict/list/str/... exactly like Any.
if TYPE_CHECKING:
    JSON: TypeAlias = Any
else:
    JSON = _bounded_json(_TYPED_DEPTH)


class Entry(msgspec.Struct, kw_only=True, gc=False):
    """Base of everything a line decodes to: where it came from and its bytes
    (``raw`` is empty when the reader left them on disk: ``Feed(keep_raw=False)``)."""

    line_no: int = field(default=0, name=_LINE)
    offset: int = field(default=0, name=_OFFSET)
    raw: bytes = field(default=b"", name=_RAW)

    kind: ClassVar[str] = "?"

    @property
    def kind_key(self) -> str:
        """The counting key for this entry: ``"assistant"``, ``"system/init"``…"""
        return self.kind


class Frame(Entry, tag_field="type", kw_only=True, gc=False):
    """A decoded JSON object with a known ``type``."""


# --- the keys read inside free-form objects -----------------------------------------------
#
# Some fields are objects the fold and the widgets keep as dicts (a rate limit,
# model usage, a workflow's progress…) and read keys of. Each is a TypedDict:
# still a plain dict, but msgspec checks the type of every declared key while
# decoding, so a key of the wrong type makes the line malformed, with its
# reason, instead of an exception in a widget. Keys not declared are not kept
# in the dict (they stay in ``raw``; :func:`reducer.decode.extras` lists them):
# declare a key here before reading it.


class CompactMetadata(TypedDict, total=False):
    trigger: str | None
    pre_tokens: int | None
    post_tokens: int | None
    duration_ms: float | None
    cumulative_dropped_tokens: int | None
    preserved_segment: JSON
    preserved_messages: JSON
    # on disk, camelCase
    preTokens: int | None
    postTokens: int | None
    durationMs: float | None
    preservedSegment: JSON
    preservedMessages: JSON


class RateLimitInfo(TypedDict, total=False):
    status: str | None
    resetsAt: float | None
    rateLimitType: str | None
    utilization: float | None
    overageStatus: str | None
    overageResetsAt: float | None
    overageDisabledReason: str | None
    isUsingOverage: bool | None
    surpassedThreshold: float | None
    limitScope: str | None
    unifiedWindows: JSON


class ModelUsage(TypedDict, total=False):
    inputTokens: int | None
    outputTokens: int | None
    cacheReadInputTokens: int | None
    cacheCreationInputTokens: int | None
    cacheCreationEphemeral5mInputTokens: int | None
    cacheCreationEphemeral1hInputTokens: int | None
    webSearchRequests: int | None
    thinkingTokens: int | None
    costUSD: float | None
    contextWindow: int | None
    maxOutputTokens: int | None
    canonicalModel: str | None
    provider: str | None
    costBasis: str | None


class PermissionDenial(TypedDict, total=False):
    tool_name: str | None
    tool_use_id: str | None
    tool_input: JSON


class SubagentRetry(TypedDict, total=False):
    agent_id: str | None
    attempt: int | None
    max_retries: int | None
    retry_delay_ms: float | None
    error_status: int | None
    error_category: str | None


class BackgroundTask(TypedDict, total=False):
    task_id: str | None
    run_id: str | None
    task_type: str | None
    subagent_type: str | None
    description: str | None
    parent_task_id: str | None
    ambient: JSON


class WorkflowStep(TypedDict, total=False):
    type: str | None
    index: int | None
    title: str | None
    label: str | None
    agentId: str | None
    phaseIndex: int | None
    phaseTitle: str | None
    state: str | None
    lastToolName: str | None
    lastToolSummary: str | None
    resultPreview: str | None
    durationMs: float | None
    tokens: int | None


class HookInfo(TypedDict, total=False):
    command: str | None
    durationMs: float | None


# --- content blocks -----------------------------------------------------------------


class Block(msgspec.Struct, kw_only=True, gc=False):
    """One content block of a message, of any block type.

    One Struct with optional fields rather than a tagged union, so that block
    types the CLI adds later still decode (their other fields stay in ``raw``).
    """

    type: str = ""
    text: str | None = None
    thinking: str | None = None
    signature: str | None = None
    data: str | None = None  # redacted_thinking
    id: str | None = None  # tool_use / server_tool_use
    name: str | None = None
    input: JSON = None
    tool_use_id: str | None = None  # tool_result
    content: str | list[_Block1] | None = None
    """Text, or blocks (each a :class:`Block`; at most :data:`BLOCK_DEPTH` levels)."""
    is_error: bool | None = None
    source: JSON = None  # image / document


def _nested_blocks() -> type[Block]:
    """The Block subclasses of each nesting level, the innermost holding text only:
    ``_Block1.content`` is ``str | list[_Block2]``, … ``_Block<BLOCK_DEPTH-1>.content`` a ``str``."""
    inner: Any = None
    for level in range(BLOCK_DEPTH - 1, 0, -1):
        content: Any = (str | None) if inner is None else (str | list[inner] | None)
        name = f"_Block{level}"
        inner = msgspec.defstruct(name, [("content", content, None)], bases=(Block,),
                                  kw_only=True, gc=False, module=__name__)
        globals()[name] = inner  # picklable (checkpoints hold blocks)
    return inner


_Block1 = _nested_blocks()


class CacheCreation(msgspec.Struct, kw_only=True, gc=False):
    """A usage's cache writes by how long they are kept (priced differently)."""

    ephemeral_5m_input_tokens: int | None = 0
    ephemeral_1h_input_tokens: int | None = 0


class Usage(msgspec.Struct, kw_only=True, gc=False):
    """Token counters; ``None`` (third-party backends) reads as 0."""

    input_tokens: int | None = 0
    output_tokens: int | None = 0
    cache_creation_input_tokens: int | None = 0
    cache_read_input_tokens: int | None = 0
    cache_creation: CacheCreation | None = None
    """The cache writes split by time kept (CLI 1.0.8x on); absent: all 5-minute ones."""


class AssistantMessage(msgspec.Struct, kw_only=True, gc=False):
    id: str = ""
    model: str = ""
    content: list[Block] = []
    stop_reason: str | None = None
    usage: Usage | None = None


class UserMessage(msgspec.Struct, kw_only=True, gc=False):
    role: str = "user"
    content: str | list[Block] = ""


# --- conversational frames ----------------------------------------------------------


class _Row(Frame, kw_only=True, gc=False):
    """Fields shared by wire frames and on-disk message rows."""

    uuid: str | None = None
    session_id: str | None = None
    timestamp: str | None = None
    # on-disk row fields
    parentUuid: str | None = None
    isSidechain: bool = False
    sessionId: str | None = None
    agentId: str | None = None
    isMeta: bool = False
    version: str | None = None
    cwd: str | None = None
    gitBranch: str | None = None

    @property
    def sid(self) -> str | None:
        """The session id in either spelling."""
        return self.session_id or self.sessionId


class Assistant(_Row, tag="assistant", kw_only=True, gc=False):
    kind: ClassVar[str] = "assistant"
    message: AssistantMessage
    parent_tool_use_id: str | None = None
    error: str | None = None
    request_id: str | None = None
    requestId: str | None = None
    agent_id: str | None = None
    supersedes: list[str] | None = None
    aborted: bool = False
    isApiErrorMessage: bool = False


class User(_Row, tag="user", kw_only=True, gc=False):
    kind: ClassVar[str] = "user"
    message: UserMessage
    parent_tool_use_id: str | None = None
    isSynthetic: bool = False
    isReplay: bool = False
    isCompactSummary: bool = False
    isVisibleInTranscriptOnly: bool = False
    tool_use_result: Raw = _NO_RAW
    toolUseResult: Raw = _NO_RAW
    sourceToolAssistantUUID: str | None = None
    agent_id: str | None = None

    @property
    def synthetic(self) -> bool:
        """Nobody typed this: folded from every spelling the CLI uses (seed 003)."""
        return (
            self.isSynthetic or self.isMeta or self.isCompactSummary
            or self.isVisibleInTranscriptOnly
        )

    @property
    def result_payload(self) -> Raw | None:
        """The structured tool output (``tool_use_result`` / ``toolUseResult``), if any."""
        return self.tool_use_result or self.toolUseResult or None


class Result(Frame, tag="result", kw_only=True, gc=False):
    kind: ClassVar[str] = "result"
    subtype: str = ""
    uuid: str | None = None
    session_id: str | None = None
    is_error: bool = False
    num_turns: int | None = 0
    duration_ms: float | None = 0
    duration_api_ms: float | None = 0
    stop_reason: str | None = None
    total_cost_usd: float | None = None
    usage: Usage | None = None
    modelUsage: dict[str, ModelUsage] | None = None
    permission_denials: list[PermissionDenial] | None = None
    terminal_reason: str | None = None
    result: str | None = None
    errors: list[str] | None = None
    local_command: str | None = None
    api_error_status: int | None = None

    @property
    def kind_key(self) -> str:
        return f"result/{self.subtype}" if self.subtype else "result"


class StreamDelta(msgspec.Struct, kw_only=True, gc=False):
    type: str = ""
    text: str | None = None
    thinking: str | None = None
    partial_json: str | None = None


class StreamMessage(msgspec.Struct, kw_only=True, gc=False):
    id: str = ""
    model: str = ""


class StreamInner(msgspec.Struct, kw_only=True, gc=False):
    type: str = ""
    index: int | None = None
    delta: StreamDelta | None = None
    content_block: Block | None = None
    message: StreamMessage | None = None


class StreamEvent(Frame, tag="stream_event", kw_only=True, gc=False):
    kind: ClassVar[str] = "stream_event"
    event: StreamInner = field(default_factory=StreamInner)
    parent_tool_use_id: str | None = None
    uuid: str | None = None
    session_id: str | None = None
    api_message_id: str | None = None


class ToolProgress(Frame, tag="tool_progress", kw_only=True, gc=False):
    kind: ClassVar[str] = "tool_progress"
    tool_use_id: str
    tool_name: str = ""
    parent_tool_use_id: str | None = None
    elapsed_time_seconds: float | None = None
    heartbeat: bool = False
    task_id: str | None = None
    subagent_retry: SubagentRetry | None = None
    uuid: str | None = None
    session_id: str | None = None


class RateLimitEvent(Frame, tag="rate_limit_event", kw_only=True, gc=False):
    kind: ClassVar[str] = "rate_limit_event"
    rate_limit_info: RateLimitInfo = {}
    uuid: str | None = None
    session_id: str | None = None


class CommandLifecycle(Frame, tag="command_lifecycle", kw_only=True, gc=False):
    kind: ClassVar[str] = "command_lifecycle"
    command_uuid: str
    state: str
    uuid: str | None = None
    session_id: str | None = None


class ConversationReset(Frame, tag="conversation_reset", kw_only=True, gc=False):
    kind: ClassVar[str] = "conversation_reset"
    new_conversation_id: str | None = None
    trigger: str | None = None
    uuid: str | None = None
    session_id: str | None = None


class ToolUseSummary(Frame, tag="tool_use_summary", kw_only=True, gc=False):
    kind: ClassVar[str] = "tool_use_summary"
    summary: str = ""
    preceding_tool_use_ids: list[str] = []
    uuid: str | None = None
    session_id: str | None = None


class PromptSuggestion(Frame, tag="prompt_suggestion", kw_only=True, gc=False):
    """What the CLI suggests the user might type next."""

    kind: ClassVar[str] = "prompt_suggestion"
    suggestion: str = ""
    uuid: str | None = None
    session_id: str | None = None


class ControlRequest(Frame, tag="control_request", kw_only=True, gc=False):
    kind: ClassVar[str] = "control_request"
    request_id: str = ""
    request: dict[str, JSON] = {}


class ControlResponse(Frame, tag="control_response", kw_only=True, gc=False):
    kind: ClassVar[str] = "control_response"
    response: dict[str, JSON] = {}


class ControlCancelRequest(Frame, tag="control_cancel_request", kw_only=True, gc=False):
    kind: ClassVar[str] = "control_cancel_request"
    request_id: str = ""


class KeepAlive(Frame, tag="keep_alive", kw_only=True, gc=False):
    kind: ClassVar[str] = "keep_alive"


# --- on-disk rows --------------------------------------------------------------------


class ProgressData(msgspec.Struct, kw_only=True, gc=False):
    type: str = ""
    elapsedTimeSeconds: float | None = None
    hookEvent: str | None = None
    hookName: str | None = None
    command: str | None = None  # hook_progress: the hook's command line
    agentId: str | None = None


class Progress(_Row, tag="progress", kw_only=True, gc=False):
    kind: ClassVar[str] = "progress"
    data: ProgressData = field(default_factory=ProgressData)
    toolUseID: str | None = None
    parentToolUseID: str | None = None

    @property
    def kind_key(self) -> str:
        return f"progress/{self.data.type}" if self.data.type else "progress"


class AttachmentBody(msgspec.Struct, kw_only=True, gc=False):
    type: str = ""
    hookName: str | None = None
    hookEvent: str | None = None
    toolUseID: str | None = None
    content: JSON = None
    stdout: str | None = None
    stderr: str | None = None
    exitCode: int | None = None
    command: str | None = None
    durationMs: float | None = None
    timedOut: bool | None = None  # hook_cancelled: the hook ran past its timeout
    prompt: JSON = None  # queued_command: the queued text (e.g. a <task-notification>)


class Attachment(_Row, tag="attachment", kw_only=True, gc=False):
    kind: ClassVar[str] = "attachment"
    attachment: AttachmentBody = field(default_factory=AttachmentBody)

    @property
    def kind_key(self) -> str:
        return f"attachment/{self.attachment.type}" if self.attachment.type else "attachment"


class Summary(Frame, tag="summary", kw_only=True, gc=False):
    kind: ClassVar[str] = "summary"
    summary: str = ""
    leafUuid: str | None = None


class CustomTitle(Frame, tag="custom-title", kw_only=True, gc=False):
    kind: ClassVar[str] = "custom-title"
    customTitle: str = ""
    sessionId: str | None = None


class AiTitle(Frame, tag="ai-title", kw_only=True, gc=False):
    kind: ClassVar[str] = "ai-title"
    aiTitle: str = ""
    sessionId: str | None = None


class LastPrompt(Frame, tag="last-prompt", kw_only=True, gc=False):
    kind: ClassVar[str] = "last-prompt"
    lastPrompt: str | None = None
    leafUuid: str | None = None
    sessionId: str | None = None


class CostState(Frame, tag="cost-state", kw_only=True, gc=False):
    """The CLI's running cost record in a transcript (last one wins)."""

    kind: ClassVar[str] = "cost-state"
    totalCostUSD: float | None = None
    modelUsage: dict[str, ModelUsage] | None = None
    sessionId: str | None = None


class MetadataRow(Frame, kw_only=True, gc=False):
    """A row the fold does not read (queue-operation, api-request, …): its
    fields are skipped by the decoder without being built, so it costs little."""


_METADATA_KINDS = (
    "queue-operation", "api-request", "api-request-resumed", "api-request-shape",
    "api-request-blob", "frame-link", "observer-ref", "continued-in", "resume-head-vouch",
    "file-history-snapshot", "file-history-delta", "tag", "agent-name", "agent-color",
    "agent-setting", "mode", "permission-mode", "relocated", "worktree-state", "pr-link",
    "session-owner", "tools-used", "ended-by-model", "content-replacement",
    "memory-mode", "data-flow-records", "atis-latch",
)


def _metadata_class(kind: str) -> type[MetadataRow]:
    name = "Meta_" + kind.replace("-", "_")
    cls = msgspec.defstruct(name, [], bases=(MetadataRow,), tag=kind, kw_only=True, gc=False)
    cls.kind = kind  # type: ignore[attr-defined]
    return cls


METADATA_CLASSES: dict[str, type[MetadataRow]] = {k: _metadata_class(k) for k in _METADATA_KINDS}


# --- system frames -------------------------------------------------------------------


class System(_Row, tag="system", kw_only=True, gc=False):
    """A ``system`` frame; the decoder re-decodes it by ``subtype``."""

    kind: ClassVar[str] = "system"
    subtype: str = ""
    """Empty for the subtype-less rows of CLI 1.0.x (hook results, model fallbacks):
    those decode as :class:`SystemOther` and are shown as notices."""
    content: JSON = None
    level: str | None = None
    parent_tool_use_id: str | None = None

    @property
    def kind_key(self) -> str:
        return f"system/{self.subtype}" if self.subtype else "system"


class Init(System, tag="system", kw_only=True, gc=False):
    cwd: str | None = None
    model: str | None = None
    tools: list[str] = []
    mcp_servers: list[dict[str, JSON]] = []
    permissionMode: str | None = None
    claude_code_version: str | None = None
    slash_commands: list[str] = []
    agents: list[str] = []
    output_style: str | None = None


class Status(System, tag="system", kw_only=True, gc=False):
    status: str | None = None
    permissionMode: str | None = None
    compact_result: str | None = None
    compact_error: str | None = None


class CompactBoundary(System, tag="system", kw_only=True, gc=False):
    compact_metadata: CompactMetadata | None = None
    compactMetadata: CompactMetadata | None = None
    logical_parent_uuid: str | None = None
    logicalParentUuid: str | None = None

    def meta(self, snake: str, camel: str) -> Any:
        """One compact_metadata field in either spelling."""
        for md in (self.compact_metadata, self.compactMetadata):
            if md:
                if snake in md:
                    return md[snake]
                if camel in md:
                    return md[camel]
        return None


class ApiRetry(System, tag="system", kw_only=True, gc=False):
    attempt: int | None = None
    max_retries: int | None = None
    retry_delay_ms: float | None = None
    error_status: int | None = None
    error: JSON = None


class TaskUsage(msgspec.Struct, kw_only=True, gc=False):
    total_tokens: int | None = 0
    tool_uses: int | None = 0
    duration_ms: float | None = 0


class TaskStarted(System, tag="system", kw_only=True, gc=False):
    task_id: str
    tool_use_id: str | None = None
    description: str = ""
    task_type: str | None = None
    subagent_type: str | None = None
    is_backgrounded: bool | None = None
    workflow_name: str | None = None
    prompt: str | None = None
    parent_task_id: str | None = None
    """The task (a sub-agent's) that started this one."""
    spawn_depth: int | None = None


class TaskProgress(System, tag="system", kw_only=True, gc=False):
    task_id: str
    tool_use_id: str | None = None
    description: str = ""
    usage: TaskUsage | None = None
    last_tool_name: str | None = None
    summary: str | None = None
    workflow_progress: list[WorkflowStep] | None = None


class TaskPatch(msgspec.Struct, kw_only=True, gc=False):
    status: str | None = None
    description: str | None = None
    end_time: float | None = None
    error: str | None = None
    is_backgrounded: bool | None = None


class TaskUpdated(System, tag="system", kw_only=True, gc=False):
    task_id: str
    patch: TaskPatch = field(default_factory=TaskPatch)


class TaskNotification(System, tag="system", kw_only=True, gc=False):
    task_id: str
    tool_use_id: str | None = None
    status: str = ""
    output_file: str | None = None
    summary: str | None = None
    usage: TaskUsage | None = None


class BackgroundTasksChanged(System, tag="system", kw_only=True, gc=False):
    tasks: list[BackgroundTask] = []


class ThinkingTokens(System, tag="system", kw_only=True, gc=False):
    estimated_tokens: int | None = 0
    estimated_tokens_delta: int | None = 0


class HookStarted(System, tag="system", kw_only=True, gc=False):
    hook_id: str
    hook_name: str = ""
    hook_event: str = ""


class HookProgress(System, tag="system", kw_only=True, gc=False):
    hook_id: str
    hook_name: str = ""
    hook_event: str = ""
    stdout: str | None = None
    stderr: str | None = None
    output: str | None = None


class HookResponse(System, tag="system", kw_only=True, gc=False):
    hook_id: str
    hook_name: str = ""
    hook_event: str = ""
    output: str | None = None
    stdout: str | None = None
    stderr: str | None = None
    exit_code: int | None = None
    outcome: str | None = None


class StopHookSummary(System, tag="system", kw_only=True, gc=False):
    hookCount: int | None = 0
    hookInfos: list[HookInfo] = []
    hookErrors: list[JSON] = []
    preventedContinuation: bool = False
    stopReason: str | None = None
    hasOutput: bool = False
    toolUseID: str | None = None


class TurnDuration(System, tag="system", kw_only=True, gc=False):
    durationMs: float | None = None
    messageCount: int | None = None


class VcsStateChanged(System, tag="system", kw_only=True, gc=False):
    """``vcs_state_changed``: a commit, a push or another branch in the session's repository."""

    change: str | None = msgspec.field(default=None, name="kind")
    branch: str | None = None
    cwd: str | None = None


class SessionStateChanged(System, tag="system", kw_only=True, gc=False):
    state: str | None = None


class Notification(System, tag="system", kw_only=True, gc=False):
    key: str | None = None
    text: str = ""
    priority: str | None = None


class PermissionDenied(System, tag="system", kw_only=True, gc=False):
    tool_name: str = ""
    tool_use_id: str | None = None
    decision_reason: str | None = None
    decision_reason_type: str | None = None
    message: str | None = None


class Informational(System, tag="system", kw_only=True, gc=False):
    tool_use_id: str | None = None
    prevent_continuation: bool | None = None


class LocalCommandOutput(System, tag="system", kw_only=True, gc=False):
    pass


class LocalCommand(System, tag="system", kw_only=True, gc=False):
    """On disk (newer CLIs): a slash command the CLI ran itself, or its output, in ``content``."""


class ApiError(System, tag="system", kw_only=True, gc=False):
    error: JSON = None
    retryInMs: float | None = None
    retryAttempt: int | None = None
    maxRetries: int | None = None


class SystemOther(System, tag="system", kw_only=True, gc=False):
    """A ``system`` subtype the fold has no rule for; shown generically."""


SYSTEM_SUBTYPES: dict[str, type[System]] = {
    "init": Init,
    "status": Status,
    "compact_boundary": CompactBoundary,
    "api_retry": ApiRetry,
    "task_started": TaskStarted,
    "task_progress": TaskProgress,
    "task_updated": TaskUpdated,
    "task_notification": TaskNotification,
    "background_tasks_changed": BackgroundTasksChanged,
    "thinking_tokens": ThinkingTokens,
    "hook_started": HookStarted,
    "hook_progress": HookProgress,
    "hook_response": HookResponse,
    "stop_hook_summary": StopHookSummary,
    "turn_duration": TurnDuration,
    "session_state_changed": SessionStateChanged,
    "vcs_state_changed": VcsStateChanged,
    "notification": Notification,
    "permission_denied": PermissionDenied,
    "informational": Informational,
    "local_command_output": LocalCommandOutput,
    "local_command": LocalCommand,
    "api_error": ApiError,
}

TOP_LEVEL: tuple[type[Frame], ...] = (
    Assistant, User, Result, StreamEvent, ToolProgress, RateLimitEvent, CommandLifecycle,
    ConversationReset, ToolUseSummary, PromptSuggestion, ControlRequest, ControlResponse,
    ControlCancelRequest,
    KeepAlive,
    Progress, Attachment, Summary, CustomTitle, AiTitle, LastPrompt, CostState, System,
    *METADATA_CLASSES.values(),
)


# --- tool inputs the fold reads --------------------------------------------------------
#
# A tool's input is free-form (each tool its own), so it cannot be typed in the
# union; the decoder converts the input of the tools named here to their shape
# (msgspec.convert, a few per session) and a wrong type is a malformed line.


class AgentInputShape(msgspec.Struct, kw_only=True, gc=False):
    """The keys of an Agent/Task tool call's input the fold reads: what the sub-agent is."""

    description: str | None = None
    subagent_type: str | None = None
    prompt: str | None = None


TOOL_INPUT_SHAPES: dict[str, type[msgspec.Struct]] = {"Agent": AgentInputShape, "Task": AgentInputShape}
"""Tool inputs the fold reads keys of, by tool name (checked by the decoder)."""


# --- what is not a known frame --------------------------------------------------------


class Unknown(Entry, kw_only=True, gc=False):
    """A JSON object whose ``type`` (or ``system`` subtype) cctv does not know."""

    type: str = ""
    subtype: str | None = None

    kind: ClassVar[str] = "unknown"

    @property
    def kind_key(self) -> str:
        return f"{self.type}/{self.subtype}" if self.subtype else (self.type or "<no type>")


class Malformed(Entry, kw_only=True, gc=False):
    """A line that is not a usable frame, with a one-line reason."""

    reason: str = ""

    kind: ClassVar[str] = "malformed"


class Blank(Entry, kw_only=True, gc=False):
    """An empty (or whitespace-only) line."""

    kind: ClassVar[str] = "blank"
