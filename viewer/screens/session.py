"""The transcript screen: one agent's transcript, the tasks panel, the status bar."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.css.query import NoMatches
from textual.message import Message
from textual.reactive import var
from textual.screen import Screen
from textual.widgets import Input, Static

from cctv.reducer.format import plural
from cctv.reducer.fold import Session
from cctv.reducer.state import MAIN, Change, NoticeItem
from cctv.reducer.verdict import session_verdict
from cctv.widgets.key_footer import KeyFooter
from cctv.widgets.safe_text import content
from cctv.reducer import pricing
from cctv.widgets.status_bar import StatusBar
from cctv.widgets.tasks_panel import TasksPanel
from cctv.widgets.transcript import TranscriptView

from ..messages import CloseSession, DiskNotes, OpenAgent

if TYPE_CHECKING:
    from ..shown import ShownSession

__all__ = ["SessionScreen"]


class SessionScreen(Screen[None]):
    """The transcript of one agent (the main conversation or a sub-agent) of
    the session it is given (:class:`~viewer.shown.ShownSession`).

    | Key(s) | Description |
    | :- | :- |
    | / | Search the transcript (n / N: next / previous match) |
    | t | Show or hide the tasks panel |
    | r | Raw JSON of the frame under the cursor |
    | escape | Back to the parent agent (or close the search) |
    | s | Standard error of the command (cctv run) |
    | x | Stop the command (cctv run) |
    | tab | Move between the transcript and the tasks panel (shows the panel) |
    """

    CSS_PATH = Path(__file__).parent / "session.tcss"

    BINDINGS = [
        Binding("slash", "search", "Search", key_display="/", id="search"),
        Binding("t", "toggle_tasks", "Tasks", id="tasks"),
        Binding("r", "raw", "Raw", id="raw"),
        Binding("dollar_sign", "spend", "Cost & agents", show=False, key_display="$", id="spend"),
        Binding("escape", "back", "Back", id="back"),
        Binding("s", "stderr", "Stderr", show=False, id="stderr"),
        Binding("x", "stop_command", "Stop cmd", show=False, id="stop"),
        Binding("tab", "focus_tasks", "Tasks ⇄ transcript", show=False, id="focus_tasks"),
    ]

    show_tasks: var[bool] = var(False, toggle_class="-show-tasks")

    STAYS_CURRENT: ClassVar[bool] = False
    """The app redraws this screen's panels under another screen too."""

    class Dirty(Message):
        """The panels need a redraw (follow state or cursor changed)."""

    def __init__(self, shown: ShownSession, agent_id: str = MAIN, *, line: int | None = None) -> None:
        super().__init__()
        self.shown = shown
        """The session drawn (the live one, or a replay at its frame)."""
        self.agent_id = agent_id
        self._start_line = line
        self.elsewhere: str | None = None
        """What another live session asks of you, set by the app (``cctv tail``:
        "◆ Fix the tests: needs you · J to switch")."""
        self._view: TranscriptView | None = None

    @property
    def session(self) -> Session:
        return self.shown.session

    def compose(self) -> ComposeResult:
        if self.agent_id != MAIN:
            yield Static(content(self._crumbs()), id="crumbs")
        with Horizontal(id="body"):
            yield Static("", id="placeholder")
            yield TranscriptView(self.session, self.agent_id, id="transcript")
            yield TasksPanel(id="tasks")
        yield Input(placeholder="search this transcript (enter: find, escape: close)", id="search")
        yield StatusBar(id="status")
        yield KeyFooter(compact=True)

    def on_mount(self) -> None:
        self._view = self.query_one(TranscriptView)
        self._view.time_of = self.shown.item_time
        self._view.focus()
        self.refresh_panels()
        if self._start_line is not None:
            self.go_to_line(self._start_line)
        if not pricing.loaded():  # estimates wait for the price table: read behind the screen
            self.run_worker(self._load_prices, thread=True, exit_on_error=False, group="prices")

    def _load_prices(self) -> None:
        pricing.load()
        self.app.call_from_thread(self.refresh_panels)

    # --- fed by the app -------------------------------------------------------------------

    def apply_changes(self, changes: list[Change]) -> None:
        if self._view is not None:  # before mount, the view reads the items it finds
            self._view.apply_changes(changes)
            self.query_one(TasksPanel).note_changes(self.session, changes)

    def rebind(self, session: Session, changes: list[Change] | None = None) -> None:
        """Show ``session`` as of another moment (a replay seek): the transcript
        compares itself with it again; the tasks panel takes ``changes``, the
        records that led there from the state shown (``None``: another state,
        every row is read again)."""
        for view in self.query(TranscriptView):  # (composed, maybe not mounted yet)
            view.rebind(session)
        if changes is not None:
            for panel in self.query(TasksPanel):
                panel.note_changes(session, changes)

    def show(self, shown: ShownSession) -> None:
        """Draw ``shown`` instead (the source started over, or another file is followed)."""
        self.shown = shown
        if self._view is not None:
            self._view.reset(shown.session)
            self._view.time_of = shown.item_time
            self.refresh_panels()

    def refresh_panels(self) -> None:
        """Redraw the status bar (and the tasks panel when shown) from the state."""
        if self._view is None:
            return
        try:  # a timer can fire while the app tears the screen down
            status = self.query_one(StatusBar)
            tasks = self.query_one(TasksPanel)
        except NoMatches:
            return
        shown = self.shown
        now = shown.now()
        ticks = time.monotonic()
        settled = shown.source_state.settled(ticks)
        status.update_state(
            self.session,
            source=shown.label,
            following=self._view.following,
            # a settled file reads what its session ended in, not that the read ended
            ended=None if settled else shown.ended,
            now=now,
            loading=shown.loading,
            filtered=self._view.filter.describe(),
            source_state=self._verdict() or shown.source_state.status(ticks),
            settled=settled,
            elsewhere=self.elsewhere,
        )
        if self.show_tasks:
            tasks.update_state(self.session, now=now)
        self._show_placeholder(shown.source_state.middle(ticks))

    def _verdict(self) -> tuple[str, str, None] | None:
        """One verdict for an input with no frame in it (a binary, an HTML page),
        the same words as ``cctv check`` and ``cctv summary``."""
        if self.agent_id != MAIN:
            return None
        verdict = session_verdict(self.session)
        return (verdict, "error", None) if verdict else None

    def _show_placeholder(self, text: str | None) -> None:
        """Say in the middle of an empty main view what the source is doing."""
        if self.agent_id != MAIN:
            return
        body = self.query_one("#body")
        empty = text is not None and all(  # stops at the first item of the input
            isinstance(item, NoticeItem) and item.line_no == 0 for item in self.session.main.items)
        if empty:
            self.query_one("#placeholder", Static).update(content(text, oneline=False))  # paths: shown, not obeyed
        if empty != body.has_class("-empty"):
            body.set_class(empty, "-empty")
            if not empty and self._view is not None:
                self._view.focus()

    def _crumbs(self) -> str:
        names: list[str] = []
        agent = self.session.agents.get(self.agent_id)
        while agent is not None and agent.id != MAIN:
            label = agent.description or agent.subagent_type or agent.id
            kind = f"{agent.subagent_type}: " if agent.subagent_type else ""
            names.append(f"{kind}{label}")
            agent = self.session.agents.get(agent.parent or MAIN)
        return "main › " + " › ".join(reversed(names)) + "   (escape: back)"

    # --- actions ------------------------------------------------------------------------

    def action_toggle_tasks(self) -> None:
        self.show_tasks = not self.show_tasks
        if not self.show_tasks:
            self.query_one(TranscriptView).focus()
        self.refresh_panels()

    def action_focus_tasks(self) -> None:
        """Show the tasks panel and focus its list; from the list, back to the transcript."""
        tasks = self.query_one(TasksPanel)
        if tasks.has_focus_within:
            self.query_one(TranscriptView).focus()
            return
        if not self.show_tasks:
            self.show_tasks = True
            self.refresh_panels()
        tasks.focus()

    def action_search(self) -> None:
        search = self.query_one("#search", Input)
        search.add_class("-open")
        search.focus()

    def action_back(self) -> None:
        search = self.query_one("#search", Input)
        if search.has_class("-open"):
            search.remove_class("-open")
            self.query_one(TranscriptView).focus()
            return
        if self.agent_id != MAIN:
            self.dismiss()
        else:
            self.post_message(CloseSession())

    def go_to_line(self, line_no: int) -> None:
        """Put the cursor on the item made from line ``line_no`` of the source
        (or the first one after it)."""
        view = self.query_one(TranscriptView)
        for index, item in enumerate(view.items):
            if item.line_no >= line_no and not item.hidden:
                view.move_cursor(index)
                return

    def select_agent_card(self, agent_id: str) -> None:
        """Put the cursor on the card of the call that started sub-agent
        ``agent_id`` (or the sub-agent of this transcript it descends from):
        where escape from that sub-agent's screen comes back to."""
        from cctv.reducer.queries import launching_card

        index = launching_card(self.session.agents, agent_id, self.agent_id)
        if index is not None:
            self.query_one(TranscriptView).move_cursor(index)

    def action_spend(self) -> None:
        """The session's cost, context per turn and agent tree."""
        from .spend import SpendScreen

        self.app.push_screen(SpendScreen(self.session))

    def action_raw(self) -> None:
        from ..rawstore import RawUnavailable
        from .raw import RawScreen

        item = self.query_one(TranscriptView).cursor_item
        if item is None:
            self.notify("nothing selected", severity="warning")
            return
        if item.line_no <= 0:
            self.notify("this notice comes from cctv (about the input), not from a line of it")
            return
        shown = self.shown
        entry = shown.feed.entry_at(item.line_no, item.source or None)
        if entry is None:
            self.notify(f"line {item.line_no} is no longer in memory", severity="warning")
            return
        own_file = item.agent if item.agent in shown.feed.agent_entries else None
        try:
            entry = shown.raw_store.with_raw(entry, own_file)
        except RawUnavailable as exc:
            self.notify(str(exc), title="Raw line", severity="warning")
            return
        self.app.push_screen(RawScreen(entry, shown.label,
                                       stepper=shown.frame_stepper(item, entry),
                                       fill=lambda e: shown.raw_store.with_raw(e, own_file)))

    def action_stderr(self) -> None:
        from .stderr import StderrScreen

        self.app.push_screen(StderrScreen(self.shown.stderr))

    async def action_stop_command(self) -> None:
        if await self.shown.stop_command():
            self.notify("stopping the command…")
        else:
            self.notify("no running command to stop", severity="warning")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("stderr", "stop_command"):  # only for `cctv run`
            return self.shown.runs_command
        if action == "focus_tasks" and isinstance(self.focused, Input):
            return False  # tab in the search box is the box's own
        return True

    # --- messages ---------------------------------------------------------------------------

    @on(Input.Submitted, "#search")
    def _search(self, event: Input.Submitted) -> None:
        view = self.query_one(TranscriptView)
        count = view.search(event.value)
        event.input.remove_class("-open")
        view.focus()
        if event.value:
            self.notify(f"{plural(count, 'match', 'matches')} for {event.value!r}"
                        + (" — n / N to step" if count else ""),
                        severity="information" if count else "warning")

    @on(TranscriptView.OpenAgent)
    @on(TasksPanel.OpenAgent)
    def _open_agent(self, event: TranscriptView.OpenAgent | TasksPanel.OpenAgent) -> None:
        self.post_message(OpenAgent(event.agent_id))

    @on(TasksPanel.OpenOutput)
    def _open_output(self, event: TasksPanel.OpenOutput) -> None:
        from .output import OutputScreen

        row = event.row
        if not row.output_file:
            self.notify(f"{row.kind_label} {row.description or row.key}: no output file",
                        severity="warning")
            return
        self.app.push_screen(OutputScreen(row.output_file,
                                          f"{row.kind_label} · {row.description or row.key}"))

    @on(TranscriptView.OpenText)
    def _open_text(self, event: TranscriptView.OpenText) -> None:
        from cctv.reducer.queries import full_text
        from cctv.viewer.external import editor_command, open_text, pager_command, write_cache_file
        from cctv.viewer.storage import DiskError

        item = event.item
        title = "Editor" if event.editor else "Pager"
        try:
            path = write_cache_file(full_text(item), f"line{item.line_no}-{item.kind}")
        except DiskError as exc:
            self.notify(str(exc.note), title=title, severity="error")
            return
        self.post_message(DiskNotes())  # a temporary folder used instead: said once
        error = open_text(self.app, path, editor_command() if event.editor else pager_command())
        if error:
            self.notify(error, title=title, severity="error")

    @on(TranscriptView.ViewImages)
    def _view_images(self, event: TranscriptView.ViewImages) -> None:
        from cctv.reducer.images import NotAnImage, image_file
        from cctv.reducer.queries import item_images
        from cctv.viewer.external import IMAGES, open_image, write_cache_file
        from cctv.viewer.storage import DiskError

        images = item_images(event.item)
        if not images:
            self.notify("no image in this item", title="Images", severity="warning")
            return
        for n, info in enumerate(images, 1):
            try:
                data, kind = image_file(info)  # only real images reach the desktop's viewer
            except NotAnImage as exc:
                self.notify(f"image {n} of line {event.item.line_no} not opened: {exc}",
                            title="Images", severity="warning")
                continue
            try:
                path = write_cache_file(data, f"line{event.item.line_no}-image{n}.{kind}", IMAGES)
            except DiskError as exc:
                self.notify(str(exc.note), title="Images", severity="error")
                return
            self.post_message(DiskNotes())  # a temporary folder used instead: said once
            self.notify(open_image(path), title="Images")

    @on(TranscriptView.FollowChanged)
    @on(TranscriptView.CursorMoved)
    @on(TranscriptView.FilterChanged)
    def _dirty(self) -> None:
        self.post_message(self.Dirty())
