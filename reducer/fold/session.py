"""The fold: :class:`Session`, and the one table that routes each kind of entry.

A :class:`Session` is composed of :class:`~reducer.fold.parts.Parts`, one per
concern (the calls, the tasks, the hooks, the turns, usage, the rewind
chain…), each keeping its own tables and folding the entries of its kinds.
:data:`HANDLERS` maps every class the decoder can produce to the method that
folds it; the session decides an entry's agent and source file once and
calls that method, bound to its part. Adding a frame kind is a Struct in
:mod:`reducer.frames`, an ``on_<kind>`` method in the part it concerns and
one line in the table (the import-time check below says which class has no
handler).

The session's public state (``calls``, ``status``, ``cost_usd``…) is read,
and set, through the session: each name is kept by one part (:func:`kept_by`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from operator import attrgetter
from types import MethodType
from typing import Any, Callable, NamedTuple, Never, assert_never, get_type_hints

from .. import frames as F
from ..state import (
    MAIN,
    Activity,
    Agent,
    Change,
    CompactionItem,
    HookRun,
    RateLimit,
    Request,
    Task,
    ToolCall,
    Totals,
    Turn,
)
from .calls import Calls
from .hooks import Hooks
from .info import Info
from .messages import Messages
from .notices import Notices
from .parts import Parts, new_parts, on_nothing, on_progress
from .tasks import Tasks
from .turns import Turns
from .usage import Usage

__all__ = ["Session", "HANDLERS", "Handler"]

Handler = Callable[[Any, Any, str], None]
"""``handler(part, entry, agent)``: a part's method that folds one entry
already routed to ``agent`` (or a function of :mod:`reducer.fold.parts`,
taking the :class:`~reducer.fold.parts.Parts` as ``part``)."""


class _Kept(property):
    """A public attribute of :class:`Session` that one of its parts keeps
    under the same name: read through the part by C code (an
    ``attrgetter``: as fast as a plain property), and set there."""

    def __init__(self, part: str, name: str) -> None:
        super().__init__(attrgetter(f"parts.{part}.{name}"), self._set)
        self.part = part
        self.name = name

    def _set(self, session: Session, value: Any) -> None:
        setattr(getattr(session.parts, self.part), self.name, value)


class _KeptBy:
    """What :func:`kept_by` declares: a :class:`_Kept` once the class is made
    (and so knows the name)."""

    def __init__(self, part: str) -> None:
        self.part = part

    def __set_name__(self, owner: type, name: str) -> None:
        setattr(owner, name, _Kept(self.part, name))


def kept_by(part: str) -> Any:
    """Declares a public attribute of :class:`Session` that the part named
    ``part`` (a field of :class:`Parts`) keeps under the same name."""
    return _KeptBy(part)


class _Route(NamedTuple):
    """How :meth:`Session._fold_all` treats one entry class, decided once per class."""

    handler: Callable[[Any, str], None]
    """The class's handler, bound to the part that keeps what it folds."""
    row: bool
    """A message row (user, assistant, system, progress, attachment)."""
    message_row: bool
    """A row whose session id the session records."""
    kind: str | None
    """The class's :attr:`~reducer.frames.Entry.kind_key` when it is the same
    for every entry of the class; ``None``: ask the entry."""
    parented: bool
    """The class has a ``parent_tool_use_id`` (a sub-agent's frame names its agent there)."""


class Session:
    """Session state folded from frames of either format.

    ``apply(entry)`` is O(1) amortised. A replay snapshots it with
    :func:`reducer.replay.snapshot.checkpoint`."""

    # --- the public state, each kept by one part -------------------------------------------

    # what was read, and what the session says about itself
    lines: int = kept_by("info")
    """Lines of the main source folded."""
    agent_file_lines: int = kept_by("info")
    """Lines folded from sub-agent transcript files."""
    kinds: Counter[str] = kept_by("info")
    malformed: list[tuple[int, str]] = kept_by("info")
    malformed_count: int = kept_by("info")
    unknown: list[tuple[int, str]] = kept_by("info")
    format: str = kept_by("info")
    session_id: str | None = kept_by("info")
    session_ids: list[str] = kept_by("info")
    cwd: str | None = kept_by("info")
    model: str | None = kept_by("info")
    cli_version: str | None = kept_by("info")
    permission_mode: str | None = kept_by("info")
    tools: list[str] = kept_by("info")
    mcp_servers: list[dict[str, Any]] = kept_by("info")
    git_branch: str | None = kept_by("info")
    title: str | None = kept_by("info")
    # the conversation
    agents: dict[str, Agent] = kept_by("core")
    agent_file_ids: dict[str, str] = kept_by("core")
    turns: list[Turn] = kept_by("turns")
    status: str = kept_by("turns")
    thinking_tokens: int = kept_by("turns")
    live_thinking_tokens: int = kept_by("turns")
    compactions: list[CompactionItem] = kept_by("turns")
    command_states: dict[str, str] = kept_by("turns")
    model_turns: int = kept_by("turns")
    exited: bool = kept_by("turns")
    calls: dict[str, ToolCall] = kept_by("calls")
    permission_denials: list[dict[str, Any]] = kept_by("calls")
    heartbeats: int = kept_by("calls")
    tasks: dict[str, Task] = kept_by("tasks")
    roster: list[str] = kept_by("tasks")
    hooks: dict[str, HookRun] = kept_by("hooks")
    stop_summaries: int = kept_by("hooks")
    rewinds: int = kept_by("chain")
    rate_limit: dict[str, Any] | None = kept_by("notices")
    rate_limit_state: RateLimit = kept_by("notices")
    limited_line: int | None = kept_by("notices")
    api_retries: int = kept_by("notices")
    # cost and usage
    cost_usd: float | None = kept_by("usage")
    result_usage: Totals = kept_by("usage")
    assistant_usage: Totals = kept_by("usage")
    model_usage: dict[str, dict[str, Any]] = kept_by("usage")
    context_window: int | None = kept_by("usage")
    context_tokens: int | None = kept_by("usage")
    results: int = kept_by("usage")
    is_error: bool = kept_by("usage")
    last_result: F.Result | None = kept_by("usage")
    requests: dict[tuple[str, str | None], Request] = kept_by("usage")
    recorded_through: int = kept_by("usage")
    recorded_at: str | None = kept_by("usage")
    ledger_version: int = kept_by("usage")

    def __init__(self, parts: Parts | None = None) -> None:
        """A session with nothing folded yet, or the one whose state is
        ``parts`` (made by another session, as a snapshot restored holds them)."""
        self.parts = new_parts() if parts is None else parts
        """The session's state, one part per concern."""
        self._routes: dict[type, _Route] = {}
        """Entry class → its route, made on first use (:meth:`_route`)."""

    # --- reading ---------------------------------------------------------------------------

    @property
    def main(self) -> Agent:
        return self.parts.core.agents[MAIN]

    @property
    def current_turn(self) -> Turn | None:
        return self.parts.core.current_turn()

    @property
    def usage(self) -> Totals:
        """Main-loop usage: summed from ``result`` frames when there are any, else
        from assistant messages counted once per (message id, request id)."""
        return self.parts.usage.totals

    @property
    def running_tasks(self) -> list[Task]:
        return self.parts.tasks.running()

    @property
    def background_running(self) -> bool:
        """Whether a backgrounded task still runs."""
        return self.parts.tasks.background_running()

    @property
    def activity(self) -> Activity:
        """What the session is doing now, for a status bar."""
        parts = self.parts
        status = parts.turns.status
        if status == "compacting":
            return Activity("compacting")
        turn = parts.core.current_turn()
        if turn is None or status == "idle":
            # the turn is over; a background shell or agent may still run
            return Activity("background") if parts.tasks.background_running() \
                else Activity("idle")
        if parts.turns.live_thinking_tokens:
            return Activity("thinking")
        found = parts.calls.running_call(turn.index)
        if found is None:
            return Activity("requesting")
        if found.awaiting_permission:
            return Activity("awaiting_permission", found.id, found.name)
        return Activity("running", found.id, found.name)

    # --- what the reader of the input says ------------------------------------------------

    def agent_file_found(self, agent_id: str, file_id: str, agent_type: str | None = None,
                         description: str | None = None, parent_file_id: str | None = None,
                         depth: int | None = None) -> list[Change]:
        """A transcript file of the sub-agent ``agent_id`` (``agent-<file_id>.jsonl``)
        was found beside the session, its ``.meta.json`` naming its type,
        description, the agent that started it (``parentAgentId``: that
        agent's file id) and its spawn depth: the agent (made if new) records
        them; returns the change records."""
        return self.parts.core.agent_file_found(agent_id, file_id, agent_type, description,
                                                parent_file_id, depth)

    def source_notice(self, text: str, level: str = "info") -> list[Change]:
        """Add a notice from the reader of the input (the file was replaced, the
        command exited, ...) to the main transcript, after what was read so far.

        It belongs to no line of the input: its ``line_no`` is 0."""
        return self.parts.core.source_notice(text, level)

    # --- the fold ----------------------------------------------------------------------

    def apply(self, entry: F.Entry, *, agent: str | None = None,
              received_at: float | None = None) -> list[Change]:
        """Fold one decoded line into the state and return what changed.

        ``agent`` routes the entry to a sub-agent (used for the rows of a
        sub-agent transcript file); ``received_at`` is the wall-clock time a
        live frame arrived, for elapsed-time displays."""
        changes: list[Change] = []
        self._fold_all((entry,), agent, received_at, changes)
        return changes

    def _fold(self, entry: F.Entry, agent: str | None, received_at: float | None,
              changes: list[Change]) -> None:
        """:meth:`apply`, appending the change records to ``changes`` (so a
        batch of lines shares one list instead of making and joining one each)."""
        self._fold_all((entry,), agent, received_at, changes)

    def _fold_all(self, entries: Sequence[F.Entry], agent: str | None, received_at: float | None,
                  changes: list[Change]) -> None:
        """:meth:`_fold` for each of ``entries`` in turn, all of
        one source and one arrival time: what is the same for the whole batch
        is set once."""
        core, info = self.parts.core, self.parts.info
        if agent is None:
            info.lines += len(entries)
            source = MAIN
        else:
            info.agent_file_lines += len(entries)
            source = agent
        core.begin(changes, source, received_at)
        kinds = info.kinds
        routes = self._routes
        for entry in entries:
            cls = type(entry)
            route = routes.get(cls) or self._route(cls)
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
                        where = core.sidechain_agent(entry)
                if route.row:
                    if entry.version is not None or entry.parentUuid is not None \
                            or entry.sessionId is not None:
                        info.row(entry, agent, route.message_row)
                    elif route.message_row:  # a wire message: only its session id to note
                        sid = entry.session_id
                        if sid != info.session_id:
                            info.session_seen(sid)
                elif cls is F.Result:
                    info.session_seen(entry.session_id)
                route.handler(entry, where)
            except Exception as exc:  # the fold must never take the viewer down
                core.problem(where, entry.line_no, "malformed", entry.kind_key,
                             f"cctv could not fold this frame: {type(exc).__name__}: {exc}")

    def _fold_repeated_malformed(self, line_no: int, changes: list[Change]) -> bool:
        """Fold a main-source line whose bytes are those of the malformed line
        before it, without decoding it: one more line of that line's row.
        False (nothing done) if that row is not the last one of the main transcript."""
        return self.parts.info.repeated_malformed(line_no, changes)

    def _route(self, cls: type) -> _Route:
        """The route of ``cls``, made and kept on first use."""
        handler = HANDLERS.get(cls)
        if handler is None:
            bound: Callable[[Any, str], None] = _unhandled
        else:
            owner = _OWNERS[handler]
            bound = MethodType(handler, getattr(self.parts, owner) if owner else self.parts)
        fixed = _SYSTEM_KINDS.get(cls) or (
            cls.kind if getattr(cls, "kind_key") is _CONSTANT_KIND_KEY else None)
        route = _Route(bound, cls in _ROWS, cls in _MESSAGE_ROWS, fixed,
                       "parent_tool_use_id" in getattr(cls, "__struct_fields__", ()))
        self._routes[cls] = route
        return route


def _unhandled(entry: Never, agent: str) -> None:
    """The table's end: a decodable class with no handler (the import-time check
    below makes this unreachable)."""
    assert_never(entry)


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

_CONSTANT_KIND_KEY = F.Entry.__dict__["kind_key"]
"""The base ``kind_key`` (the class's ``kind``): a class that keeps it counts under one key."""

_SYSTEM_KINDS = {cls: f"system/{name}" for name, cls in F.SYSTEM_SUBTYPES.items()}
"""The kind key of each system subtype's class: the decoder makes an entry of
that class only from a frame of that subtype (``SystemOther`` has many)."""


HANDLERS: dict[type, Handler] = {
    # conversation
    F.Assistant: Messages.on_assistant,
    F.User: Messages.on_user,
    F.StreamEvent: Messages.on_stream_event,
    F.LocalCommand: Messages.on_local_command,
    F.Summary: Info.on_title_row,
    F.CustomTitle: Info.on_title_row,
    F.AiTitle: Info.on_title_row,
    F.LastPrompt: Info.on_title_row,
    # tools
    F.ControlRequest: Calls.on_control_request,
    F.ToolProgress: Calls.on_tool_progress,
    F.Progress: on_progress,
    F.PermissionDenied: Calls.on_permission_denied,
    # tasks
    F.TaskStarted: Tasks.on_task_started,
    F.TaskProgress: Tasks.on_task_progress,
    F.TaskUpdated: Tasks.on_task_updated,
    F.TaskNotification: Tasks.on_task_notification,
    F.BackgroundTasksChanged: Tasks.on_background_tasks,
    # hooks
    F.HookStarted: Hooks.on_hook_started,
    F.HookProgress: Hooks.on_hook_progress,
    F.HookResponse: Hooks.on_hook_response,
    F.StopHookSummary: Hooks.on_stop_hook_summary,
    F.Attachment: Hooks.on_attachment,
    # turns, usage and session state
    F.Result: Turns.on_result,
    F.Init: Info.on_init,
    F.Status: Turns.on_status,
    F.CompactBoundary: Turns.on_compact_boundary,
    F.ThinkingTokens: Turns.on_thinking_tokens,
    F.TurnDuration: Turns.on_turn_duration,
    F.SessionStateChanged: Turns.on_session_state,
    F.ConversationReset: Turns.on_conversation_reset,
    F.CostState: Usage.on_cost_state,
    F.CommandLifecycle: Turns.on_command_lifecycle,
    # notices
    F.RateLimitEvent: Notices.on_rate_limit,
    F.ApiRetry: Notices.on_api_retry,
    F.ApiError: Notices.on_api_error,
    F.Notification: Notices.on_notification,
    F.Informational: Notices.on_informational,
    F.LocalCommandOutput: Notices.on_local_command_output,
    F.ToolUseSummary: Notices.on_tool_use_summary,
    F.PromptSuggestion: Notices.on_prompt_suggestion,
    F.VcsStateChanged: Notices.on_vcs_state,
    F.ControlResponse: Notices.on_control_response,
    F.SystemOther: Notices.on_system_other,
    F.System: Notices.on_system_other,
    # what is not a frame the fold reads
    F.Malformed: Info.on_malformed,
    F.Unknown: Info.on_unknown,
    F.Blank: on_nothing,
    F.KeepAlive: on_nothing,
    F.ControlCancelRequest: on_nothing,
    **{cls: on_nothing for cls in F.METADATA_CLASSES.values()},
}
"""Entry class → handler; every class the decoder can produce is a key."""


def _owners() -> dict[Handler, str]:
    """Each handler → the field of :class:`Parts` whose class defines it (``""``:
    a function of :mod:`reducer.fold.parts`, of the parts as a whole); checks
    that every class the decoder can produce has a handler, and that each
    handler is a method of one part or such a function."""
    decodable = {*F.TOP_LEVEL, *F.SYSTEM_SUBTYPES.values(), F.SystemOther, F.Unknown,
                 F.Malformed, F.Blank}
    missing = sorted(c.__name__ for c in decodable if c not in HANDLERS)
    if missing:
        raise TypeError(f"cctv.reducer.fold: no handler for {', '.join(missing)}")
    classes = get_type_hints(Parts)
    owners: dict[Handler, str] = {}
    for handler in HANDLERS.values():
        found = [field for field, cls in classes.items()
                 if cls.__dict__.get(handler.__name__) is handler]
        if handler.__module__ == Parts.__module__:
            found.append("")
        if len(found) != 1:
            raise TypeError(f"cctv.reducer.fold: {handler.__qualname__} is not a method "
                            "of one part of the session")
        owners[handler] = found[0]
    return owners


_OWNERS = _owners()
