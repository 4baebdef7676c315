"""The cctv Textual app: one source, one fold, a screen per agent transcript."""

from __future__ import annotations

import asyncio
import gc
import contextlib
import time
from collections.abc import Callable

from textual import on, work
from textual.app import App
from textual.binding import Binding
from textual.reactive import var
from textual.worker import Worker, WorkerState

from pathlib import Path

from reducer.feed import Feed
from reducer.lines import RawLine
from reducer.state import MAIN, Change
from widgets.safe_text import visible

from .commands import CctvCommands
from .screens.session import SessionScreen
from .sources import Ended, FileTail, Lines, Progress, Reset, Source, Status, Stderr, Waiting
from .subagent_tail import SubagentTail

__all__ = ["CctvApp"]

_HELP_GROUPS = {"TranscriptView": "Transcript", "SessionScreen": "Session", "CctvApp": "General"}
_GROUP_ORDER = ["Transcript", "Session", "General"]

FOLD_SLICE = 1000
"""Lines folded between two looks at the clock while a history loads."""
FOLD_BUDGET_S = 0.06
"""Longest stretch of folding before the UI gets the event loop back to paint."""


class CctvApp(App[int]):
    """View one Claude Code session from a file, a pipe or a command.

    | Key(s) | Description |
    | :- | :- |
    | q | Quit |
    | ? | Help: every key |
    | ctrl+p | Command palette |
    """

    CSS_PATH = "app.tcss"
    TITLE = "cctv"
    COMMANDS = App.COMMANDS | {CctvCommands}
    BINDINGS = [
        Binding("q", "quit", "Quit", id="quit"),
        Binding("question_mark", "help", "Help", key_display="?", id="help"),
    ]

    ended: var[str | None] = var(None)
    """Why the source ended (``None`` while it is live)."""

    def __init__(
        self,
        source: Source | None,
        *,
        feed: Feed | None = None,
        clock: Callable[[], float] | None = time.time,
        intro: str | None = None,
        label: str | None = None,
    ) -> None:
        super().__init__()
        self._label = label
        self.intro = intro
        """A line to show when the app starts (e.g. which session `cctv tail` picked)."""
        self.source = source
        self.feed = feed or Feed()
        self.clock = clock
        """Wall clock for live elapsed times; ``None`` in tests (state only)."""
        self.loading: tuple[int, int] | None = None
        self.waiting: str | None = None
        self.stderr_lines: list[str] = []
        self._live = False
        self._dirty = False
        self._subagents_started = False
        self._first_paint = False
        self._slice_started = 0.0
        self.first_paint_at: float | None = None
        """``time.perf_counter()`` when the first folded lines had been painted."""

    @property
    def source_label(self) -> str:
        if self._label is not None:
            return self._label
        return self.source.label if self.source is not None else "loaded file"

    def now(self) -> float | None:
        return self.clock() if self.clock is not None else None

    # --- text that reaches the terminal ---------------------------------------------

    def notify(self, message: str, *, title: str = "", severity="information",
               timeout: float | None = None, markup: bool = True) -> None:
        """Every notification (the app's, a screen's, a widget's) shows its text
        literally: never as markup, with control characters shown, because it
        often carries a path or a reason read from the input."""
        super().notify(visible(message), title=visible(title, oneline=True), severity=severity,
                       timeout=timeout, markup=False)

    def validate_title(self, title: object) -> str:
        return visible(super().validate_title(title), oneline=True)

    def validate_sub_title(self, sub_title: object) -> str:
        return visible(super().validate_sub_title(sub_title), oneline=True)

    # --- lifecycle ---------------------------------------------------------------------

    def on_mount(self) -> None:
        self.push_screen(SessionScreen(MAIN))
        if self.intro:
            self.notify(self.intro, timeout=6)
        if self.source is not None:
            self.consume_source()
        self.set_interval(0.1, self._flush_panels)
        if self.clock is not None:
            self.set_interval(1.0, self._tick)

    def on_unmount(self) -> None:
        gc.unfreeze()  # hand the objects back to the collector (matters in tests)

    async def action_quit(self) -> None:
        if self.source is not None:
            with contextlib.suppress(Exception):
                await self.source.stop()
        self.exit(0)

    # --- feeding -----------------------------------------------------------------------

    @work(exclusive=True, group="source", exit_on_error=False)
    async def consume_source(self) -> None:
        """Read the source's events and fold them, a slice at a time."""
        assert self.source is not None
        async with contextlib.aclosing(self.source.events()) as events:
            async for event in events:
                if isinstance(event, Lines):
                    await self._fold(event.lines)
                elif isinstance(event, Progress):
                    self.loading = None if event.done >= event.total else (event.done, event.total)
                    self._dirty = True
                elif isinstance(event, Status):
                    if event.text.startswith("following") or event.text.startswith("history"):
                        if not self._live:
                            # the history is in: keep the collector off its objects
                            # (a full collection over a big heap is a visible pause)
                            gc.freeze()
                        self._live = True
                        self.loading = None
                        self._start_subagents()
                    self.waiting = None
                    self._dirty = True
                elif isinstance(event, Waiting):
                    self.waiting = event.reason
                    self._dirty = True
                elif isinstance(event, Reset):
                    self._reset(event.reason)
                elif isinstance(event, Stderr):
                    self.stderr_lines.append(event.text)
                elif isinstance(event, Ended):
                    self._start_subagents()
                    code = f" (exit {event.exit_code})" if event.exit_code is not None else ""
                    self.ended = f"{event.reason}{code}"
                    self.loading = None
                    if event.exit_code not in (None, 0):
                        self.notify(f"command {event.reason}{code}", severity="error")
                    self._dirty = True
        self._flush_panels()

    def _start_subagents(self) -> None:
        """For an on-disk session, fold (and follow) its sub-agent files too."""
        if self._subagents_started or self.feed.session.format != "transcript":
            return
        path = getattr(self.source, "path", None)
        if not isinstance(self.source, FileTail) or path is None:
            return
        self._subagents_started = True
        self.follow_subagents(path, self.source.follow)

    @work(exclusive=True, group="subagents", exit_on_error=False)
    async def follow_subagents(self, path: Path, follow: bool) -> None:
        def on_lines(agent: str, _path: Path, lines: list[RawLine]) -> None:
            self._broadcast(self.feed.feed_agent_file(lines, agent))

        tail = SubagentTail(path, on_lines, lambda: self.feed.session.agent_file_ids, follow=follow)
        await tail.run()

    async def _fold(self, lines: list) -> None:
        """Fold a batch in slices, giving the UI the loop back every
        :data:`FOLD_BUDGET_S` so a big history paints its first screen at once
        and keeps responding to keys while the rest loads."""
        if not self._first_paint:
            # nothing to show before the main screen exists: let it mount and paint
            while not (isinstance(self.screen, SessionScreen) and self.screen.is_mounted):
                await asyncio.sleep(0.01)
        received = self.now() if self._live else None
        clock = time.perf_counter
        for start in range(0, len(lines), FOLD_SLICE):
            changes = self.feed.feed(lines[start:start + FOLD_SLICE], received_at=received)
            self._broadcast(changes)
            if not self._first_paint:
                self._first_paint = True
                self._flush_panels()
                await asyncio.sleep(0.03)
                self.first_paint_at = clock()
                self._slice_started = clock()
            elif clock() - self._slice_started > FOLD_BUDGET_S:
                await asyncio.sleep(0.004)
                self._slice_started = clock()

    def fold_now(self, lines: list) -> None:
        """Fold lines synchronously (tests and snapshots)."""
        self._broadcast(self.feed.feed(lines))

    def _broadcast(self, changes: list[Change]) -> None:
        if not changes:
            return
        for screen in self.screen_stack:
            if isinstance(screen, SessionScreen):
                screen.apply_changes(changes)
        self._dirty = True

    def _reset(self, reason: str) -> None:
        self.feed = Feed()
        self._subagents_started = False
        while len(self.screen_stack) > 2 or not isinstance(self.screen, SessionScreen):
            self.pop_screen()
        for screen in self.screen_stack:
            if isinstance(screen, SessionScreen):
                screen.reset(self.feed.session)
        self.notify(f"source reset: {reason}", severity="warning")
        self._dirty = True

    def _flush_panels(self) -> None:
        if not self._dirty:
            return
        self._dirty = False
        screen = self.screen
        if isinstance(screen, SessionScreen):
            screen.refresh_panels()

    def _tick(self) -> None:
        self._dirty = True

    # --- navigation ----------------------------------------------------------------------

    def open_agent(self, agent_id: str) -> None:
        """Push the transcript of a sub-agent."""
        if agent_id not in self.feed.session.agents:
            self.notify("that sub-agent has not produced anything yet", severity="warning")
            return
        self.push_screen(SessionScreen(agent_id))

    def action_help(self) -> None:
        from .screens.help import HelpScreen

        rows: list[tuple[str, str, str]] = []
        seen: set[tuple[str, str]] = set()
        for key, binding in self.screen.active_bindings.items():
            b = binding.binding
            if not b.description:
                continue
            display = b.key_display or self.get_key_display(b)
            if (display, b.description) in seen:
                continue
            seen.add((display, b.description))
            group = _HELP_GROUPS.get(type(binding.node).__name__, "General")
            rows.append((display, b.description, group))
        rows.sort(key=lambda row: _GROUP_ORDER.index(row[2]) if row[2] in _GROUP_ORDER else 99)
        self.push_screen(HelpScreen(rows))

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A reader that fails says so; it never takes the viewer down."""
        if event.state == WorkerState.ERROR:
            error = event.worker.error
            self.ended = f"reader failed: {type(error).__name__}: {error}"
            self.notify(self.ended, severity="error", timeout=10)
            self._dirty = True

    @on(SessionScreen.Dirty)
    def _on_dirty(self) -> None:
        self._dirty = True
