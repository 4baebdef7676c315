"""The session browser: every saved session of a projects folder, from the index.

The list shows at once from the index; a worker thread brings the index up to
date (with a progress bar during a first indexing) and the list follows. ``/``
narrows the list to the titles and projects that match every word typed and,
debounced, lists full-text hits from the index below it. ``enter`` opens a session (or a hit, at
its line) in the viewer; ``escape`` there comes back here, selection and search
kept.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import os
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import DataTable, Input, OptionList, ProgressBar, Static
from textual.widgets.option_list import Option
from textual.worker import Worker, WorkerState

from cctv.reducer.context import spark
from cctv.reducer.format import WORDS, clip, compact_count, format_cost, format_duration, human_bytes, plural, title_text
from cctv.widgets.key_footer import KeyFooter
from cctv.widgets.safe_text import content, visible
from cctv.widgets.status_glyphs import STATUSES

from ..index import LIVE_WINDOW_S, MARKS, Hit, IndexClosed, SessionIndex, SessionRow
from ..index.scan import is_id_start
from ..live_board import LiveBoard, Transition, watch_sessions
from ..messages import DiskNotes, OpenSession
from .browse_columns import (BY_KEY, COLUMNS, STATE_WIDTH, Fitted, cost_cell, fit, short_project, state_cell,
                             when)
from .browse_query import Query, next_role, parse_query, with_role

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderResult

__all__ = ["BrowseScreen"]

SEARCH_DEBOUNCE_S = 0.2
HITS_SHOWN = 500
"""Full-text hits listed at most (the box's title says how many there are)."""
PREVIEW_SHARE, PREVIEW_MIN, PREVIEW_MAX = 0.38, 28, 72
"""The preview's width (as browse.tcss gives it): a share of the screen, between two bounds."""
FEW_TITLES = 8
"""A search narrowing the titles to this many or fewer: the hits get the rest of the height."""
FILL_FIRST = 50
"""Rows put in the table at once (at least; a screenful on a taller terminal);
the rest follow a chunk per frame, so the first screen shows at once."""
FILL_CHUNK = 2000
"""Rows added per frame after the first screen. Each chunk makes the table draw
its screen anew (its drawing caches last until the next change), which costs
as much as adding a few thousand rows: few big chunks, not many small ones."""
REFRESH_EVERY_S = 5.0
"""How often the folder is scanned when its file events cannot be watched."""
STATE_STEP = 4
"""The state column's width grows and shrinks by this many cells."""
SORT_KEY = "last"
"""The list's first order: the latest activity first."""
AGES_EVERY_S = 15.0
"""How often the ages of live rows (``needs you · 2m``) are redrawn while some are live."""


def _context_lines(row: SessionRow, width: int) -> list[str | tuple[str, str]]:
    """The preview's context per turn: a line of bars, ▲ under the turns that
    followed a compaction, the peak and its share of the window."""
    if not row.context:
        return []
    line, under = spark(row.context, row.compacted, width)
    peak = max(row.context)
    window = row.context_window
    about = f"context per turn · peak {compact_count(peak)}" + (
        f" of {compact_count(window)} ({peak / window:.0%})" if window else "")
    compactions = sum(row.compacted)
    if compactions:
        about += f" · ▲ {plural(compactions, 'compaction')}"
    out: list[str | tuple[str, str]] = [(about, "bold"), "\n", line, "\n"]
    if under:
        out += [(under, "yellow"), "\n"]
    return [*out, "\n"]


def _total(rows: list[SessionRow]) -> str:
    """What the listed sessions cost together (``~``: some of it estimated)."""
    known = [r for r in rows if r.cost_usd is not None]
    if not known:
        return ""
    mark = "" if all(r.cost_source == "recorded" for r in known) else "~"
    return f"{mark}{format_cost(sum(r.cost_usd or 0.0 for r in known))} in all"


def _safe(text: str) -> str:
    """``text`` on one line with control characters shown visibly (``␛``), never
    sent to the terminal (:func:`widgets.safe_text.visible`)."""
    return visible(text, oneline=True)


def _safe_parts(parts: list[str | tuple[str, str]]) -> list[str | tuple[str, str]]:
    """Content parts with every string made visible text (newlines kept)."""
    return [(visible(p[0]), p[1]) if isinstance(p, tuple) else visible(p) for p in parts]


_PROJECT = COLUMNS.index(BY_KEY["project"])


class Cell:
    """A table cell: one line of text as it is (no markup), control characters
    replaced, cut with an ellipsis to the column's width.

    One segment to draw: the table draws every cell of each row on the screen
    (some 600 a frame, the ones scrolled off to the right too), and a Rich
    ``Text`` cell costs it twice as much. No ``__rich_measure__``: every column
    has its width (:class:`Column`), and the table would measure each cell of
    every row it is given (a console's options made anew per cell) for nothing."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = _safe(text)

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"Cell({self.text!r})"

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        text, room = self.text, options.max_width
        if cell_len(text) > room:
            text = set_cell_size(text, room - 1) + "…" if room > 0 else ""
        yield Segment(text)


_SPREAD = 2
"""A query word may match letters spread over at most this many times its length
(``rfctr`` in ``refactoring``), not letters scattered over a whole title."""


def word_score(word: str, text: str) -> float:
    """How well one casefolded query word matches casefolded ``text``, 0 for not
    at all: as a substring (best at the start of a word), else as letters in
    order within a short span. Linear in the text: no search over every way the
    letters could be picked (Textual's matcher does that, and a two-word query
    over a long title took seconds)."""
    at = text.find(word)
    if at >= 0:
        return 4.0 if at == 0 or not text[at - 1].isalnum() else 3.0
    limit = _SPREAD * len(word)
    best = 0
    start = text.find(word[0])
    while start >= 0 and best < len(word):
        pos, last = start + 1, start
        for ch in word[1:]:
            last = text.find(ch, pos, start + limit)
            if last < 0:
                break
            pos = last + 1
        else:
            span = last - start + 1
            best = max(best, len(word) * len(word) // span)  # len(word) when contiguous
        start = text.find(word[0], start + 1)
    return 1.0 + best / (len(word) * 2) if best else 0.0


@functools.lru_cache(maxsize=16_384)
def _folded(text: str) -> str:
    """The first 200 characters of ``text``, casefolded (once per title, not per keystroke)."""
    return text[:200].casefold()


def narrow(rows: list[SessionRow], query: str) -> list[SessionRow]:
    """The rows whose title or project match every word of ``query``, best first
    (all of them, unchanged, for an empty query); see :func:`word_score`. A
    query that can start a session id lists first the sessions whose id starts
    with it (an id shared by sessions of several project folders: each of them)."""
    words = query.casefold().split()
    if not words:
        return rows
    by_id = _by_id_start(rows, query)
    scored = []
    for row in rows:
        title, project = _folded(title_text(row.title)), _folded(row.project)
        total = 0.0
        for word in words:
            score = max(word_score(word, title), word_score(word, project))
            if not score:
                break
            total += score
        else:
            scored.append((total, row))
    scored.sort(key=lambda pair: pair[0], reverse=True)
    if not by_id:
        return [row for _, row in scored]
    first = {r.path for r in by_id}
    return by_id + [row for _, row in scored if row.path not in first]


def _by_id_start(rows: list[SessionRow], query: str) -> list[SessionRow]:
    """The rows whose session id (or file name) starts with ``query``, when it
    can start one (as ``cctv SESSION-ID`` reads it: :func:`~viewer.index.scan.is_id_start`)."""
    start = query.strip().lower()
    if not is_id_start(start):
        return []
    return [r for r in rows if r.session_id.lower().startswith(start)
            or Path(r.path).name.lower().startswith(start)]


def _same_id_note(rows: list[SessionRow]) -> str:
    """What the list says of the sessions an id names, when it names several:
    their files, one a line (an id in two project folders has nothing more to give)."""
    if len(rows) < 2:
        return ""
    ids = {r.session_id for r in rows}
    named = f"the id {rows[0].session_id}" if len(ids) == 1 else "ids starting so"
    return "\n".join([f"{len(rows)} sessions have {named}; their project folders, in the list's order:",
                      *(f"· {Path(r.path).parent.name}" for r in rows)])


def hit_content(hit: Hit, width: int = 200) -> Content:
    """A hit as one line: session title, the matching text with its words marked, the time."""
    on, off = MARKS
    parts: list[str | tuple[str, str]] = [(clip(title_text(hit.title), 40, one_line=True), "bold"), "  "]
    text = hit.snippet[:width]
    while text:
        start = text.find(on)
        if start < 0:
            parts.append(text.replace(off, ""))
            break
        parts.append(text[:start].replace(off, ""))
        end = text.find(off, start)
        end = len(text) if end < 0 else end
        parts.append((text[start + 1:end], "bold reverse"))
        text = text[end + 1:]
    parts.append((f"  [{hit.role}] {when(hit.timestamp)}", "dim"))
    return Content.assemble(*_safe_parts(parts))


class BrowseScreen(Screen[None]):
    """Every saved session of a projects folder.

    | Key(s) | Description |
    | :- | :- |
    | / | Search: titles and projects at once, full text below (``role:ROLE``: one role's texts) |
    | ctrl+r | Limit the full-text hits to the next role (user, assistant, … compaction, then every role) |
    | enter | Open the session (or the hit, at its message) |
    | escape | Clear the search |
    | s / S | Sort by the next column (a hidden one comes into view) / reverse the order |
    | g | Group by project, or not |
    | p | Show or hide the preview |
    | l | Only the live sessions, the ones that need you first, or every session |
    """

    APP_KEYS_IDLE = frozenset({"switch_newest", "switch_calling"})
    """The app's keys that mean nothing here (``L``, ``J``: a followed session's), left out of help."""
    CSS_PATH = "browse.tcss"

    PALETTE: tuple[tuple[str, str, str], ...] = (
        ("Search sessions", "/ — titles and projects at once, full-text hits below",
         "screen.search"),
        ("Clear the search", "escape — show every session again", "screen.clear_search"),
        ("Search one role's texts", "ctrl+r — the hits of the next role only (role:tool_result in the"
         " search box), then of every role", "screen.cycle_role"),
        ("Sort by the next column", "s — title, last activity, cost, model, prompts, … (a hidden"
         " column sorted by comes into view)",
         "screen.sort_next"),
        ("Reverse the sort", "S — the same column, the other way", "screen.sort_reverse"),
        ("Group by project", "g — one heading per project, or one list", "screen.toggle_group"),
        ("Toggle the preview", "p — show or hide the selected session's preview",
         "screen.toggle_preview"),
        ("Only live sessions", "l — the sessions written to lately, the ones that need you first",
         "screen.toggle_live"),
        ("Bell when a session needs you: on or off", "the terminal bell beside the notification "
         "(CCTV_NO_BELL=1 turns it off from the start)", "screen.toggle_bell"),
    )
    """The command palette's commands on this screen (instead of a session's)."""

    HELP_ROWS: tuple[tuple[str, str], ...] = (
        ("role:ROLE", "in the search: one role's hits (user, assistant, thinking, tool_use,"
                      " tool_result, hook, notice, compaction)"),
        ("ID", "in the search: a session id (6+ characters) lists its sessions"),
    )
    """What the search box reads besides words (the help screen lists it)."""

    BINDINGS = [
        Binding("slash", "search", "Search", key_display="/", id="browse.search", priority=True),
        Binding("escape", "clear_search", "Clear", id="browse.clear", show=False),
        Binding("ctrl+r", "cycle_role", "Role", id="browse.role",
                tooltip="Limit the full-text hits to one role (role:ROLE in the search box)"),
        Binding("s", "sort_next", "Sort", id="browse.sort"),
        Binding("S", "sort_reverse", "Reverse", id="browse.reverse", show=False),
        Binding("g", "toggle_group", "Group", id="browse.group"),
        Binding("p", "toggle_preview", "Preview", id="browse.preview"),
        Binding("l", "toggle_live", "Live", id="browse.live", show=False),
        Binding("tab", "focus_next_list", "Hits", show=False, priority=False),
    ]

    def __init__(self, root: Path, *, use_index: bool = True, workers: int | None = None,
                 examples: list[Path] | None = None, search: str = "") -> None:
        super().__init__()
        self.root = root
        self.first_search = search
        """What the search box holds at first (``cctv browse ID``)."""
        self.index = SessionIndex(root, use_index=use_index, workers=workers)
        self.examples = examples or []
        self.rows: list[SessionRow] = []
        self.shown: list[SessionRow] = []
        self.hits: list[Hit] = []
        self.empty_files = 0
        """Files of the folder with no rows: not sessions, only counted."""
        self.hits_for = ""
        """The search the hits shown are for."""
        self.sort_key = SORT_KEY
        self.sort_reverse = True
        self.grouped = False
        self.search_text = ""
        self.search_query = Query("")
        """The search as read: its words, its role (:mod:`.browse_query`)."""
        self.refreshed = False
        """At least one refresh finished (the list is up to date with the folder)."""
        self.showing_examples = False
        self._search_timer: Timer | None = None
        self._by_path: dict[str, SessionRow] = {}
        """The rows shown, by path."""
        self._live: dict[str, str] = {}
        """What each shown row's state cell says (``" "``: not live)."""
        self.board = LiveBoard()
        """The live sessions and their states, kept from file events."""
        self.live_only = False
        """Only the live sessions are listed (``l``), the ones that need you first."""
        self.bell = not os.environ.get("CCTV_NO_BELL")
        """Ring the terminal bell when a session starts needing you."""
        self._pending: set[Path] = set()
        """Session files named by file events, to read at the next refresh."""
        self._refreshing = False
        self._live_timer: Timer | None = None
        self._all_by_path: dict[str, SessionRow] = {}
        self._cell_cache: dict[str, tuple[SessionRow, str, list[Any]]] = {}
        self._fill_generation = 0
        self.last_search_s: float | None = None
        self.fitted = fit(0)
        """The columns shown (the ones the list's width holds) and the ones hidden."""
        self._shown_at: list[int] = []
        """The index in :data:`COLUMNS` of each column shown."""
        self._told: set[str] = set()
        """The errors already told (each is told once)."""

    # --- layout --------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Static(self._where(), id="where")
        yield ProgressBar(id="progress", show_eta=False)
        # the first 78 cells say what an 80-column screen must: what is searched, the role
        yield Input(placeholder="/ search titles, projects, full text · role:hook (^r): one role's hits"
                    " · enter: to the results, escape: clear", id="search")
        with Horizontal(id="body"):
            with Vertical(id="lists"):
                yield Static("", id="empty")
                yield DataTable(id="sessions", cursor_type="row", zebra_stripes=True)
                yield OptionList(id="hits")
            with VerticalScroll(id="preview"):
                yield Static("", id="preview-text")
        yield KeyFooter()

    def on_mount(self) -> None:
        table = self.query_one("#sessions", DataTable)
        table.fixed_columns = 2  # the live marker and the title stay put when scrolled sideways
        self.rows = self.index.rows()
        self.empty_files = self.index.empty()
        # the list shown is the index's: bring it up to date once it is on the screen
        # (a refresh thread running beside the first paint would slow it down), and
        # before the rest of a long list fills in (so it is not kept waiting for that)
        self.call_after_refresh(self._start_refreshing)
        self._rebuild()
        self.post_message(DiskNotes())  # the index rebuilt, or kept in memory: said once
        self.query_one("#progress").display = False
        self.set_focus(table)  # at once: focused later, the whole table is drawn again
        if self.first_search:
            self.query_one("#search", Input).value = self.first_search

    def _start_refreshing(self) -> None:
        if self.app.return_code is not None:
            return  # quitting already: a refresh thread would hold the exit up
        self.refresh_index()

    def on_unmount(self) -> None:
        self.index.close()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """An index or search failure is told, never taken for the viewer's reader failing."""
        event.stop()
        if event.state == WorkerState.ERROR:
            error = event.worker.error
            message = f"index: {type(error).__name__}: {error}"
            if message not in self._told:  # a refresh every few seconds: said once
                self._told.add(message)
                self.notify(message, severity="error", timeout=10)

    def on_screen_resume(self) -> None:
        if self.is_mounted and self.refreshed:
            self.refresh_index()

    def _show_where(self) -> None:
        """The header: the sessions, the live ones, what those shown cost, the order."""
        self.query_one("#where", Static).update(self._where(*self._list_notes()))

    def _where(self, *notes: str) -> Content:
        """The header: how many sessions, where, how many live (``4 live · 1
        needs you``), ``notes`` (the total cost and
        the order, or indexing), the columns hidden (as many named as the width
        holds), the empty files skipped. When even the count of hidden columns
        does not fit, the last notes give way (the order: its column's header
        shows it too)."""
        count = len(self.rows) if hasattr(self, "rows") else 0
        live = self.board.counts() if hasattr(self, "board") else ""
        base = f"{plural(count, 'session')} under {short_project(str(self.root))}" + (f" · {live}" if live else "")
        notes = tuple(n for n in notes if n)
        skipped = f" · {plural(self.empty_files, 'empty file')} skipped" if self.empty_files else ""
        hidden = self.fitted.hidden if "indexing…" not in notes else ()
        if not hidden:
            return content(" · ".join((base, *notes)) + skipped)
        room = (self.size.width or self.app.size.width) - 2
        hint = " (widen)" if self.has_class("-no-preview") else " (p: hide the preview)"
        count = f"{len(hidden)} hidden"
        named = [", ".join(c.label.lower() for c in hidden[:n]) + (f" +{len(hidden) - n}"
                                                                  if len(hidden) > n else "")
                 for n in (3, 2, 1)]
        choices = [*(f"hidden: {n}{hint}{skipped}" for n in named), f"{count}{hint}{skipped}",
                   f"{count}{hint}", count]
        for kept in range(len(notes), -1, -1):
            head = " · ".join((base, *notes[:kept]))
            line = next((f"{head} · {c}" for c in choices if len(head) + 3 + len(c) <= room), None)
            if line is not None:
                return content(line)
        return content(f"{base} · {count}")

    # --- the index -----------------------------------------------------------------

    @work(exclusive=True, group="watch", exit_on_error=False)
    async def watch_folder(self) -> None:
        """Read the session files that file events name, as they are written;
        nothing runs between events. Where events cannot be watched, the
        folder is scanned every few seconds instead. A folder that is not
        there yet (no session ever saved) is waited for, quietly."""
        if not self.root.is_dir():
            while not self.root.is_dir():
                await asyncio.sleep(REFRESH_EVERY_S)
            self.refresh_index()  # its first sessions
        try:
            async for paths in watch_sessions(self.root):
                self._pending |= paths
                if not self._refreshing:
                    self.refresh_index(self._take_pending())
        except Exception as exc:  # noqa: BLE001 - no inotify, too many watches, …
            self.notify(f"cannot watch {self.root} ({type(exc).__name__}: {exc}): "
                        f"looking every {REFRESH_EVERY_S:.0f} s", severity="warning", timeout=10)
            self.set_interval(REFRESH_EVERY_S, self.refresh_index)

    def _take_pending(self) -> set[Path]:
        paths, self._pending = self._pending, set()
        return paths

    def refresh_index(self, only: set[Path] | None = None) -> None:
        """Bring the index up to date (``only``: these session files) in a thread."""
        self._refreshing = True
        self._refresh_in_thread(only)

    @work(thread=True, exclusive=True, group="index", exit_on_error=False)
    def _refresh_in_thread(self, only: set[Path] | None) -> None:
        """Bring the index up to date in a thread; the list follows when it is."""
        last = [0.0]

        def progress(done: int, total: int) -> None:
            now = time.monotonic()
            if total and (now - last[0] > 0.1 or done >= total):
                last[0] = now
                self.app.call_from_thread(self._progress, done, total)

        try:
            report = self.index.refresh(progress, only)
            if only is not None:  # the rows read are all that changed
                self.app.call_from_thread(self._refreshed_some, report.rows, report.gone,
                                          report.skipped + report.errors)
                return
            rows = self.index.rows()
            self.empty_files = self.index.empty()
        except IndexClosed:
            return  # the screen went away (the app quit) mid-refresh: nothing to show
        self.app.call_from_thread(self._refreshed, rows, report.read + report.removed,
                                  report.skipped + report.errors)

    def _progress(self, done: int, total: int) -> None:
        bar = self.query_one("#progress", ProgressBar)
        if done < total and total > (1 << 20):
            bar.display = True
            bar.update(total=total, progress=done)
            self.query_one("#where", Static).update(self._where("indexing…"))
        else:
            bar.display = False

    def _refreshed_some(self, rows: list[SessionRow], gone: list[str], passed: list[str]) -> None:
        """The sessions that file events named were read: ``rows`` changed,
        ``gone`` went. Their cells are redrawn in place when the list keeps its
        order; else the list is made again."""
        self._refresh_done(passed)
        changed = {r.path: r for r in rows}
        dropped = set(gone)
        merged = [changed.pop(r.path, r) for r in self.rows if r.path not in dropped]
        self.rows = merged + list(changed.values())
        self._all_by_path = {}
        for path in gone:
            self.board.forget(path)
        moves = self.board.update(rows, time.time())
        shown = [r.path for r in self.shown]
        if self.showing_examples or [r.path for r in self._ordered()] != shown:
            self._rebuild()
        else:
            self._redraw_rows(rows)
        self._live_moved(moves)
        if self.search_text:
            self._schedule_search()

    def _redraw_rows(self, rows: list[SessionRow]) -> None:
        """Draw these rows' cells again where they are (and the preview, if it is one of them)."""
        table = self.query_one("#sessions", DataTable)
        now = time.time()
        selected = self.selected_row
        at = {r.path: i for i, r in enumerate(self.shown)}
        for row in rows:
            if row.path not in table.rows or row.path not in at:
                continue
            self.shown[at[row.path]] = row
            self._by_path[row.path] = row
            self._live[row.path] = state_cell(row, now)
            for (column, _), cell in zip(self.fitted.shown, self._cells_of(row, now)):
                table.update_cell(row.path, column.key, cell)
        self._refit()  # the state column as wide as its words now
        if selected is not None and any(r.path == selected.path for r in rows):
            self._show_preview(self._by_path.get(selected.path))

    def _refresh_done(self, passed: list[str]) -> None:
        """A refresh ended: the next one if files were named meanwhile; what it passed over."""
        self._refreshing = False
        if self._pending:  # written to while this refresh ran
            self.refresh_index(self._take_pending())
        self.post_message(DiskNotes())
        self._tell_passed(passed)

    def _refreshed(self, rows: list[SessionRow], changed: int, passed: list[str]) -> None:
        self._refresh_done(passed)
        self.query_one("#progress").display = False
        first = not self.refreshed
        self.refreshed = True
        if first:  # from here on, what is written is read as it is written
            self.watch_folder()
        moves = self.board.update(rows, time.time(), complete=True)
        # the first refresh of an empty folder brings the examples
        if changed or (first and not rows) or rows != self.rows:
            self.rows = rows
            self._all_by_path = {}
            self._rebuild()
        elif rows:
            self._relabel_live()
        self._live_moved([] if first else moves)
        if self.search_text:
            self._schedule_search()

    # --- live sessions ---------------------------------------------------------------

    def _live_moved(self, moves: list[Transition]) -> None:
        """Sessions changed state: a notification (and the bell) for each that
        started needing you; the counts; the next time to look again."""
        for move in moves:
            row = self.board.rows.get(move.path)
            if move.calls_you and row is not None:
                self.notify(f"{clip(title_text(row.title), 60, one_line=True)}: "
                            f"{move.after.describe(time.time())}",
                            title=move.after.words, severity="warning", timeout=10)
                if self.bell:
                    self.app.bell()
        if self.live_only and moves:
            self._rebuild()
        self._show_where()
        if self._live_timer is not None:
            self._live_timer.stop()
        now = time.time()
        due = self.board.due(now)
        if self.board.states:  # their ages move on
            due = min(due or now + AGES_EVERY_S, now + AGES_EVERY_S)
        self._live_timer = None if due is None else \
            self.set_timer(max(due - now, 0.05), self._live_tick)

    def _live_tick(self) -> None:
        """Time passed with nothing written: states that change by themselves, and ages."""
        moves = self.board.retime(time.time())
        self._relabel_live()
        self._live_moved(moves)

    def action_toggle_live(self) -> None:
        """``l``: only the live sessions, the one that waited on you longest
        selected; or every session again."""
        self.live_only = not self.live_only
        self._rebuild(keep_selection=not self.live_only)

    def action_toggle_bell(self) -> None:
        self.bell = not self.bell
        self.notify(f"bell when a session needs you: {'on' if self.bell else 'off'}", timeout=4)

    def _tell_passed(self, passed: list[str]) -> None:
        """Say once what the index passed over (a folder it cannot read, a FIFO
        named ``*.jsonl``, a file that failed to read): one notification for
        what is new."""
        new = [line for line in passed if line not in self._told]
        if not new:
            return
        self._told.update(new)
        more = f"\n… and {len(new) - 5} more" if len(new) > 5 else ""
        self.notify("\n".join(new[:5]) + more, title="Not listed", severity="warning",
                    timeout=12)

    # --- the list ------------------------------------------------------------------

    def _ordered(self) -> list[SessionRow]:
        rows = narrow(self.rows, self.search_query.words)
        if self.live_only:
            states = self.board.states
            return sorted((r for r in rows if r.path in states), key=lambda r: states[r.path].rank)
        if not self.search_query.words:
            column = BY_KEY[self.sort_key]
            rows = sorted(rows, key=column.sort, reverse=self.sort_reverse)
        if self.grouped:
            order: dict[str, int] = {}
            for row in rows:
                order.setdefault(row.project, len(order))
            rows = sorted(rows, key=lambda r: order[r.project])  # stable: keeps the order inside
        return rows

    def _rebuild(self, keep_selection: bool = True) -> None:
        """Fill the table from the rows, keeping the selected session selected
        (or, after the search changed, selecting the best match)."""
        table = self.query_one("#sessions", DataTable)
        selected = self.selected_row
        now = time.time()
        rows = self._ordered()
        self.showing_examples = not self.rows and self.refreshed and not self.search_text
        if self.showing_examples:
            rows = self._example_rows()
        self.shown = rows
        self._live = {r.path: state_cell(r, now) for r in rows}
        self._fit_columns(table)
        self._say_empty()
        self._by_path = {r.path: r for r in rows}
        table.clear()
        self._fill_generation += 1
        entries = _Peekable(self._entries(rows, now))
        first = max(FILL_FIRST, self.app.size.height)
        if keep_selection and selected is not None and selected.path in self._by_path:
            first = max(first, rows.index(selected) + FILL_FIRST)
        if self._fill(table, entries, first):
            self.call_after_refresh(self._fill_more, table, entries, self._fill_generation)
        for column, _ in self.fitted.shown:
            label = column.label
            if column.key == self.sort_key and not self.search_query.words:
                label += " ▼" if self.sort_reverse else " ▲"
            table.columns[column.key].label = Text(label)
        table.refresh()
        self._show_where()
        if keep_selection and selected is not None and selected.path in self._by_path:
            table.move_cursor(row=table.get_row_index(selected.path))
        elif rows:
            first = 1 if self.grouped else 0
            table.move_cursor(row=first)
        self._show_preview(self.selected_row)
        if self.focused is None and rows:  # hidden while no title matched (or none was read yet)
            table.focus()

    def _list_width(self) -> int:
        """The cells the list has across: its own width once laid out, before
        that the screen's less the preview's (as the stylesheet sizes it)."""
        laid_out = self.query_one("#lists").size.width
        if laid_out:
            return laid_out
        width = self.app.size.width
        if self.has_class("-no-preview"):
            return width
        return width - min(max(round(width * PREVIEW_SHARE), PREVIEW_MIN), PREVIEW_MAX)

    def _fitting(self) -> Fitted:
        """The columns the list's width holds. The state column is one cell while
        no row is live, else its longest text rounded up to a multiple of
        :data:`STATE_STEP` (so ages ticking on do not remake the list)."""
        longest = max((cell_len(text) for text in self._live.values()), default=1)
        state_width = 1 if longest <= 1 else min(-(-longest // STATE_STEP) * STATE_STEP, STATE_WIDTH)
        return fit(self._list_width(), self._kept_sort(state_width), state_width)

    def _kept_sort(self, state_width: int) -> str | None:
        """The column :func:`fit` keeps in view: the one sorted by, unless a
        search orders the list, or the order is the first one (latest first)
        while rows say their live state (their words come first)."""
        if self.search_query.words:
            return None
        if state_width > 1 and (self.sort_key, self.sort_reverse) == (SORT_KEY, True):
            return None
        return self.sort_key

    def _fit_columns(self, table: DataTable) -> None:
        """Give the table the columns its width holds (the sorted one among them)."""
        fitted = self._fitting()
        if fitted == self.fitted and table.columns:
            return
        self.fitted = fitted
        self._shown_at = [COLUMNS.index(c) for c, _ in fitted.shown]
        table.clear(columns=True)
        for column, width in fitted.shown:
            table.add_column(column.label, key=column.key, width=width)

    def _refit(self) -> None:
        """After a resize (or the preview shown or hidden, or the live states'
        words grown or shrunk): the list again if its width holds other columns
        or other widths (see :meth:`_fitting`)."""
        if not self.is_mounted:
            return
        if self._fitting() != self.fitted:
            self._rebuild()
        elif self.refreshed:
            self._show_where()

    def on_resize(self) -> None:
        self.call_after_refresh(self._refit)

    def _say_empty(self) -> None:
        """Above the list, what an empty one means: no sessions (the examples
        below), or a search that no title or project holds (and, once the
        full-text search answered, no text either); or the files of the
        sessions a searched id names, when it names several (the list shows
        them in that order, to pick one). The hits take the room the titles leave."""
        empty = self.query_one("#empty", Static)
        query = self.search_query.words
        lists = self.query_one("#lists")
        lists.set_class(bool(query) and len(self.shown) <= FEW_TITLES, "-few")
        lists.set_class(bool(query) and not self.shown, "-no-titles")
        if self.showing_examples:
            note = f"No sessions under {short_project(str(self.root))}.  Examples bundled with cctv, to try it:"
        elif query and not self.shown:
            searched = self.hits_for == self.search_text
            role = self.search_query.role
            note = f"No matches for “{query}”" + (f" in {role} texts." if role else ".") \
                if searched and not self.hits else f"No title or project holds “{query}”."
        else:
            note = _same_id_note(_by_id_start(self.shown, query)) if query else ""
        empty.update(content(note, oneline=False))
        empty.display = bool(note)

    def _entries(self, rows: list[SessionRow], now: float) -> Iterator[tuple[str, list[Any]]]:
        """The table rows for ``rows``: (key, cells), a group header before each project."""
        counts = Counter(r.project for r in rows) if self.grouped else Counter()
        project = None
        for row in rows:
            if self.grouped and row.project != project:
                project = row.project
                header = Text(_safe(f"▾ {short_project(project)} ({counts[project]})"),
                              style="bold")
                yield f"group:{project}", ["", header, *[""] * (len(self.fitted.shown) - 2)]
            yield row.path, self._cells_of(row, now)

    def _cells_of(self, row: SessionRow, now: float) -> list[Any]:
        """A row's cells, made once per row and live state (typing only re-adds them)."""
        live = self._live.get(row.path, " ")
        cached = self._cell_cache.get(row.path)
        if cached is not None and cached[0] is row and cached[1] == live:
            made = cached[2]
        else:
            cells = [c.cell(row, now) for c in COLUMNS]
            if self.showing_examples:
                cells[0] = "◆"
                cells[1] = "example: " + cells[1]
                cells[_PROJECT] = "(bundled with cctv)"
            made = [Cell(cell) for cell in cells]
            self._cell_cache[row.path] = (row, live, made)
        return [made[i] for i in self._shown_at]

    @staticmethod
    def _fill(table: DataTable, entries: _Peekable, count: int) -> bool:
        """Add up to ``count`` entries; True if some are left."""
        for key, cells in itertools.islice(entries, count):
            table.add_row(*cells, key=key)
        return entries.more()

    def _fill_more(self, table: DataTable, entries: _Peekable, generation: int) -> None:
        """Add the rest of a long list a chunk per frame, so the first screen (and
        each keystroke's narrowing) shows at once."""
        if generation != self._fill_generation or self.app.return_code is not None:
            return  # rebuilt since, or quitting
        if self._fill(table, entries, FILL_CHUNK):
            self.call_after_refresh(self._fill_more, table, entries, generation)

    def _relabel_live(self) -> None:
        """Redraw the state cell of the rows whose state changed (time passes)."""
        if self.showing_examples:
            return
        table = self.query_one("#sessions", DataTable)
        now = time.time()
        for row in self.shown:
            live = state_cell(row, now)
            if live != self._live.get(row.path, " "):
                self._live[row.path] = live
                if row.path in table.rows:
                    table.update_cell(row.path, "live", Cell(live))
        self._refit()  # the state column as wide as its words now

    def _sort_note(self) -> str:
        if self.live_only:
            return "live sessions, the ones that need you first (l: every session)"
        if self.search_query.words:
            return f"matching {self.search_query.words!r}"
        label = BY_KEY[self.sort_key].label or "live"
        return f"sorted by {label.lower()}" + (" (grouped by project)" if self.grouped else "")

    def _list_notes(self) -> tuple[str, str]:
        """The header's notes on the list: what its sessions cost together (not
        the examples'), and its order."""
        return "" if self.showing_examples else _total(self.shown), self._sort_note()

    def _example_rows(self) -> list[SessionRow]:
        from ..index.extract import extract

        rows = []
        for path in self.examples:
            try:
                st = path.stat()
                rows.append(extract(str(path), str(path.parent), st.st_size, 0.0).row)
            except OSError:
                continue
        return rows

    @property
    def selected_row(self) -> SessionRow | None:
        """The session under the list's cursor (``None`` on a group header)."""
        table = self.query_one("#sessions", DataTable)
        if not table.row_count:
            return None
        try:
            key = table.coordinate_to_cell_key((table.cursor_row, 0)).row_key.value
        except Exception:  # noqa: BLE001 - no valid cursor row
            return None
        return self._by_path.get(key or "")

    # --- the preview ---------------------------------------------------------------

    def _show_preview(self, row: SessionRow | None) -> None:
        text = self.query_one("#preview-text", Static)
        if row is None:
            text.update("")
            return
        parts: list[str | tuple[str, str]] = [(title_text(row.title), "bold"), "\n"]
        parts.append((f"{short_project(row.project)}"
                      + (f"  ⎇ {row.git_branch}" if row.git_branch else ""), "dim"))
        parts.append("\n\n")
        totals = [plural(row.prompts, WORDS["prompts"]), plural(row.tool_calls, WORDS["tool_calls"]),
                  cost_cell(row),
                  f"{WORDS['in']} {compact_count(row.tokens_in)}"
                  f" {WORDS['out']} {compact_count(row.output_tokens)}", human_bytes(row.bytes)]
        if row.subagents:
            totals.append(plural(row.subagents, WORDS["subagents"]))
        if row.duration_s is not None:
            totals.append(format_duration(row.duration_s))
        parts += [(" · ".join(totals), "italic"), "\n\n"]
        parts += _context_lines(row, max(10, text.size.width - 2))
        if row.first_prompt:
            parts += [("First prompt", "bold underline"), "\n", clip(row.first_prompt, 600, one_line=True),
                      "\n\n"]
        if row.last_reply:
            parts += [("Last reply", "bold underline"), "\n", clip(row.last_reply, 600, one_line=True),
                      "\n\n"]
        if row.tasks:
            parts += [("Tasks", "bold underline"), "\n"]
            for task in row.tasks[:12]:
                parts.append(f"  {STATUSES[task['status']].word:<10} "
                             f"{clip(task['description'], 60, one_line=True)}\n")
        parts.append((f"\n{short_project(row.path)}", "dim"))
        text.update(Content.assemble(*_safe_parts(parts)))

    @on(DataTable.RowHighlighted, "#sessions")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_preview(self._by_path.get(event.row_key.value or ""))

    @on(OptionList.OptionHighlighted, "#hits")
    def _hit_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        index = event.option_index
        if 0 <= index < len(self.hits):
            hit = self.hits[index]
            self._show_preview(self._row_for(hit.session_path))

    def _row_for(self, path: str) -> SessionRow | None:
        """Any indexed session (shown or narrowed away) by its path."""
        if len(self._all_by_path) != len(self.rows):
            self._all_by_path = {r.path: r for r in self.rows}
        return self._all_by_path.get(path)

    # --- search --------------------------------------------------------------------

    def action_search(self) -> None:
        """Focus the search box. A priority binding, focusing at once (not deferred
        like ``focus()``), so the keys typed right after the slash, already on
        their way, land in the box and not in the list; in the box it types a slash."""
        search = self.query_one("#search", Input)
        if search.has_focus:
            search.insert_text_at_cursor("/")
        else:
            self.set_focus(search)

    def action_clear_search(self) -> None:
        search = self.query_one("#search", Input)
        if search.value:
            search.value = ""  # Changed clears the narrowing and the hits
        self.query_one("#sessions", DataTable).focus()

    @on(Input.Changed, "#search")
    def _typed(self, event: Input.Changed) -> None:
        self.search_text = event.value
        self.search_query = parse_query(event.value)
        self._rebuild(keep_selection=False)
        self._schedule_search()

    def action_cycle_role(self) -> None:
        """``ctrl+r``: the hits of the next role only (``role:…`` put in the search
        box, where it can be read and edited), after the last one every role's."""
        search = self.query_one("#search", Input)
        search.value = with_role(search.value, next_role(parse_query(search.value).role))
        search.cursor_position = len(search.value)

    def _schedule_search(self) -> None:
        if self._search_timer is not None:
            self._search_timer.stop()
        asked = self.search_query
        if not asked.words or asked.unknown_role is not None:
            self._show_hits([], self.search_text)  # nothing to search: the box says why
            return
        self._search_timer = self.set_timer(SEARCH_DEBOUNCE_S, self._search_now)

    def _search_now(self) -> None:
        self.full_text(self.search_text)

    @work(thread=True, exclusive=True, group="search", exit_on_error=False)
    def full_text(self, text: str) -> None:
        started = time.perf_counter()
        asked = parse_query(text)
        try:
            hits = self.index.search(asked.words, HITS_SHOWN, asked.role)
            total = self.index.hit_count(asked.words, asked.role) if len(hits) == HITS_SHOWN \
                else len(hits)
        except IndexClosed:
            return
        self.last_search_s = time.perf_counter() - started
        self.app.call_from_thread(self._show_hits, hits, text, total)

    def _show_hits(self, hits: list[Hit], text: str, total: int = 0) -> None:
        """List the hits of search ``text`` (if it is still the one typed). The
        box's title says how many, and the role they are limited to: with a role
        the box shows even with no hit (or no words yet), saying so."""
        self.post_message(DiskNotes())  # damage the search met, rebuilt: said once
        if text != self.search_text:
            return  # typed on since
        self.hits = hits
        self.hits_for = text
        options = self.query_one("#hits", OptionList)
        options.clear_options()
        role = self.search_query.describe_role()
        if hits:
            options.add_options([Option(hit_content(h)) for h in hits])
            found = plural(total, "text match", "text matches", grouped=True)
            title = found if total <= len(hits) else \
                f"the best {len(hits):,} of {found} (type more words to narrow)"
            options.highlighted = 0  # the first hit selected: enter opens it
        elif self.search_query.unknown_role is not None:
            title = ""  # the role's description asks which
        elif not self.search_query.words:
            title = "type words to search"
        else:
            title = "no text matches"
        options.border_title = content(" · ".join(t for t in (title, role) if t))
        options.set_class(bool(hits or role), "-shown")
        options.set_class(not hits, "-none")
        self._say_empty()

    @on(Input.Submitted, "#search")
    def _to_results(self) -> None:
        table = self.query_one("#sessions", DataTable)
        if table.row_count:
            table.focus()
        elif self.hits:
            self.query_one("#hits", OptionList).focus()

    def action_focus_next_list(self) -> None:
        table = self.query_one("#sessions", DataTable)
        hits = self.query_one("#hits", OptionList)
        if table.has_focus and self.hits:
            hits.focus()
        else:
            table.focus()

    # --- sorting and grouping ------------------------------------------------------

    def sort_by(self, key: str) -> None:
        """Sort by column ``key``; the same column again reverses the order."""
        if key == self.sort_key:
            self.sort_reverse = not self.sort_reverse
        else:
            self.sort_key = key
            self.sort_reverse = key in ("live", "started", "last", "duration", "prompts", "tools",
                                        "cost", "size", "agents")
        self._rebuild()

    def action_sort_next(self) -> None:
        keys = [c.key for c in COLUMNS]
        self.sort_by(keys[(keys.index(self.sort_key) + 1) % len(keys)])

    def action_sort_reverse(self) -> None:
        self.sort_reverse = not self.sort_reverse
        self._rebuild()

    def action_toggle_group(self) -> None:
        self.grouped = not self.grouped
        self._rebuild()

    def action_toggle_preview(self) -> None:
        self.toggle_class("-no-preview")
        self.call_after_refresh(self._refit)

    @on(DataTable.HeaderSelected, "#sessions")
    def _header(self, event: DataTable.HeaderSelected) -> None:
        self.sort_by(str(event.column_key.value))

    # --- opening -------------------------------------------------------------------

    @on(DataTable.RowSelected, "#sessions")
    def _open_row(self, event: DataTable.RowSelected) -> None:
        row = self._by_path.get(event.row_key.value or "")
        if row is not None:
            self.open(row)

    @on(OptionList.OptionSelected, "#hits")
    def _open_hit(self, event: OptionList.OptionSelected) -> None:
        if 0 <= event.option_index < len(self.hits):
            hit = self.hits[event.option_index]
            row = self._row_for(hit.session_path)
            live = row.is_live(time.time(), LIVE_WINDOW_S) if row else False
            self.post_message(OpenSession(Path(hit.session_path), line=hit.line, follow=live,
                                          agent=hit.agent))

    def open(self, row: SessionRow, line: int | None = None) -> None:
        """Open ``row`` in the viewer (a live one followed, from its end)."""
        live = not self.showing_examples and row.is_live(time.time(), LIVE_WINDOW_S)
        self.post_message(OpenSession(Path(row.path), line=line, follow=live))


class _Peekable:
    """An iterator that can tell whether it has more."""

    def __init__(self, it: Iterator[tuple[str, list[Any]]]) -> None:
        self._it = it
        self._head: list[tuple[str, list[Any]]] = []

    def __iter__(self) -> _Peekable:
        return self

    def __next__(self) -> tuple[str, list[Any]]:
        if self._head:
            return self._head.pop()
        return next(self._it)

    def more(self) -> bool:
        if not self._head:
            try:
                self._head.append(next(self._it))
            except StopIteration:
                return False
        return True
