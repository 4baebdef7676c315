"""Frames worth stopping at: for next / previous jumps and the timeline.

Markers come from the frames themselves (not from folding them), so all of
them are known as soon as the file is decoded.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from typing import Literal, get_args

from .. import frames as F
from ..fold import NON_PROMPT_MARKERS
from .order import ReplayFrame

__all__ = ["MarkerKind", "MARKER_KINDS", "frame_markers", "Markers"]

MarkerKind = Literal["turn", "tool", "error", "hook", "task", "compaction"]
MARKER_KINDS: tuple[MarkerKind, ...] = get_args(MarkerKind)

_TURN_GAP = 3
"""A turn marker this few frames after another one marks the same turn."""
_FAILED = frozenset({"failed", "killed", "error"})


def _prompt_text(e: F.User) -> str | None:
    content = e.message.content
    if isinstance(content, str):
        return content
    if any(b.type == "tool_result" for b in content):
        return None
    return "\n".join(b.text for b in content if b.text) or None


def frame_markers(frame: ReplayFrame) -> tuple[MarkerKind, ...]:
    """The marker kinds of one frame (most frames have none)."""
    e = frame.entry
    kinds: list[MarkerKind] = []
    if isinstance(e, F.Assistant):
        if any(b.type in ("tool_use", "server_tool_use") for b in e.message.content):
            kinds.append("tool")
        if e.error or e.isApiErrorMessage:
            kinds.append("error")
    elif isinstance(e, F.User):
        content = e.message.content
        if not isinstance(content, str) and any(
                b.type == "tool_result" and b.is_error for b in content):
            kinds.append("error")
        elif (frame.agent is None and e.parent_tool_use_id is None and not e.isSidechain
              and not e.synthetic):
            text = _prompt_text(e)
            stripped = text.lstrip() if text else ""
            if stripped and (stripped.startswith("<command-name>")
                             or not stripped.startswith(NON_PROMPT_MARKERS)):
                kinds.append("turn")
    elif isinstance(e, F.Init):
        kinds.append("turn")  # stream-json: the CLI starts each query with an init
    elif isinstance(e, F.Result):
        if e.is_error:
            kinds.append("error")
    elif isinstance(e, F.CompactBoundary):
        kinds.append("compaction")
    elif isinstance(e, F.Status):
        if e.compact_error:
            kinds += ["compaction", "error"]
        elif e.compact_result or e.status == "compacting":
            kinds.append("compaction")
    elif isinstance(e, (F.HookStarted, F.StopHookSummary)):
        kinds.append("hook")
    elif isinstance(e, F.HookResponse):
        kinds.append("hook")
        if (e.exit_code not in (None, 0)) or e.outcome in ("error", "cancelled"):
            kinds.append("error")
    elif isinstance(e, (F.TaskStarted, F.BackgroundTasksChanged)):
        kinds.append("task")
    elif isinstance(e, F.TaskUpdated):
        kinds.append("task")
        if e.patch.status in _FAILED:
            kinds.append("error")
    elif isinstance(e, F.TaskNotification):
        kinds.append("task")
        if e.status in _FAILED:
            kinds.append("error")
    elif isinstance(e, F.Attachment):
        kind = e.attachment.type
        if kind.startswith("hook_"):
            kinds.append("hook")
            if "error" in kind or "blocking" in kind:
                kinds.append("error")
        elif kind == "queued_command" and "<task-notification>" in str(e.attachment.prompt):
            kinds.append("task")
    elif isinstance(e, F.Progress):
        if e.data.type == "hook_progress":
            kinds.append("hook")
    elif isinstance(e, (F.ApiError, F.ApiRetry, F.PermissionDenied, F.Malformed, F.Unknown)):
        kinds.append("error")
    return tuple(kinds)


class Markers:
    """Frame indices (0-based) of every marker kind, sorted, for jumps."""

    def __init__(self, frames: Sequence[ReplayFrame]) -> None:
        self.by_kind: dict[MarkerKind, list[int]] = {kind: [] for kind in MARKER_KINDS}
        self.at: dict[int, tuple[MarkerKind, ...]] = {}
        """The marker kinds of each marked frame."""
        last_turn = -_TURN_GAP - 1
        for i, frame in enumerate(frames):
            kinds = frame_markers(frame)
            if "turn" in kinds:
                if i - last_turn <= _TURN_GAP:  # an init and the prompt after it: one turn
                    kinds = tuple(k for k in kinds if k != "turn")
                last_turn = i
            if kinds:
                self.at[i] = kinds
                for kind in kinds:
                    self.by_kind[kind].append(i)

    def next(self, kind: MarkerKind, index: int) -> int | None:
        """The first ``kind`` marker after frame ``index``, if any."""
        marks = self.by_kind[kind]
        i = bisect_right(marks, index)
        return marks[i] if i < len(marks) else None

    def previous(self, kind: MarkerKind, index: int) -> int | None:
        """The last ``kind`` marker before frame ``index``, if any."""
        marks = self.by_kind[kind]
        i = bisect_left(marks, index)
        return marks[i - 1] if i > 0 else None

    def count(self, kind: MarkerKind) -> int:
        return len(self.by_kind[kind])
