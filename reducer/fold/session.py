"""The fold: :class:`Session`, and the one table that routes each kind of entry.

:class:`Session` is the kernel (state, change records, routing) plus one
handler module per concern. :data:`HANDLERS` maps every class the decoder can
produce to the handler that folds it; the kernel decides an entry's agent and
source file once and calls that handler. Adding a frame kind is a Struct in
:mod:`reducer.frames` and one line here (the import-time check below says
which class has no handler).
"""

from __future__ import annotations

from .. import frames as F
from .chain import Chain
from .hooks import Hooks
from .kernel import Handler, Kernel
from .messages import Messages
from .notices import Notices
from .tasks import Tasks
from .tools import Tools
from .turns import Turns

__all__ = ["Session", "HANDLERS"]


class Session(Messages, Tools, Tasks, Hooks, Turns, Notices, Chain, Kernel):
    """Session state folded from frames of either format.

    ``apply(entry)`` is O(1) amortised; ``checkpoint()``/``restore()`` snapshot it
    for seeking in a replay.
    """


HANDLERS: dict[type, Handler] = {
    # conversation
    F.Assistant: Session._assistant,
    F.User: Session._user,
    F.StreamEvent: Session._stream_event,
    F.Summary: Session._title_row,
    F.CustomTitle: Session._title_row,
    F.AiTitle: Session._title_row,
    F.LastPrompt: Session._title_row,
    # tools
    F.ControlRequest: Session._control_request,
    F.ToolProgress: Session._tool_progress,
    F.Progress: Session._progress_row,
    F.PermissionDenied: Session._permission_denied,
    # tasks
    F.TaskStarted: Session._task_started,
    F.TaskProgress: Session._task_progress,
    F.TaskUpdated: Session._task_updated,
    F.TaskNotification: Session._task_notification,
    F.BackgroundTasksChanged: Session._background_tasks,
    # hooks
    F.HookStarted: Session._hook_started,
    F.HookProgress: Session._hook_progress,
    F.HookResponse: Session._hook_response,
    F.StopHookSummary: Session._stop_hook_summary,
    F.Attachment: Session._attachment,
    # turns and session state
    F.Result: Session._result,
    F.Init: Session._init,
    F.Status: Session._status,
    F.CompactBoundary: Session._compact_boundary,
    F.ThinkingTokens: Session._thinking_tokens,
    F.TurnDuration: Session._turn_duration,
    F.SessionStateChanged: Session._session_state,
    F.ConversationReset: Session._conversation_reset,
    F.CostState: Session._cost_state,
    F.CommandLifecycle: Session._command_lifecycle,
    # notices
    F.RateLimitEvent: Session._rate_limit,
    F.ApiRetry: Session._api_retry,
    F.ApiError: Session._api_error,
    F.Notification: Session._notification,
    F.Informational: Session._informational,
    F.LocalCommandOutput: Session._local_command_output,
    F.ToolUseSummary: Session._tool_use_summary,
    F.PromptSuggestion: Session._prompt_suggestion,
    F.VcsStateChanged: Session._vcs_state,
    F.ControlResponse: Session._control_response,
    F.SystemOther: Session._system_other,
    F.System: Session._system_other,
    # what is not a frame the fold reads
    F.Malformed: Session._malformed,
    F.Unknown: Session._unknown,
    F.Blank: Session._nothing,
    F.KeepAlive: Session._nothing,
    F.ControlCancelRequest: Session._nothing,
    **{cls: Session._nothing for cls in F.METADATA_CLASSES.values()},
}
"""Entry class → handler; every class the decoder can produce is a key."""


def _check_complete() -> None:
    decodable = {*F.TOP_LEVEL, *F.SYSTEM_SUBTYPES.values(), F.SystemOther, F.Unknown,
                 F.Malformed, F.Blank}
    missing = sorted(c.__name__ for c in decodable if c not in HANDLERS)
    if missing:
        raise TypeError(f"cctv.reducer.fold: no handler for {', '.join(missing)}")


_check_complete()
Kernel._handlers = HANDLERS
