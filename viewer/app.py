"""The cctv Textual app: one source, one fold, a screen per agent transcript."""

from __future__ import annotations

import asyncio
import contextlib
import gc
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

from .commands import CctvCommands
from .newest import NewestSession
from .screens.session import SessionScreen
from .source_state import SourceState
from .sources import FileTail, Lines, Source, is_reset
from .stderr_buffer import StderrBuffer
from .subagent_tail import SubagentTail, resolve_agent

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
        Binding("L", "switch_newest", "Switch to the newer session", show=False, id="newest"),
    ]

    NEWEST_POLL_S = 2.0
    """How often ``cctv tail`` looks for a session newer than the one it follows."""

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
        newest: NewestSession | None = None,
        follow_newest: bool = False,
    ) -> None:
        super().__init__()
        self.newest = newest
        """Set for ``cctv tail``: notices a session that starts after the followed one."""
        self.follow_newest = follow_newest
        """Switch to a newer session at once instead of offering it."""
        self.offered: Path | None = None
        self._label = label
        self.intro = intro
        """A line to show when the app starts (e.g. which session `cctv tail` picked)."""
        self.source = source
        self.feed = feed or Feed(keep_malformed_runs=False)
        self.clock = clock
        """Wall clock for live elapsed times; ``None`` in tests (state only)."""
        self.loading: tuple[int, int] | None = None
        self.source_state = SourceState(source.kind if source is not None else "file",
                                        follow=getattr(source, "follow", True),
                                        label=self.source_label)
        """What the source says happens (status text, notices, exit status)."""
        self.stderr = StderrBuffer()
        """The command's standard error (``cctv run``), bounded; the rest spills to the cache."""
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

    # --- lifecycle ---------------------------------------------------------------------

    def on_mount(self) -> None:
        self.push_screen(SessionScreen(MAIN))
        if self.intro:
            self.notify(self.intro, timeout=6, markup=False)  # names from the file system
        if self.source is not None:
            self.consume_source()
        self.set_interval(0.1, self._flush_panels)
        if self.clock is not None:
            self.set_interval(1.0, self._tick)
        if self.newest is not None:
            self.set_interval(self.NEWEST_POLL_S, self._check_newest)

    def on_unmount(self) -> None:
        gc.unfreeze()  # hand the objects back to the collector (matters in tests)

    async def action_quit(self) -> None:
        """Quit at once, whatever is loading; a running command is told to stop."""
        if self.source is not None:
            with contextlib.suppress(Exception):
                await self.source.stop()  # returns at once: it only signals
        code = self.source_state.exit_status(quitting=True)
        self.exit(code, return_code=code)

    # --- a newer session (cctv tail) ------------------------------------------------------

    def _check_newest(self) -> None:
        if self.newest is None:
            return
        path = self.newest.poll()
        if path is None:
            return
        if self.follow_newest:
            self.switch_to(path)
            self.notify(f"following the newer session {path.name}", timeout=6, markup=False)
            return
        self.offered = path
        self.notify(f"a newer session started: {path.parent.name}/{path.name} — press L to switch",
                    title="newer session", timeout=20, markup=False)

    async def action_switch_newest(self) -> None:
        if self.offered is None:
            self.notify("no newer session has started", severity="warning")
            return
        path, self.offered = self.offered, None
        self.switch_to(path)

    def switch_to(self, path: Path) -> None:
        """Follow another session file instead of the current source."""
        old = self.source
        self.source = FileTail(path, follow=True)
        self._label = None
        if self.newest is not None:
            self.newest.current = path
        self.source_state = SourceState("file", follow=True, label=self.source_label)
        self._reset()
        self.consume_source()  # exclusive: the old reader is cancelled and closed
        if old is not None:
            self.run_worker(old.stop(), exit_on_error=False)

    # --- feeding -----------------------------------------------------------------------

    @work(exclusive=True, group="source", exit_on_error=False)
    async def consume_source(self) -> None:
        """Read the source's events and fold them, a slice at a time."""
        assert self.source is not None
        state = self.source_state
        async with contextlib.aclosing(self.source.events()) as events:
            async for event in events:
                if isinstance(event, Lines):
                    await self._fold(event.lines)
                    state.output_seen(time.monotonic())
                    if self._live and not self._subagents_started:
                        self._start_subagents()  # a session that began empty: now its format is known
                    continue
                reset = is_reset(event)
                if reset:
                    self._reset()
                effect = state.apply(event, time.monotonic())
                self.loading = state.loading
                if effect.stderr is not None:
                    self.stderr.extend(effect.stderr)
                if effect.history_in:
                    if not self._live:
                        # the history is in: keep the collector off its objects
                        # (a full collection over a big heap is a visible pause)
                        gc.freeze()
                    self._live = True
                    self._start_subagents()
                if effect.notice is not None:
                    text, level = effect.notice
                    item_level = "info" if level == "information" else level  # NoticeItem's words
                    self._broadcast(self.feed.session.source_notice(text, item_level))
                if effect.toast is not None:
                    text, level = effect.toast
                    self.notify(text, severity=level, timeout=8, markup=False)
                self._dirty = True
        state.finished()
        self._start_subagents()
        self.loading = None
        self.ended = state.ended
        self.stderr.flush()
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
        feed = self.feed  # a reset makes a new one (and cancels this worker)

        def on_new(agent_id: str, agent_path: Path, meta: dict) -> None:
            session = feed.session
            agent = session.agent_for(agent_id)
            file_id = agent_path.stem.removeprefix("agent-")
            agent.agent_file_id = file_id
            session.agent_file_ids.setdefault(file_id, agent_id)
            agent.subagent_type = agent.subagent_type or meta.get("agentType")
            agent.description = agent.description or str(meta.get("description") or "")

        def on_lines(agent: str, _path: Path, lines: list[RawLine]) -> None:
            self._broadcast(feed.feed_agent_file(lines, agent))

        def resolve(agent_path: Path, meta: dict) -> str | None:
            return resolve_agent(feed.session, agent_path, meta)

        tail = SubagentTail(path, on_lines, resolve, on_new=on_new, follow=follow)
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

    def _reset(self) -> None:
        """The source starts over (its file was truncated or written anew): drop all state."""
        self.feed = Feed(keep_malformed_runs=False)
        self._subagents_started = False
        self.workers.cancel_group(self, "subagents")
        self.ended = None
        while len(self.screen_stack) > 2 or not isinstance(self.screen, SessionScreen):
            self.pop_screen()
        for screen in self.screen_stack:
            if isinstance(screen, SessionScreen):
                screen.reset(self.feed.session)
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
