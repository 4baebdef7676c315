"""What every cctv app is, whatever it shows: the live viewer and browser
(:class:`viewer.app.CctvApp`) and a replay (:class:`viewer.replay.app.ReplayApp`).

A :class:`ViewerApp` holds the :class:`~viewer.shown.ShownSession` its
session screens draw (``None`` in the browser), redraws their panels as it
changes, opens sub-agent screens (:class:`~viewer.messages.OpenAgent`), and
keeps every text it shows safe: notifications, titles, a crash's one line.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Generic, TypeVar

from textual.app import App, ScreenStackError, SystemCommand
from textual.binding import Binding
from textual.command import Provider
from textual.content import Content
from textual.screen import Screen
from textual.worker import Worker, WorkerState

from cctv.widgets.safe_text import is_safe, visible

from .messages import DiskNotes, OpenAgent

if TYPE_CHECKING:
    from cctv.reducer.state import Change

    from .shown import ShownSession

# the session screen (and the widgets and fold it brings) is imported where a
# session is shown, not with the app: the session browser shows its first
# screen without any of it.

__all__ = ["ViewerApp"]

Shown = TypeVar("Shown", bound="ShownSession")

_HELP_GROUPS = {"TranscriptView": "Transcript", "SessionScreen": "Session", "BrowseScreen": "Browser",
                "CctvApp": "General"}
_GROUP_ORDER = ["Transcript", "Session", "Browser", "General"]


def _cctv_commands() -> type[Provider]:
    """The palette's cctv commands, imported when the palette first opens."""
    from .palette import CctvCommands

    return CctvCommands


class ViewerApp(App[int], Generic[Shown]):
    """A cctv app: session screens over :attr:`shown`, keys, help, safe text.

    | Key(s) | Description |
    | :- | :- |
    | q | Quit |
    | ? | Help: every key |
    | ctrl+p | Command palette |
    """

    CSS_PATH = Path(__file__).parent / "app.tcss"
    TITLE = "cctv"
    COMMANDS = App.COMMANDS | {_cctv_commands}
    BINDINGS = [
        Binding("q", "quit", "Quit", id="quit"),
        Binding("question_mark", "help", "Help", key_display="?", id="help"),
        # a viewer quits on ctrl+c, as `less` and `tail -f` users expect
        Binding("ctrl+c", "quit", "Quit", show=False, priority=True, id="quit_ctrl_c"),
    ]

    def __init__(self, shown: Shown | None, *, ticks: bool) -> None:
        super().__init__()
        self.shown: Shown | None = shown
        """What the session screens draw (``None``: no session open)."""
        self._ticks = ticks
        self._dirty = False
        self._panel_timers = False

    crash: BaseException | None = None
    """The unhandled exception that ended the app, if any (see :func:`viewer.launch.exit_status`)."""

    def _handle_exception(self, error: Exception) -> None:
        # Textual prints a long traceback at exit; cctv prints one line and logs the rest
        self.crash = error
        super()._handle_exception(error)

    def _print_error_renderables(self) -> None:
        if self.crash is not None:
            self._exit_renderables.clear()
            return
        super()._print_error_renderables()

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        """Textual's palette commands, with a screenshot that says where it went."""
        for command in super().get_system_commands(screen):
            if command.title != "Screenshot":
                yield command
        yield SystemCommand("Screenshot", "Save an SVG of the screen to the current directory",
                            self.action_save_screenshot)

    def action_save_screenshot(self) -> None:
        """Save an SVG of the screen in the current directory (else the cache's
        ``screenshots/``, else a temporary folder)."""
        from .storage import CacheArea, DiskError

        name = time.strftime("cctv-%Y%m%d-%H%M%S.svg")
        svg = self.export_screenshot().encode("utf-8")
        try:
            path = Path.cwd() / name
            path.write_bytes(svg)
        except OSError:
            try:
                path = CacheArea("screenshots", what="screenshots").put(name, svg)
            except DiskError as exc:
                self.notify(f"Could not save the screenshot: {exc.note}", severity="error")
                return
        self.on_disk_notes()
        self.notify(Content(f"Screenshot saved: {path}"), timeout=8)

    # --- text that reaches the terminal ---------------------------------------------

    def notify(self, message: str | Content, *, title: str = "", severity="information",
               timeout: float | None = None, markup: bool = True) -> None:
        """Every notification (the app's, a screen's, a widget's) shows its text
        literally: never as markup, with control characters shown, because it
        often carries a path or a reason read from the input. (Content keeps its
        styles when its text is safe already.)"""
        if isinstance(message, Content):
            if not is_safe(message.plain):
                message = Content(visible(message.plain))
        else:
            message = visible(message)
        super().notify(message, title=visible(title, oneline=True), severity=severity,
                       timeout=timeout, markup=False)

    def validate_title(self, title: object) -> str:
        return visible(super().validate_title(title), oneline=True)

    def validate_sub_title(self, sub_title: object) -> str:
        return visible(super().validate_sub_title(sub_title), oneline=True)

    # --- lifecycle ---------------------------------------------------------------------

    def on_unmount(self) -> None:
        gc.unfreeze()  # hand the objects back to the collector (matters in tests)

    async def action_quit(self) -> None:
        """Quit at once, whatever is loading; a running command is told to stop."""
        shown = self.shown
        code = await shown.close() if shown is not None else 0
        self.exit(code, return_code=code)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A reader that fails says so; it never takes the viewer down."""
        if event.state == WorkerState.ERROR:
            error = event.worker.error
            ended = f"reader failed: {type(error).__name__}: {error}"
            if self.shown is not None:
                self.shown.ended = ended
            self.notify(ended, severity="error", timeout=10)
            self._dirty = True

    # --- the session screens' panels -----------------------------------------------------

    def _start_panel_timers(self) -> None:
        """Redraw a session's panels as it changes, and its elapsed times as time
        passes (from the first session screen on: the browser has no panels)."""
        if self._panel_timers:
            return
        self._panel_timers = True
        self.set_interval(0.1, self._flush_panels)
        if self._ticks:
            self.set_interval(1.0, self._tick)

    def _broadcast(self, changes: list[Change]) -> None:
        """Tell every session screen what changed in the fold."""
        if not changes:
            return
        from .screens.session import SessionScreen

        for screen in self.screen_stack:
            if isinstance(screen, SessionScreen):
                screen.apply_changes(changes)
        self._dirty = True

    def _flush_panels(self) -> None:
        """Redraw the panels of the screen on top (and of the screens under it
        that stay current, :attr:`SessionScreen.STAYS_CURRENT`) if anything changed."""
        if not self._dirty:
            return
        from .screens.session import SessionScreen

        self._dirty = False
        try:
            screen = self.screen
        except ScreenStackError:  # a timer firing while the app closes
            return
        if isinstance(screen, SessionScreen):
            screen.refresh_panels()
        for under in self.screen_stack:
            if isinstance(under, SessionScreen) and under.STAYS_CURRENT and under is not screen:
                under.refresh_panels()

    def _tick(self) -> None:
        self._dirty = True

    def on_session_screen_dirty(self) -> None:
        """A session screen's panels need a redraw (:class:`SessionScreen.Dirty`)."""
        self._dirty = True

    # --- navigation ----------------------------------------------------------------------

    def on_disk_notes(self, message: DiskNotes | None = None) -> None:
        """Tell, once each, what happened to cctv's own files on disk and what
        cctv does instead (:mod:`viewer.storage`): one notification per note, ever."""
        from .storage import take_notes

        for note in take_notes():
            self.notify(str(note), title="Cache", severity="warning", timeout=12)

    def on_open_agent(self, message: OpenAgent) -> None:
        self.open_agent(message.agent_id)

    def open_agent(self, agent_id: str) -> None:
        """Push the transcript of a sub-agent."""
        from .screens.session import SessionScreen

        shown = self.shown
        if shown is None or agent_id not in shown.session.agents:
            self.notify("that sub-agent has not produced anything yet", severity="warning")
            return
        self.push_screen(SessionScreen(shown, agent_id))

    def action_help(self) -> None:
        """Every cctv key of the active screen, grouped, one row per action.

        Only cctv's own bindings (they carry an ``id``) are listed: the scroll
        bindings Textual's base widgets bring do nothing a user needs here, nor
        the app's keys a screen names in ``APP_KEYS_IDLE``. A screen's
        ``HELP_ROWS`` (what its search box reads) follow its keys."""
        from .screens.help import HelpScreen

        keys: dict[tuple[str, str], list[str]] = {}
        groups: dict[tuple[str, str], str] = {}
        idle: frozenset[str] = getattr(self.screen, "APP_KEYS_IDLE", frozenset())
        for binding in self.screen.active_bindings.values():
            b = binding.binding
            if not b.description or b.id is None or (binding.node is self and b.action in idle):
                continue
            slot = (b.action, b.description)
            display = b.key_display or self.get_key_display(b)
            if display not in keys.setdefault(slot, []):
                keys[slot].append(display)
            groups.setdefault(slot, _HELP_GROUPS.get(type(binding.node).__name__, "General"))
        rows = [(" ".join(keys[slot]), slot[1], groups[slot]) for slot in keys]
        screen_group = _HELP_GROUPS.get(type(self.screen).__name__, "General")
        rows += [(key, text, screen_group) for key, text in getattr(self.screen, "HELP_ROWS", ())]
        rows.sort(key=lambda row: _GROUP_ORDER.index(row[2]) if row[2] in _GROUP_ORDER else 99)
        self.push_screen(HelpScreen(rows))
