"""The cctv Textual app: one source, one fold, a screen per agent transcript."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from textual import work
from textual.app import App, ScreenStackError, SystemCommand
from textual.binding import Binding
from textual.command import Provider
from textual.content import Content
from textual.reactive import var
from textual.screen import Screen
from textual.worker import Worker, WorkerState

from cctv.widgets.safe_text import is_safe, visible

from .stderr_buffer import StderrBuffer

if TYPE_CHECKING:
    from cctv.reducer.feed import Feed
    from cctv.reducer.frame_links import FrameLinks, FrameStepper
    from cctv.reducer.frames import Entry
    from cctv.reducer.item_time import Arrivals
    from cctv.reducer.lines import RawLine
    from cctv.reducer.state import Change, Item

    from .newest import NewestSession
    from .rawstore import RawStore
    from .source_state import SourceState
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

_HELP_GROUPS = {"TranscriptView": "Transcript", "SessionScreen": "Session", "CctvApp": "General"}
_GROUP_ORDER = ["Transcript", "Session", "General"]

FOLD_SLICE = 1000
"""Lines folded between two looks at the clock while a history loads."""
FOLD_BUDGET_S = 0.06
"""Longest stretch of folding before the UI gets the event loop back to paint."""


def _cctv_commands() -> type[Provider]:
    """The palette's cctv commands, imported when the palette first opens."""
    from .commands import CctvCommands

    return CctvCommands


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
    COMMANDS = App.COMMANDS | {_cctv_commands}
    BINDINGS = [
        Binding("q", "quit", "Quit", id="quit"),
        Binding("question_mark", "help", "Help", key_display="?", id="help"),
        # a viewer quits on ctrl+c, as `less` and `tail -f` users expect
        Binding("ctrl+c", "quit", "Quit", show=False, priority=True, id="quit_ctrl_c"),
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
        browse: BrowseOptions | None = None,
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
        self.browse = browse
        """Open on the session browser (``cctv``, ``cctv browse``) instead of one source."""
        self._goto_line: int | None = None
        self.intro = intro
        """A line to show when the app starts (e.g. which session `cctv tail` picked)."""
        self.source = source
        if feed is not None:
            self.feed = feed
        self.clock = clock
        """Wall clock for live elapsed times; ``None`` in tests (state only)."""
        self.loading: tuple[int, int] | None = None
        self._source_state: SourceState | None = None
        if source is not None:
            from .source_state import SourceState

            self._source_state = SourceState(source.kind, follow=getattr(source, "follow", True),
                                             label=self.source_label)
        self.stderr = StderrBuffer()
        """The command's standard error (``cctv run``), bounded; the rest spills to the cache."""
        self._live = False
        self._dirty = False
        self._subagents_started = False
        self._first_paint = False
        self._slice_started = 0.0
        self.first_paint_at: float | None = None
        """``time.perf_counter()`` when the first folded lines had been painted."""
        self._links: dict[str, FrameLinks] = {}
        self._panel_timers = False

    # --- the session's state, made when a session first needs it ------------------------

    @cached_property
    def feed(self) -> Feed:
        """The fold of the source (a new one when the source starts over)."""
        return self._new_feed()

    @cached_property
    def raw_store(self) -> RawStore:
        """Where the raw view finds the bytes of a line the Feed did not keep."""
        from .rawstore import RawStore

        return RawStore()

    @cached_property
    def arrivals(self) -> Arrivals:
        """When live lines arrived (the time of items whose rows carry none)."""
        from cctv.reducer.item_time import Arrivals

        return Arrivals()

    @property
    def source_state(self) -> SourceState:
        """What the source says happens (status text, notices, exit status)."""
        if self._source_state is None:
            from .source_state import SourceState

            self._source_state = SourceState("file", follow=True, label=self.source_label)
        return self._source_state

    @source_state.setter
    def source_state(self, state: SourceState) -> None:
        self._source_state = state

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
        """Save an SVG of the screen in the current directory (else the cache directory)."""
        from .paths import cache_dir

        name = time.strftime("cctv-%Y%m%d-%H%M%S.svg")
        svg = self.export_screenshot()
        for folder in (Path.cwd(), cache_dir("screenshots")):
            try:
                (folder / name).write_text(svg, encoding="utf-8")
            except OSError:
                continue
            self.notify(Content(f"Screenshot saved: {folder / name}"), timeout=8)
            return
        self.notify("Could not save the screenshot", severity="error")

    @property
    def source_label(self) -> str:
        if self._label is not None:
            return self._label
        return self.source.label if self.source is not None else "loaded file"

    def _new_feed(self) -> Feed:
        """A Feed for the source: one read from a regular file leaves the lines'
        bytes on disk (the raw view reads them back through :attr:`raw_store`)."""
        from cctv.reducer.feed import Feed

        from .rawstore import rereadable

        source = self.source
        path = getattr(source, "path", None)
        from_file = source is not None and source.kind == "file" and path is not None
        # a live viewer fed endless garbage keeps one row and one line per run of it
        return Feed(keep_raw=not (from_file and rereadable(path)), keep_malformed_runs=False)

    def now(self) -> float | None:
        return self.clock() if self.clock is not None else None

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

    def main_screen(self) -> Screen:
        """The screen the app opens with: the browser, the session, or (a replay) its own."""
        if self.browse is not None:
            from .screens.browse import BrowseScreen

            return BrowseScreen(self.browse.root, use_index=self.browse.use_index,
                                examples=self.browse.examples)
        from cctv.reducer.state import MAIN

        from .screens.session import SessionScreen

        return SessionScreen(MAIN)

    def on_mount(self) -> None:
        if self.browse is not None:
            # pushed once the app's start-up is over: a screen pushed during it lays
            # out and renders its first frame while Textual holds every repaint, and
            # that frame (the browser's whole first screen) is thrown away
            self.call_later(self.push_screen, self.main_screen())
        else:
            self.push_screen(self.main_screen())
            self._start_panel_timers()
        if self.intro:
            self.notify(self.intro, timeout=6, markup=False)  # names from the file system
        if self.source is not None:
            self.consume_source()
        if self.newest is not None:
            self.set_interval(self.NEWEST_POLL_S, self._check_newest)

    def _start_panel_timers(self) -> None:
        """Redraw a session's panels as it changes, and its elapsed times as time
        passes (from the first session screen on: the browser has no panels)."""
        if self._panel_timers:
            return
        self._panel_timers = True
        self.set_interval(0.1, self._flush_panels)
        if self.clock is not None:
            self.set_interval(1.0, self._tick)

    def on_unmount(self) -> None:
        gc.unfreeze()  # hand the objects back to the collector (matters in tests)

    async def action_quit(self) -> None:
        """Quit at once, whatever is loading; a running command is told to stop."""
        if self.source is not None:
            with contextlib.suppress(Exception):
                await self.source.stop()  # returns at once: it only signals
        # a browser that opened no session has no source to speak of (nor to import)
        state = self._source_state
        code = state.exit_status(quitting=True) if state is not None else 0
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
        from .source_state import SourceState
        from .sources import FileTail

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
        from .sources import Lines, Recreated, Replaced, is_reset

        assert self.source is not None
        state = self.source_state
        async with contextlib.aclosing(self.source.events()) as events:
            async for event in events:
                if isinstance(event, Lines):
                    if not self.feed.keep_raw:
                        self.raw_store.track(getattr(self.source, "path"))
                    await self._fold(event.lines)
                    state.output_seen(time.monotonic())
                    if self._live and not self._subagents_started:
                        self._start_subagents()  # a session that began empty: now its format is known
                    continue
                if is_reset(event):
                    self._reset()
                elif isinstance(event, (Replaced, Recreated)) and not self.feed.keep_raw:
                    self.raw_store.replaced(getattr(self.source, "path"))  # rotated: lines go on
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
                    self._go_to_line()
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
        self._go_to_line()
        self.loading = None
        self.ended = state.ended
        self.stderr.flush()
        self._dirty = True
        self._flush_panels()

    def _start_subagents(self) -> None:
        """For an on-disk session, fold (and follow) its sub-agent files too."""
        from .sources import FileTail

        if self._subagents_started or self.feed.session.format != "transcript":
            return
        path = getattr(self.source, "path", None)
        if not isinstance(self.source, FileTail) or path is None:
            return
        self._subagents_started = True
        self.follow_subagents(path, self.source.follow)

    @work(exclusive=True, group="subagents", exit_on_error=False)
    async def follow_subagents(self, path: Path, follow: bool) -> None:
        from .subagent_tail import SubagentTail, agent_file_found, resolve_agent

        feed = self.feed  # a reset makes a new one (and cancels this worker)

        def on_new(agent_id: str, agent_path: Path, meta: dict) -> None:
            self._broadcast(agent_file_found(feed.session, agent_path, meta, agent_id))

        def on_lines(agent: str, agent_path: Path, lines: list[RawLine]) -> None:
            if not feed.keep_raw:
                self.raw_store.track(agent_path, agent)
            self._broadcast(feed.feed_agent_file(lines, agent))

        def resolve(agent_path: Path, meta: dict) -> str | None:
            return resolve_agent(feed.session, agent_path, meta)

        tail = SubagentTail(path, on_lines, resolve, on_new=on_new, follow=follow)
        await tail.run()

    async def _fold(self, lines: list) -> None:
        """Fold a batch in slices, giving the UI the loop back every
        :data:`FOLD_BUDGET_S` so a big history paints its first screen at once
        and keeps responding to keys while the rest loads."""
        from .screens.session import SessionScreen

        if not self._first_paint:
            # nothing to show before the main screen exists: let it mount and paint
            while not (isinstance(self.screen, SessionScreen) and self.screen.is_mounted):
                await asyncio.sleep(0.01)
        received = self.now() if self._live else None
        if received is not None and lines:
            self.arrivals.record(lines[0][0], received)
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
        from .screens.session import SessionScreen

        for screen in self.screen_stack:
            if isinstance(screen, SessionScreen):
                screen.apply_changes(changes)
        self._dirty = True

    def _reset(self) -> None:
        """The source starts over (its file was truncated or written anew): drop all state."""
        from cctv.reducer.item_time import Arrivals
        from cctv.reducer.state import MAIN

        from .screens.session import SessionScreen

        self.feed = self._new_feed()
        self.raw_store.forget()
        self.arrivals = Arrivals()
        self._links = {}
        self._subagents_started = False
        self.workers.cancel_group(self, "subagents")
        self.ended = None
        while not (isinstance(self.screen, SessionScreen) and self.screen.agent_id == MAIN):
            self.pop_screen()
        for screen in self.screen_stack:
            if isinstance(screen, SessionScreen):
                screen.reset(self.feed.session)
        self._dirty = True

    def _flush_panels(self) -> None:
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

    def _tick(self) -> None:
        self._dirty = True

    # --- the browser -----------------------------------------------------------------------

    def open_session(self, path: Path, *, line: int | None = None, follow: bool = False) -> None:
        """From the browser: view the session at ``path`` (scrolled to the item of
        line ``line`` once it is read; followed as it grows when ``follow``)."""
        from cctv.reducer.item_time import Arrivals
        from cctv.reducer.state import MAIN

        from .screens.session import SessionScreen
        from .source_state import SourceState
        from .sources import FileTail

        self._stop_source()
        self.source = FileTail(path, follow=follow)
        self.feed = self._new_feed()
        self.raw_store.forget()
        self.arrivals = Arrivals()
        self._links = {}
        self.loading = None
        self.source_state = SourceState("file", follow=follow, label=self.source_label)
        self.stderr = StderrBuffer()
        self.ended = None
        self._live = self._dirty = self._subagents_started = self._first_paint = False
        self._goto_line = line
        self.push_screen(SessionScreen(MAIN))
        self._start_panel_timers()
        self.consume_source()

    def close_session(self) -> None:
        """Back from a session opened by the browser to the browser."""
        from .screens.browse import BrowseScreen

        self._stop_source()
        self.source = None
        while not isinstance(self.screen, BrowseScreen) and len(self.screen_stack) > 1:
            self.pop_screen()

    def _stop_source(self) -> None:
        self.workers.cancel_group(self, "source")
        self.workers.cancel_group(self, "subagents")
        if self.source is not None:
            self.run_worker(self.source.stop(), exit_on_error=False)

    def _go_to_line(self) -> None:
        from cctv.reducer.state import MAIN

        from .screens.session import SessionScreen

        line, self._goto_line = self._goto_line, None
        if line is None:
            return
        for screen in self.screen_stack:
            if isinstance(screen, SessionScreen) and screen.agent_id == MAIN:
                screen.go_to_line(line)

    def item_time(self, item: Item) -> float | None:
        """When ``item`` happened (its row's timestamp, else when it arrived live)."""
        from cctv.reducer.item_time import ItemTimes

        return ItemTimes(self.feed, self.arrivals).of(item)

    def frame_stepper(self, item: Item, entry: Entry) -> FrameStepper:
        """For the raw view: the frames paired with ``item``'s (a tool call's
        result, task frames and heartbeats), in the file ``entry`` came from."""
        from cctv.reducer.frame_links import FrameLinks, FrameStepper
        from cctv.reducer.state import ToolItem

        entries = self.feed.agent_entries.get(item.agent, self.feed.entries) \
            if item.agent else self.feed.entries
        key = item.agent if entries is not self.feed.entries else ""
        links = self._links.get(key)
        if links is None or links.entries is not entries:
            links = self._links[key] = FrameLinks(entries)
        chain = links.chain_of_call(item.call.id) if isinstance(item, ToolItem) else None
        if chain and entry.line_no not in chain:
            chain = None
        return FrameStepper(entries, links, entry, chain)

    # --- navigation ----------------------------------------------------------------------

    def open_agent(self, agent_id: str) -> None:
        """Push the transcript of a sub-agent."""
        from .screens.session import SessionScreen

        if agent_id not in self.feed.session.agents:
            self.notify("that sub-agent has not produced anything yet", severity="warning")
            return
        self.push_screen(SessionScreen(agent_id))

    def action_help(self) -> None:
        """Every cctv key of the active screen, grouped, one row per action.

        Only cctv's own bindings (they carry an ``id``) are listed: the scroll
        bindings Textual's base widgets bring do nothing a user needs here."""
        from .screens.help import HelpScreen

        keys: dict[tuple[str, str], list[str]] = {}
        groups: dict[tuple[str, str], str] = {}
        for binding in self.screen.active_bindings.values():
            b = binding.binding
            if not b.description or b.id is None:
                continue
            slot = (b.action, b.description)
            display = b.key_display or self.get_key_display(b)
            if display not in keys.setdefault(slot, []):
                keys[slot].append(display)
            groups.setdefault(slot, _HELP_GROUPS.get(type(binding.node).__name__, "General"))
        rows = [(" ".join(keys[slot]), slot[1], groups[slot]) for slot in keys]
        rows.sort(key=lambda row: _GROUP_ORDER.index(row[2]) if row[2] in _GROUP_ORDER else 99)
        self.push_screen(HelpScreen(rows))

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A reader that fails says so; it never takes the viewer down."""
        if event.state == WorkerState.ERROR:
            error = event.worker.error
            self.ended = f"reader failed: {type(error).__name__}: {error}"
            self.notify(self.ended, severity="error", timeout=10)
            self._dirty = True

    def on_session_screen_dirty(self) -> None:
        """A session screen's panels need a redraw (:class:`SessionScreen.Dirty`)."""
        self._dirty = True
