"""What the input source says happens, as the screen shows it.

:class:`SourceState` folds the typed events of :mod:`viewer.sources` (never
their text) into what the app draws: a short status for the status bar, a
message for the middle of an empty view, notices for the transcript where an
event changes what the user sees, the reason the source ended and the exit
status of ``cctv``. It is plain Python (no Textual) so each event is tested
on its own.
"""

from __future__ import annotations

import signal
import time
from dataclasses import dataclass
from typing import Literal, NamedTuple, assert_never

from cctv.reducer.format import format_duration
from cctv.reducer.live_state import SETTLED_AFTER_S

from .sources import (
    CannotRead,
    CannotStart,
    Deleted,
    EndOfInput,
    Event,
    HistoryRead,
    Lines,
    Live,
    OutputClosed,
    ProcessExited,
    ProcessStarted,
    Progress,
    Recreated,
    Replaced,
    Stderr,
    Truncated,
    WaitingForFile,
    WatchFailed,
)

__all__ = ["SourceState", "SourceNote", "Effect", "Level"]

Level = Literal["information", "warning", "error"]


class SourceNote(NamedTuple):
    """What the source says now, for the status bar."""

    text: str
    level: Level
    short: str | None = None
    """The same, shorter, for a narrow bar (``None``: none shorter)."""


def _note(what: str, level: Level, detail: str | None = None) -> SourceNote:
    """``what · detail``, whose short form is ``what``."""
    return SourceNote(f"{what} · {detail}", level, what) if detail else SourceNote(what, level)

_Reading = Progress | HistoryRead | Live | WaitingForFile
_FileChange = Truncated | Replaced | Deleted | Recreated
_Trouble = CannotRead | WatchFailed
_Command = ProcessStarted | ProcessExited | OutputClosed | CannotStart

TRANSIENT_S = 10.0
"""How long the status bar shows a one-off event (replaced, recreated, …)."""
SILENT_AFTER_S = 2.0
"""A running command silent this long shows "waiting for output"."""


@dataclass(slots=True)
class Effect:
    """What one event asks the app to do besides redrawing the status."""

    notice: tuple[str, Level] | None = None
    """A notice to add to the main transcript."""
    toast: tuple[str, Level] | None = None
    """A notification to pop up."""
    stderr: list[str] | None = None
    """Lines of the command's standard error to keep."""
    history_in: bool = False
    """The input's existing content has been read (start following sub-agents, ...)."""


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def describe_exit(status: int, by_user: bool) -> str:
    """``"stopped by you"``, ``"exited with status 3"``, ``"killed by SIGKILL"``."""
    if by_user:
        return "stopped by you"
    if status >= 0:
        return f"exited with status {status}"
    return f"killed by {_signal_name(-status)}"


class SourceState:
    """The source's condition, updated by :meth:`apply` for every event."""

    def __init__(self, kind: str, *, follow: bool = True, label: str = "") -> None:
        self.kind = kind
        self.follow = follow
        self.label = label
        self.loading: tuple[int, int] | None = None
        self.ended: str | None = None
        """Why the source ended, once it has (``None`` while it is live)."""
        self.exit_code: int | None = None
        self.stopped_by_user = False
        self.cannot_start = False
        self.running = False
        self.output_closed = False
        self.empty = False
        """The input was read to its end and held no line (yet)."""
        self.lines_seen = False
        self._status: SourceNote | None = None
        self._status_until: float | None = None
        """When a transient status expires (``None``: it stays)."""
        self._middle: str | None = None
        """What an empty view says (waiting for the file, cannot read, ...)."""
        self._last_output = 0.0
        self._grew_at: float | None = None
        """When the input last grew (monotonic seconds; for the history read,
        the file's modification time on that clock)."""
        self.read_to_end = False
        """A file not followed was read to its end: it has settled."""
        self._announced_errors: set[str] = set()
        self._restart_note: str | None = None
        """The notice of the last event that started the input over."""
        self._watch_note: SourceNote | None = None
        """Watching for changes failed: shown whenever nothing more pressing is."""

    # --- updates ------------------------------------------------------------------------

    def output_seen(self, now: float) -> None:
        """Lines arrived."""
        self._last_output = now
        self._grew_at = now
        self.lines_seen = True
        self.empty = False
        self._restart_note = None
        if self._middle is not None and not self.cannot_start:
            self._middle = None

    def _say(self, what: str, level: Level = "information", detail: str | None = None, *,
             now: float | None = None, transient: bool = False) -> None:
        self._status = _note(what, level, detail)
        self._status_until = now + TRANSIENT_S if transient and now is not None else None

    def _quiet(self) -> None:
        self._status = None
        self._status_until = None

    def apply(self, event: Event, now: float) -> Effect:
        """Fold one event; return what else the app should do."""
        effect = self._apply(event, now)
        if effect.notice is not None and isinstance(event, (Truncated, Replaced, Recreated)):
            self._restart_note = effect.notice[0]
        return effect

    def _apply(self, event: Event, now: float) -> Effect:
        effect = Effect()
        match event:
            case Lines():
                self.output_seen(now)
            case Progress() | HistoryRead() | Live() | WaitingForFile():
                self._reading(event, now, effect)
            case Truncated() | Replaced() | Deleted() | Recreated():
                self._file_changed(event, now, effect)
            case CannotRead() | WatchFailed():
                self._trouble(event, effect)
            case ProcessStarted() | ProcessExited() | OutputClosed() | CannotStart():
                self._command(event, now, effect)
            case EndOfInput(stopped=stopped):
                self.loading = None
                self.read_to_end = self.kind == "file" and not stopped
                self.ended = ("stopped" if stopped else
                              "end of file" if self.kind == "file" else "end of input")
                if self.kind == "pipe" and not self.lines_seen:
                    self._middle = "standard input ended without any line"
            case Stderr(lines=lines):
                effect.stderr = lines
            case _:
                assert_never(event)
        return effect

    def _reading(self, event: _Reading, now: float, effect: Effect) -> None:
        """The history being read, then followed (or waited for)."""
        match event:
            case Progress(done=done, total=total):
                self.loading = None if done >= total else (done, total)
            case HistoryRead(lines=count, modified=modified):
                self.loading = None
                if modified is not None:  # its age, on the monotonic clock
                    self._grew_at = now - max(0.0, time.time() - modified)
                effect.history_in = True
                self.empty = count == 0 and not self.lines_seen
                if self._status is not None and self._status_until is None:
                    self._quiet()  # waiting, deleted, cannot read: over
                self._middle = None
            case Live():
                if self.kind == "pipe":
                    self._middle = "waiting for frames on standard input"
            case WaitingForFile(path=path):
                self._say("waiting for the file to appear", "warning")
                self._middle = f"waiting for {path} to appear\n\ncctv reads it as soon as it is created"
            case _:
                assert_never(event)

    def _file_changed(self, event: _FileChange, now: float, effect: Effect) -> None:
        """The followed file was truncated, replaced, deleted or created again."""
        match event:
            case Truncated(size=size, continues=True):
                effect.notice = (f"the file was truncated to {size:,} bytes (rotated): "
                                 "the lines below are what it holds now", "warning")
                self._say("truncated", "warning", "following its new lines", now=now, transient=True)
            case Truncated(size=size, continues=False):
                self.lines_seen = False
                effect.notice = (f"the file was truncated to {size:,} bytes: read again from the start",
                                 "warning")
                self._say("truncated", "warning", "read again from the start", now=now,
                          transient=True)
            case Replaced(continues=continues):
                if continues:
                    effect.notice = ("the file was replaced by a new one (rotated): "
                                     "the lines below come from the new file", "warning")
                    self._say("replaced", "warning", "following the new file", now=now,
                              transient=True)
                else:
                    self.lines_seen = False
                    effect.notice = ("the file was written anew: read again from the start", "warning")
                    self._say("rewritten", "warning", "read again from the start", now=now,
                              transient=True)
            case Deleted():
                effect.notice = ("the file was deleted: waiting for it to come back"
                                 if self.follow else "the file was deleted", "warning")
                self._say("deleted", "warning", "waiting for it to come back" if self.follow else None)
                if not self.follow:
                    self.ended = "deleted"
                elif not self.lines_seen:
                    self._middle = "the file was deleted — waiting for it to come back"
            case Recreated(continues=continues):
                if not continues:
                    self.lines_seen = False
                effect.notice = ("the file was created again: following it"
                                 + ("" if continues else " from the start"), "information")
                self._say("recreated", "information", "following again", now=now, transient=True)
                self._middle = None
            case _:
                assert_never(event)

    def _trouble(self, event: _Trouble, effect: Effect) -> None:
        """The input cannot be read, or changes to it cannot be watched."""
        match event:
            case CannotRead(path=path, error=error):
                text = f"cannot read {path}: {error}"
                if text not in self._announced_errors:
                    self._announced_errors.add(text)
                    effect.notice = (text, "error")
                self._say(f"cannot read: {error}", "error", "retrying" if self.follow else None)
                self.ended = None if self.follow and self.kind == "file" else f"cannot read: {error}"
                self._middle = f"cannot read {path}\n\n{error}"
            case WatchFailed(error=error, poll_s=poll_s):
                self._watch_note = SourceNote(f"polling every {poll_s:g} s (watching failed: {error})",
                                              "warning", f"polling every {poll_s:g} s")
                effect.toast = (f"watching for changes failed ({error}): checking every {poll_s:g} s",
                                "warning")
            case _:
                assert_never(event)

    def _command(self, event: _Command, now: float, effect: Effect) -> None:
        """The command cctv started (``cctv run``) started, exited, closed its output."""
        match event:
            case ProcessStarted():
                self.running = True
                self._last_output = now
                self._middle = f"{self.label.removeprefix('cmd: ')}\n\nwaiting for output"
            case ProcessExited(status=status, by_user=by_user):
                self._exited(status, by_user, effect)
            case OutputClosed():
                self.output_closed = True
                if self.exit_code is not None:
                    self.ended = describe_exit(self.exit_code, self.stopped_by_user)
                    self._quiet()
                else:
                    self._say("output closed", "warning", "the command still runs")
            case CannotStart(command=command, error=error):
                self.cannot_start = True
                self.ended = f"cannot start {command}: {error}"
                effect.notice = (self.ended, "error")
                self._middle = f"cannot start {command}\n\n{error}"
                self._quiet()
            case _:
                assert_never(event)

    def _exited(self, status: int, by_user: bool, effect: Effect) -> None:
        self.running = False
        self.exit_code = status
        self.stopped_by_user = by_user
        text = describe_exit(status, by_user)
        failed = status != 0 and not by_user
        told = text if status >= 0 and not by_user else f"was {text}"
        effect.notice = (f"the command {told}", "error" if failed else "information")
        if failed:
            effect.toast = (f"the command {told}", "error")
        if self.output_closed:
            self.ended = text
            self._quiet()
        else:
            self._say(text, "warning", "its output is still open")
        if not self.lines_seen:
            self._middle = f"{self.label.removeprefix('cmd: ')}\n\n{text} without any output"

    def finished(self) -> None:
        """The source has no more events."""
        self.running = False
        self.loading = None
        if self.ended is None:
            if self.exit_code is not None:
                self.ended = describe_exit(self.exit_code, self.stopped_by_user)
            else:
                self.ended = "ended"

    # --- what is shown --------------------------------------------------------------------

    def settled(self, now: float) -> bool:
        """A file that says all it will: read to its end without following it
        (as the browser opens a session that is not live), or followed and not
        grown for :data:`SETTLED_AFTER_S`. Its status is what the session ended
        in, however it was opened."""
        if self.read_to_end:
            return True
        return (self.kind == "file" and self.loading is None and self._grew_at is not None
                and now - self._grew_at >= SETTLED_AFTER_S)

    def status(self, now: float) -> SourceNote | None:
        """The source's part of the status bar, if it has something to say."""
        if self.running and now - self._last_output >= SILENT_AFTER_S:
            return _note("waiting for output", "information",
                         format_duration(now - self._last_output))
        if self._status is not None and self._status_until is not None and now > self._status_until:
            self._quiet()
        if self._status is None and self.ended is None:
            return self._watch_note
        return self._status

    def middle(self, now: float) -> str | None:
        """What the middle of an empty view says (``None``: nothing to say)."""
        if self._middle is not None:
            if self.running and not self.lines_seen and now - self._last_output >= SILENT_AFTER_S:
                return f"{self._middle} · {format_duration(now - self._last_output)}"
            return self._middle
        if self.empty:
            text = "empty file — waiting for lines" if self.follow and self.ended is None else "empty file"
            # why it is empty now (truncated, written anew) stays in sight
            return f"{self._restart_note}\n\n{text}" if self._restart_note else text
        return None

    def exit_status(self, *, quitting: bool = False) -> int:
        """cctv's exit status: the command's (128 + N for signal N, 127 when it
        could not start), 143 when quitting stops a running command, else 0."""
        if self.cannot_start:
            return 127
        if self.exit_code is not None:
            return self.exit_code if self.exit_code >= 0 else 128 - self.exit_code
        if quitting and self.running:
            return 128 + signal.SIGTERM
        return 0
