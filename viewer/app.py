"""The cctv Textual app: the session browser, or one followed source, a screen per agent transcript."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from textual import work
from textual.binding import Binding
from textual.timer import Timer

from cctv.reducer.format import clip, title_text

from .messages import CloseSession, OpenSession
from .viewer_app import ViewerApp

if TYPE_CHECKING:
    from threading import Thread

    from cctv.reducer.feed import Feed
    from cctv.reducer.lines import RawLine

    from .live_board import LiveBoard, Transition
    from .live_session import LiveSession
    from .newest import NewestSession
    from .sources import Source

# What a session needs (the fold, the sources, the session screen and its
# widgets) is imported where a session is opened, not with the app: the session
# browser shows its first screen without any of it.

__all__ = ["BrowseOptions", "CctvApp"]


@dataclass(frozen=True)
class BrowseOptions:
    """What the session browser lists: a projects folder, through the index or not."""

    root: Path
    use_index: bool = True
    examples: list[Path] = field(default_factory=list)
    """Sessions to offer, marked as examples, when the folder holds none."""
    search: str = ""
    """What the search box holds at first (``cctv browse ID``: a session id)."""


FOLD_SLICE = 1000
"""Lines folded between two looks at the clock while a history loads."""
FOLD_BUDGET_S = 0.06
"""Longest stretch of folding before the UI gets the event loop back to paint."""


class CctvApp(ViewerApp["LiveSession"]):
    """View one Claude Code session from a file, a pipe or a command, or
    browse the saved sessions and open one.

    | Key(s) | Description |
    | :- | :- |
    | q | Quit |
    | ? | Help: every key |
    | ctrl+p | Command palette |
    """

    BINDINGS = [
        Binding("L", "switch_newest", "Switch to the newer session", show=False, id="newest"),
        Binding("J", "switch_calling", "Switch to the session that needs you", show=False,
                id="calling"),
    ]

    NEWEST_POLL_S = 2.0
    """How often ``cctv tail`` looks for a session newer than the one it follows."""

    def __init__(
        self,
        source: Source | None,
        *,
        feed: Feed | None = None,
        clock: Callable[[], float] | None = time.time,
        intro: str | None = None,
        label: str | None = None,
        browse: BrowseOptions | None = None,
        newest: NewestSession | None = None,
        follow_newest: bool = False,
    ) -> None:
        shown = None
        if browse is None:
            from .live_session import LiveSession

            shown = LiveSession(source, feed=feed, label=label, clock=clock)
        super().__init__(shown, ticks=clock is not None)
        self.newest = newest
        """Set for ``cctv tail``: notices a session that starts after the followed one."""
        self.follow_newest = follow_newest
        """Switch to a newer session at once instead of offering it."""
        self.offered: Path | None = None
        self.board: LiveBoard | None = None
        """For ``cctv tail``: the other live sessions and their states."""
        self.calling: str | None = None
        """The path of another live session that started needing you (``J`` switches)."""
        self._others_timer: Timer | None = None
        self.browse = browse
        """Open on the session browser (``cctv``, ``cctv browse``) instead of one source."""
        self.intro = intro
        """A line to show when the app starts (e.g. which session `cctv tail` picked)."""
        self.clock = clock
        """Wall clock for live elapsed times; ``None`` in tests (state only)."""
        self._first_paint = False
        self._slice_started = 0.0
        self.first_paint_at: float | None = None
        """``time.perf_counter()`` when the first folded lines had been painted."""
        self.checkpoint_writer: Thread | None = None
        """Waits for the child writing the last checkpoint (see :mod:`viewer.fold_cache`)."""

    # --- lifecycle ---------------------------------------------------------------------

    def on_mount(self) -> None:
        if self.browse is not None:
            from .screens.browse import BrowseScreen

            browse = self.browse
            # pushed once the app's start-up is over: a screen pushed during it lays
            # out and renders its first frame while Textual holds every repaint, and
            # that frame (the browser's whole first screen) is thrown away
            self.call_later(self.push_screen, BrowseScreen(browse.root, use_index=browse.use_index,
                                                           examples=browse.examples,
                                                           search=browse.search))
        else:
            from cctv.reducer.state import MAIN

            from .screens.session import SessionScreen

            assert self.shown is not None
            self.push_screen(SessionScreen(self.shown, MAIN))
            self._start_panel_timers()
        if self.intro:
            self.notify(self.intro, timeout=6, markup=False)  # names from the file system
        if self.shown is not None and self.shown.source is not None:
            self.consume_source(self.shown)
        if self.newest is not None:
            self.set_interval(self.NEWEST_POLL_S, self._check_newest)
            self.watch_others(self.newest.root)

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

    # --- another live session that needs you (cctv tail) -----------------------------------

    @work(exclusive=True, group="others", exit_on_error=False)
    async def watch_others(self, root: Path) -> None:
        """Keep the live states of the other sessions under ``root`` from file
        events: the status bar says when one starts needing you."""
        from .live_board import LiveBoard, RowReader, watch_sessions

        board = self.board = LiveBoard()
        reader = RowReader()
        board.update(await asyncio.to_thread(reader.recent, root, time.time(), board.horizon),
                     time.time())
        self._others_changed([])  # what already waits is not news
        async for paths in watch_sessions(root):
            rows = await asyncio.to_thread(reader.read, paths)
            self._others_changed(board.update(rows, time.time()))

    def _retime_others(self) -> None:
        """The board's due time came: the states that changed with nothing written."""
        if self.board is not None:
            self._others_changed(self.board.retime(time.time()))

    def _others_changed(self, changes: list[Transition]) -> None:
        """Say in the status bar which other session now needs you, and its key;
        look again at the board's next due time."""
        board = self.board
        if board is None:
            return
        current = self._followed()
        for change in changes:
            if change.calls_you and change.path != current:
                self.calling = change.path
        row = board.rows.get(self.calling) if self.calling is not None else None
        state = board.states.get(self.calling) if self.calling is not None else None
        elsewhere = None
        if row is None or state is None or not state.needs_you or self.calling == current:
            self.calling = None
        else:
            elsewhere = (f"{state.glyph} {clip(title_text(row.title), 32, one_line=True)}: "
                         f"{state.words} · J to switch")
        self._say_elsewhere(elsewhere)
        if self._others_timer is not None:
            self._others_timer.stop()
        now = time.time()
        due = board.due(now)
        self._others_timer = None if due is None else \
            self.set_timer(max(due - now, 0.05), self._retime_others)

    def _followed(self) -> str | None:
        """The path of the session file followed now."""
        source = self.shown.source if self.shown is not None else None
        path = getattr(source, "path", None)
        return str(path) if path is not None else None

    def action_switch_calling(self) -> None:
        """``J``: follow the other session that needs you."""
        if self.calling is None:
            self.notify("no other session needs you", severity="warning")
            return
        path, self.calling = Path(self.calling), None
        self._say_elsewhere(None)
        self.switch_to(path)

    def _say_elsewhere(self, text: str | None) -> None:
        """Put ``text`` (what another session asks of you) in every session screen's status bar."""
        from .screens.session import SessionScreen

        for screen in self.screen_stack:
            if isinstance(screen, SessionScreen) and screen.elsewhere != text:
                screen.elsewhere = text
                self._dirty = True

    async def action_switch_newest(self) -> None:
        if self.offered is None:
            self.notify("no newer session has started", severity="warning")
            return
        path, self.offered = self.offered, None
        self.switch_to(path)

    def switch_to(self, path: Path) -> None:
        """Follow another session file instead of the current source."""
        from .live_session import LiveSession
        from .sources import FileTail

        old = self.shown
        if self.newest is not None:
            self.newest.current = path
        live = LiveSession(FileTail(path, follow=True), clock=self.clock)
        self._replace(live)
        self.consume_source(live)  # exclusive: the old reader is cancelled and closed
        if old is not None and old.source is not None:
            self.run_worker(old.source.stop(), exit_on_error=False)

    def _replace(self, live: LiveSession) -> None:
        """Show ``live`` instead of the session shown (the same screens: back
        to the main transcript)."""
        from cctv.reducer.state import MAIN

        from .screens.session import SessionScreen

        self.shown = live
        self.workers.cancel_group(self, "subagents")
        while not (isinstance(self.screen, SessionScreen) and self.screen.agent_id == MAIN):
            self.pop_screen()
        for screen in self.screen_stack:
            if isinstance(screen, SessionScreen):
                screen.show(live)
        self._dirty = True

    # --- feeding -----------------------------------------------------------------------

    @work(exclusive=True, group="source", exit_on_error=False)
    async def consume_source(self, live: LiveSession) -> None:
        """Read the source's events and fold them, a slice at a time."""
        from .sources import Lines, is_reset

        assert live.source is not None
        restored = await asyncio.to_thread(live.restored)
        if restored is not None:  # the fold kept in the cache: only what is new is read
            gc.freeze()  # as once a history is in: a full collection over it is a visible pause
            await self._screen_mounted()
            live = restored
            self._replace(live)
            await self._first_screen()
        async with contextlib.aclosing(live.source.events()) as events:
            async for event in events:
                if isinstance(event, Lines):
                    await self._fold(live, event.lines)
                    live.source_state.output_seen(time.monotonic())
                    if live.live and not live.subagents_started:
                        self._start_subagents(live)  # a session that began empty: now its format is known
                    continue
                if is_reset(event):
                    live = live.restarted()  # the source starts over: a new fold
                    self._replace(live)
                was_live = live.live
                effect = live.take(event, time.monotonic())
                if effect.history_in:
                    if not was_live:
                        self._keep_checkpoint(live)
                        # the history is in: keep the collector off its objects
                        # (a full collection over a big heap is a visible pause)
                        gc.freeze()
                    self._start_subagents(live)
                    self._go_to_line(live)
                if effect.notice is not None:
                    text, level = effect.notice
                    item_level = "info" if level == "information" else level  # NoticeItem's words
                    self._broadcast(live.session.source_notice(text, item_level))
                if effect.toast is not None:
                    text, level = effect.toast
                    self.notify(text, severity=level, timeout=8, markup=False)
                self._dirty = True
        live.finished()
        self._start_subagents(live)
        self._go_to_line(live)
        self._dirty = True
        self._flush_panels()

    def _keep_checkpoint(self, live: LiveSession) -> None:
        """Keep the fold of a big file in the cache, as it is before its
        sub-agent files are folded into it (a forked child writes it)."""
        self.checkpoint_writer = live.keep_checkpoint() or self.checkpoint_writer

    def _start_subagents(self, live: LiveSession) -> None:
        """For an on-disk session, fold (and follow) its sub-agent files too."""
        found = live.subagents_to_follow()
        if found is not None:
            self.follow_subagents(live, *found)

    @work(exclusive=True, group="subagents", exit_on_error=False)
    async def follow_subagents(self, live: LiveSession, path: Path, follow: bool) -> None:
        """Fold a session's sub-agent files (a new session cancels this worker)."""
        from .subagent_tail import SubagentTail

        def on_new(agent_id: str, agent_path: Path, meta: dict) -> None:
            self._broadcast(live.agent_file_found(agent_id, agent_path, meta))

        def on_lines(agent: str, agent_path: Path, lines: list[RawLine]) -> None:
            self._broadcast(live.agent_lines(agent, agent_path, lines))
            if live.goto_agent == agent:
                self._go_to_line(live)  # a hit in this sub-agent: its screen, at the line

        tail = SubagentTail(path, on_lines, live.resolve_agent, on_new=on_new, follow=follow)
        await tail.run()

    async def _fold(self, live: LiveSession, lines: list[RawLine]) -> None:
        """Fold a batch in slices, giving the UI the loop back every
        :data:`FOLD_BUDGET_S` so a big history paints its first screen at once
        and keeps responding to keys while the rest loads."""
        if not self._first_paint:
            await self._screen_mounted()
        received = live.lines_arrived(lines)
        clock = time.perf_counter
        for start in range(0, len(lines), FOLD_SLICE):
            self._broadcast(live.fold(lines[start:start + FOLD_SLICE], received))
            if not self._first_paint:
                await self._first_screen()
            elif clock() - self._slice_started > FOLD_BUDGET_S:
                await asyncio.sleep(0.004)
                self._slice_started = clock()

    async def _screen_mounted(self) -> None:
        """Nothing is shown before the main screen exists: let it mount."""
        from .screens.session import SessionScreen

        while not (isinstance(self.screen, SessionScreen) and self.screen.is_mounted):
            await asyncio.sleep(0.01)

    async def _first_screen(self) -> None:
        """Something to show is in: let the screen paint it now."""
        self._first_paint = True
        self._flush_panels()
        await asyncio.sleep(0.03)
        self.first_paint_at = self._slice_started = time.perf_counter()

    def fold_now(self, lines: list[RawLine]) -> None:
        """Fold lines synchronously (tests and snapshots)."""
        assert self.shown is not None
        self._broadcast(self.shown.feed.feed(lines))

    def _go_to_line(self, live: LiveSession) -> None:
        from cctv.reducer.state import MAIN

        from .screens.session import SessionScreen

        line = live.take_goto_line()
        if line is not None:
            for screen in self.screen_stack:
                if isinstance(screen, SessionScreen) and screen.agent_id == MAIN:
                    screen.go_to_line(line)
        found = live.take_goto_agent_line()
        if found is not None:
            for screen in self.screen_stack:  # escape comes back to the card that started it
                if isinstance(screen, SessionScreen) and screen.agent_id == MAIN:
                    screen.select_agent_card(found[0])
            self.push_screen(SessionScreen(live, found[0], line=found[1]))

    # --- the browser -----------------------------------------------------------------------

    def on_open_session(self, message: OpenSession) -> None:
        """From the browser: view the session at ``message.path`` (scrolled to
        the item of its line once it is read; followed as it grows if asked)."""
        from cctv.reducer.state import MAIN

        from .live_session import LiveSession
        from .screens.session import SessionScreen
        from .sources import FileTail

        self._stop_source()
        live = LiveSession(FileTail(message.path, follow=message.follow), clock=self.clock,
                           goto_line=message.line, goto_agent=message.agent)
        self.shown = live
        self._dirty = self._first_paint = False
        self.push_screen(SessionScreen(live, MAIN))
        self._start_panel_timers()
        self.consume_source(live)

    def on_close_session(self, message: CloseSession) -> None:
        """Back from a session opened by the browser to the browser."""
        from .screens.browse import BrowseScreen

        if self.browse is None:
            return
        self._stop_source()
        self.shown = None
        while not isinstance(self.screen, BrowseScreen) and len(self.screen_stack) > 1:
            self.pop_screen()

    def _stop_source(self) -> None:
        self.workers.cancel_group(self, "source")
        self.workers.cancel_group(self, "subagents")
        if self.shown is not None and self.shown.source is not None:
            self.run_worker(self.shown.source.stop(), exit_on_error=False)
