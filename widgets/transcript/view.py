"""The transcript of one agent: :class:`TranscriptView`.

:class:`TranscriptView` draws the items of one agent (the main conversation or
a sub-agent) from the folded :class:`~reducer.fold.Session`. It reads state
and never parses frames; the app feeds it the fold's
:data:`~reducer.state.Change` records through :meth:`TranscriptView.apply_changes`,
and a replay seek another state of the session through :meth:`TranscriptView.rebind`.

Its parts: :mod:`.lines` lays the items out as rows (the Line API, measured
where drawn, the scroll position kept still) over the Textual-free
:mod:`.line_index` (heights, estimates, the shelf a seek back leaves, parked
heights); :mod:`.search_state`, :mod:`.follow_state`, :mod:`.expansion` and
:mod:`.navigation` hold the search, following the end, expanded items and
where jumps go; :mod:`.rows` draws the pieces of a row. This module keeps the
cursor, the keys, the messages and how a row is drawn.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, assert_never

from textual import events
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.strip import Strip

from cctv.reducer.filters import ViewFilter, next_preset
from cctv.reducer.fold import Session
from cctv.reducer.state import (
    MAIN,
    AgentAdded,
    AgentChanged,
    Change,
    HookChanged,
    Item,
    ItemAdded,
    ItemUpdated,
    SessionChanged,
    TaskChanged,
    ToolItem,
)

from ..cards import margin_top
from ..search import highlight_matches, matching_rows
from .line_index import not_hidden
from .lines import TranscriptLines
from .navigation import Stop, first_at_or_after, is_call, is_error, nearest_shown, next_index, starts_turn
from .rows import SIDE_STEP, centred_row, marked_row, plain_row, side_window
from .search_state import SearchState

__all__ = ["TranscriptView"]


class TranscriptView(TranscriptLines, can_focus=True):
    """A scrolling, virtualized transcript of one agent's items."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j,down", "cursor_down", "Next item", show=False, id="transcript.next_item"),
        Binding("k,up", "cursor_up", "Previous item", show=False, id="transcript.previous_item"),
        Binding("pagedown", "page(1)", "Page down", show=False, id="transcript.page_down"),
        Binding("pageup", "page(-1)", "Page up", show=False, id="transcript.page_up"),
        Binding("g,home", "first", "Top", show=False, id="transcript.top"),
        Binding("G,end", "last", "Bottom (follow)", show=False, id="transcript.bottom",
                tooltip="Go to the end and keep following new items"),
        Binding("enter,space", "activate", "Open", id="transcript.activate",
                tooltip="Open a sub-agent's transcript, or expand / collapse the item"),
        Binding("right_square_bracket", "next_turn", "Next turn", show=False,
                id="transcript.next_turn"),
        Binding("left_square_bracket", "previous_turn", "Previous turn", show=False,
                id="transcript.previous_turn"),
        Binding("e", "next_error", "Next error", id="transcript.next_error",
                tooltip="Next failed, denied or interrupted call, problem row or error"),
        Binding("E", "previous_error", "Previous error", show=False,
                id="transcript.previous_error"),
        Binding("c", "next_call", "Next tool call", show=False, id="transcript.next_call"),
        Binding("C", "previous_call", "Previous tool call", show=False,
                id="transcript.previous_call"),
        Binding("m", "more", "More", show=False, id="transcript.more",
                tooltip="Show the next page of a long expanded item"),
        Binding("o", "open_text(False)", "Pager", show=False, id="transcript.pager",
                tooltip="Open the item's full text in $PAGER"),
        Binding("O", "open_text(True)", "Editor", show=False, id="transcript.editor",
                tooltip="Open the item's full text in $EDITOR"),
        Binding("v", "view_image", "View image", show=False, id="transcript.view_image",
                tooltip="Save the item's images to the cache directory and open them"),
        Binding("n", "search_step(1)", "Next match", show=False, id="transcript.next_match"),
        Binding("N", "search_step(-1)", "Previous match", show=False,
                id="transcript.previous_match"),
        # not in the footer: at 80 columns it would push Help under the palette key
        Binding("f", "cycle_filter", "Filter", show=False, id="transcript.cycle_filter",
                tooltip="Cycle: everything → quiet (no hooks, harness notices, thinking) → only errors"),
        Binding("F", "clear_filter", "Clear filters", show=False, id="transcript.clear_filter"),
        Binding("T", "toggle_times", "Time column", show=False, id="transcript.toggle_times"),
        Binding("w", "toggle_wrap", "Wrap long lines", show=False, id="transcript.toggle_wrap",
                tooltip="Wrap or unwrap the long lines of expanded tool bodies"),
        Binding("right,l", "scroll_side(1)", "Pan right", show=False,
                id="transcript.scroll_right"),
        Binding("left,h", "scroll_side(-1)", "Pan left", show=False,
                id="transcript.scroll_left"),
    ]
    """
    | Key(s) | Description |
    | :- | :- |
    | j, down | Move the cursor to the next item. |
    | k, up | Move the cursor to the previous item. |
    | pagedown, pageup | Scroll a page and move the cursor with it. |
    | g, home | Go to the first item. |
    | G, end | Go to the last item and follow new ones. |
    | enter, space | Open a sub-agent's transcript, or expand / collapse the item. |
    | ], [ | Next / previous turn. |
    | e, E | Next / previous error (failed, denied or interrupted call, problem row, error notice, failed hook). |
    | c, C | Next / previous tool call. |
    | n, N | Next / previous search match (row by row inside a long item). |
    | f | Cycle the common filters (everything, quiet, only errors). |
    | F | Clear every filter. |
    | T | Show or hide the time column. |
    | w | Wrap / unwrap long lines in expanded tool bodies. |
    | right, l / left, h | Scroll unwrapped bodies sideways (right unwraps them first). |
    | m | Next page of a long expanded item. |
    | o, O | The item's full text in $PAGER / $EDITOR. |
    | v | Open the item's images in the system viewer. |
    """

    HELP = """
## Transcript

One agent's conversation: prompts, answers, thinking, tool calls with their
results, hooks, compactions and turn footers.

- **j / k**, arrows: move item by item; **PgUp / PgDn**: a page; **g / G**: top / bottom.
- **Enter** or **space**: expand or fold the item; on a sub-agent call, open its transcript.
  A long item expands a page at a time: **m** shows the next page.
- **o**: the item's full text in `$PAGER` (`less -R`); **O**: in `$EDITOR`.
- **v**: open the images of a prompt or tool result in the system viewer.
- **] / [**: next / previous turn; **e / E**: errors; **c / C**: tool calls; **n / N**: search matches.
- **f**: cycle filters (everything, quiet, only errors); **F**: show everything; **T**: time column.
- **w**: unwrap the long lines of expanded tool bodies; **← / →** (**h / l**) scroll them sideways.
- Scrolling up stops following the end; **G** or **End** follows again.
- Click an item to select it; click it again to expand it.
"""


    # --- messages --------------------------------------------------------------------------

    @dataclass
    class TranscriptMessage(Message):
        """What every message of the transcript carries: the view that sent it
        (``control``, as Textual's ``OptionList.OptionMessage``)."""

        transcript: TranscriptView

        @property
        def control(self) -> TranscriptView:
            return self.transcript

    @dataclass
    class OpenAgent(TranscriptMessage):
        """Enter on a tool call that started a sub-agent: open that agent's transcript."""

        agent_id: str

    @dataclass
    class OpenText(TranscriptMessage):
        """``o`` / ``O``: show the full text of ``item`` outside the app."""

        item: Item
        editor: bool

    @dataclass
    class ViewImages(TranscriptMessage):
        """``v``: open the images of ``item`` outside the app."""

        item: Item

    @dataclass
    class FollowChanged(TranscriptMessage):
        """Following the end was switched on or off (by scrolling, ``G`` or End)."""

        following: bool

    @dataclass
    class CursorMoved(TranscriptMessage):
        """The cursor is on another item (``None`` when the transcript is empty)."""

        item: Item | None

    @dataclass
    class FilterChanged(TranscriptMessage):
        """The view shows another selection of items (its :attr:`filter` changed)."""

        filter: ViewFilter

    # --- construction ----------------------------------------------------------------------

    def __init__(self, session: Session, agent_id: str = MAIN, *, id: str | None = None,
                 name: str | None = None, classes: str | None = None) -> None:
        super().__init__(session, agent_id, id=id, name=name, classes=classes)
        self._cursor: int | None = None
        self._search = SearchState()
        self._filter = ViewFilter()

    @property
    def cursor_item(self) -> Item | None:
        """The item under the cursor."""
        items = self._index.items
        if self._cursor is None or self._cursor >= len(items):
            return None
        return items[self._cursor]

    @property
    def cursor_index(self) -> int | None:
        """The index (in the agent's items) of the item under the cursor."""
        return self._cursor

    @property
    def match_row(self) -> int | None:
        """The row (inside the cursor's item) of the match ``n`` / ``N`` is on."""
        return self._search.row

    @property
    def filter(self) -> ViewFilter:
        """What the view leaves out."""
        return self._filter

    def _build(self, width: int) -> None:
        """The first layout also puts the cursor on the last item shown."""
        first = not self._index.built
        super()._build(width)
        if first and self._cursor is None and self._index.items:
            self._set_cursor(self._index.last_shown(), scroll=False)

    def _append_new(self) -> range:
        """The appended items that match the search join its matches."""
        new = super()._append_new()
        if new and self._search.active:
            self._search.add(new, self._index.items, self._index.accepts)
        return new

    # --- feeding ----------------------------------------------------------------------------

    def apply_changes(self, changes: list[Change]) -> None:
        """Take the fold's changes to this view's agent: new items are indexed
        in O(new), updated items re-measured. A card that shows a sub-agent or
        a task has a record of its own whenever they change its look."""
        lines = self._index
        agent_id = self.agent_id
        dirty: set[int] = set()
        mine = added = False
        for change in changes:  # (the commonest kinds first: a failed class test costs)
            match change:
                case ItemUpdated():
                    if change.agent == agent_id:
                        mine = True
                        if 0 <= change.index < len(lines.items):  # (else not indexed yet)
                            dirty.add(change.index)
                case ItemAdded():
                    if change.agent == agent_id:
                        mine = added = True
                case HookChanged() | SessionChanged() | TaskChanged() | AgentChanged() \
                        | AgentAdded():
                    pass
                case _:
                    assert_never(change)
        if not mine:
            return
        if not lines.built:
            self.refresh()
            return
        was_last = self._cursor is not None and self._cursor == lines.last_shown()
        if dirty:
            if self._search.active:
                for i in dirty:
                    self._search.recheck(i, lines.items[i], lines.accepts)
            self._set_heights(lines.forget(dirty))
        appended = added and self._append_new()
        if appended or dirty:
            self._update_virtual_size()
            if self.following:
                self._set_scroll(self.max_scroll_y)
                if was_last or self._cursor is None:
                    last = lines.last_shown()
                    if last is not None and last != self._cursor:
                        self._set_cursor(last, scroll=False)
        if self._cursor is not None and lines.items and not lines.accepts(lines.items[self._cursor]):
            self._set_cursor(nearest_shown(lines.items, self._cursor, lines.accepts), scroll=False)
        self.refresh()

    def reset(self, session: Session) -> None:
        """Start again from ``session`` (the source was truncated or replaced)."""
        self.session = session
        self._cache.clear()
        self._expansion.clear()
        self._search.clear_matches()
        self._cursor = None
        self._reveal = None
        self._index.clear()
        self._estimating = False
        self.following = True
        if self._sync_width() and self._search.active:
            self.search(self._search.text)
        self.refresh()

    def rebind(self, session: Session) -> None:
        """Show ``session`` instead: the same conversation at another moment (a
        replay seek). The line index keeps what it knew of the items equal to
        the ones at their index (:meth:`LineIndex.rebind
        <.line_index.LineIndex.rebind>`), and the rows drawn of them are in the
        cache; the heights it left for later are estimated after the screen is
        drawn. The rows drawn are measured exactly either way."""
        lines = self._index
        if not lines.built:
            self.reset(session)
            return
        agent = session.agents.get(self.agent_id)
        items = list(agent.items) if agent is not None else []
        self.session = session
        lines.rebind(items, self._cursor)
        self._reveal = None
        if self._cursor is not None and self._cursor >= len(items):
            self._cursor = lines.last_shown()
        if self._search.active:
            self.search(self._search.text)
        self._update_virtual_size()
        if self.following:
            self._set_scroll(self.max_scroll_y)
            self._cursor = lines.last_shown()
        self._settle_later()
        self.refresh()

    # --- drawing ----------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        full_width = self.scrollable_content_region.width
        row = round(self.scroll_y) + y
        lines = self._index
        index = lines.item_at(row)
        if index is None or not lines.built:
            note = self._left_nothing(y)
            if note is not None:
                return centred_row(note, full_width, self.get_component_rich_style("transcript--muted")
                                   ).apply_style(self.rich_style)
            return Strip.blank(full_width, self.rich_style)
        item = lines.items[index]
        offset = row - lines.start(index)
        margin = margin_top(item)
        content_width = lines.width
        if offset < margin:
            return Strip.blank(full_width, self.rich_style)
        strips = self._strips(index)
        line_no = offset - margin
        line = strips[line_no] if line_no < len(strips) else Strip.blank(0)
        if line_no >= 1 and self._unwrapped(item):
            line = side_window(line, self.x_offset, content_width,
                               self.get_component_rich_style("transcript--accent"))
        line = line.crop_extend(0, content_width, None)
        is_cursor = index == self._cursor
        search = self._search
        is_match = index in search.match_set
        if is_match and search.text:
            current = is_cursor and line_no == search.row
            word = "transcript--match-current" if current else "transcript--match-word"
            line = highlight_matches(line, search.text, self.get_component_rich_style(word))
        time = self._time_cell(item, line_no)
        if is_cursor:
            strip = marked_row(line, time, self.get_component_rich_style("transcript--cursor-bar"),
                               self.get_component_rich_style("transcript--cursor"))
        elif is_match:
            strip = marked_row(line, time, self.get_component_rich_style("transcript--match-bar"),
                               self.get_component_rich_style("transcript--match"))
        else:
            strip = plain_row(line, time)
        base = self.rich_style  # the widget's colours under everything the renderers left unset
        return strip.crop_extend(0, full_width, None).apply_style(base)

    def _left_nothing(self, y: int) -> str | None:
        """Row ``y``'s part of what an empty view says when its filter left
        nothing of a transcript that has items (the middle two rows), else ``None``."""
        lines = self._index
        if not (lines.built and lines.items and not lines.total and self._filter.active):
            return None
        where = "this session" if self.agent_id == MAIN else "this sub-agent"
        note = (self._filter.left_nothing(where), "F: show everything")
        at = y - (self.scrollable_content_region.height - len(note)) // 2
        return note[at] if 0 <= at < len(note) else None

    def watch_following(self, following: bool) -> None:
        self.post_message(self.FollowChanged(self, following))
        if following:
            self._set_scroll(self.max_scroll_y)

    # --- the cursor -------------------------------------------------------------------------

    def _set_cursor(self, index: int | None, *, scroll: bool = True) -> None:
        old = self._cursor
        self._cursor = index
        if old != index:
            self._search.row = None
        if scroll and index is not None:
            self._reveal = index
            if self._index.built:
                self._measure_now(index)
                self._scroll_into_view(index)
        if old != index:
            self.post_message(self.CursorMoved(self, self.cursor_item))
        self.refresh()

    def move_cursor(self, index: int) -> None:
        """Put the cursor on item ``index`` (of the agent's items) and show it."""
        if not self._sync_width():  # not laid out yet: remember it for the first render
            items = self.items
            if 0 <= index < len(items) and self._index.accepts(items[index]):
                self._cursor = index
                self._reveal = index
                self.following = False
            return
        self._append_new()
        if self._index.shows(index):
            self._set_cursor(index)

    def _step(self, direction: int, stop: Stop | None = None) -> bool:
        """Move the cursor to the next item shown in ``direction`` where ``stop``
        says to; False when there is none."""
        self._sync_width()
        self._append_new()
        items = self._index.items
        if not items:
            return False
        start = self._cursor
        if start is None:
            start = -1 if direction > 0 else len(items)
        target = next_index(items, start, direction, self._index.accepts, stop)
        if target is None:
            return False
        self._set_cursor(target)
        return True

    def action_cursor_down(self) -> None:
        self._step(1)

    def action_cursor_up(self) -> None:
        self._step(-1)

    def action_first(self) -> None:
        first = self._index.first_shown()
        self.following = False
        self.scroll_to(y=0, animate=False, immediate=True)
        if first is not None:
            self._set_cursor(first)

    def action_last(self) -> None:
        self._append_new()
        last = self._index.last_shown()
        if last is not None:
            self._set_cursor(last, scroll=False)
        self.following = True
        self._set_scroll(self.max_scroll_y)
        self.refresh()

    def action_page(self, direction: int) -> None:
        """Scroll a page down (1) or up (-1), the cursor at the same place on screen."""
        self._append_new()
        lines = self._index
        if not lines.items:
            return
        view_height = max(self.scrollable_content_region.height, 1)
        top = round(self.scroll_y)
        screen_row = 0
        if self._cursor is not None:
            screen_row = min(max(lines.start(self._cursor) - top, 0), view_height - 1)
        new_top = max(0, min(top + direction * view_height, self.max_scroll_y))
        if new_top == top:
            target = lines.last_shown() if direction > 0 else lines.first_shown()
            if target is not None:
                self._set_cursor(target)
            return
        self.scroll_to(y=new_top, animate=False, immediate=True)
        index = lines.item_at(new_top + screen_row)
        if index is not None:
            self._set_cursor(nearest_shown(lines.items, index, lines.accepts), scroll=False)

    def action_next_turn(self) -> None:
        self._step(1, starts_turn)

    def action_previous_turn(self) -> None:
        self._step(-1, starts_turn)

    def action_next_error(self) -> None:
        self._step(1, is_error)

    def action_previous_error(self) -> None:
        self._step(-1, is_error)

    def action_next_call(self) -> None:
        self._step(1, is_call)

    def action_previous_call(self) -> None:
        self._step(-1, is_call)

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None or offset.x >= self.scrollable_content_region.width:
            return
        index = self._index.item_at(round(self.scroll_y) + offset.y)
        if index is None or not self._index.shows(index):
            return
        event.stop()
        if index == self._cursor:
            self.action_activate()
        else:
            self._set_cursor(index, scroll=False)

    # --- the item under the cursor ----------------------------------------------------------

    def action_activate(self) -> None:
        """Open the sub-agent of the call under the cursor, else expand or collapse it."""
        item = self.cursor_item
        if item is None:
            return
        if isinstance(item, ToolItem) and item.call.subagent:
            self.post_message(self.OpenAgent(self, item.call.subagent))
            return
        self.toggle_expanded(item)

    def toggle_expanded(self, item: Item) -> None:
        """Expand a collapsed item or collapse an expanded one."""
        self._expansion.toggle(item)
        self._remeasure(item)

    def action_more(self) -> None:
        """Show one more page of the expanded item under the cursor (expand it first)."""
        item = self.cursor_item
        if item is None:
            return
        if item not in self._expansion:
            self.toggle_expanded(item)
            return
        self._expansion.more(item)
        self._remeasure(item, reveal=False)

    def _remeasure(self, item: Item, reveal: bool = True) -> None:
        items = self._index.items
        if item.index < len(items) and items[item.index] is item:
            self._measure_now(item.index)
            if reveal and item.index == self._cursor:
                self._reveal = item.index
                self._scroll_into_view(item.index)
        self.refresh()

    def action_open_text(self, editor: bool) -> None:
        """``o`` / ``O``: the item's full text in ``$PAGER`` / ``$EDITOR`` (``editor``)."""
        if self.cursor_item is not None:
            self.post_message(self.OpenText(self, self.cursor_item, editor=editor))

    def action_view_image(self) -> None:
        if self.cursor_item is not None:
            self.post_message(self.ViewImages(self, self.cursor_item))

    # --- filters, the time column, wrapping ---------------------------------------------------

    def set_filter(self, view_filter: ViewFilter) -> None:
        """Show only the items ``view_filter`` accepts. One pass over the items
        (their heights are re-estimated, O(n) once); drawing stays O(visible).
        The cursor stays on its item, or moves to the nearest one still shown."""
        if view_filter == self._filter:
            return
        self._filter = view_filter
        accepts = view_filter.accepts if view_filter.active else not_hidden
        lines = self._index
        if lines.built and lines.width == self._content_width():
            lines.refilter(accepts)
            self._update_virtual_size()
        else:  # laid out for it below
            lines.accepts = accepts
        if self._sync_width():
            cursor = self._cursor
            if cursor is not None and cursor < len(lines.items):
                target = nearest_shown(lines.items, cursor, accepts)
                if self.following:
                    self._set_scroll(self.max_scroll_y)
                    self._set_cursor(target, scroll=False)
                else:
                    self._set_cursor(target)
            if self._search.active:
                self._search.find(lines.items, accepts)
        self.post_message(self.FilterChanged(self, view_filter))
        self.refresh()

    def action_cycle_filter(self) -> None:
        self.set_filter(next_preset(self._filter)[1])

    def action_clear_filter(self) -> None:
        self.set_filter(ViewFilter())

    def set_show_times(self, show: bool) -> None:
        """Show or hide the time column (the content is laid out again, narrower)."""
        if show == self.show_times:
            return
        self.show_times = show
        self._sync_width()
        if self._cursor is not None and not self.following:
            self._scroll_into_view(self._cursor)
        self.refresh()

    def action_toggle_times(self) -> None:
        self.set_show_times(not self.show_times)

    def jump_to_time(self, when: float) -> bool:
        """Move the cursor to the first shown item at or after ``when`` (epoch
        seconds; :func:`~.navigation.first_at_or_after`). False when none is that late."""
        time_of = self.time_of
        if time_of is None:
            return False
        self._sync_width()
        self._append_new()
        items = self._index.items
        start = first_at_or_after(items, when, time_of)
        target = next_index(items, start - 1, 1, self._index.accepts)
        if target is None:
            return False
        self.following = False
        self._set_cursor(target)
        return True

    def action_toggle_wrap(self) -> None:
        self.set_wrap(not self.wrap)

    def action_scroll_side(self, direction: int) -> None:
        """Scroll unwrapped bodies sideways; ``right`` on a wrapped view unwraps first."""
        if self.wrap:
            if direction < 0:
                return
            self.set_wrap(False)
            self.notify("long lines unwrapped: ← → scroll, w wraps them again", timeout=3)
            return
        limit = max(self._widest_unwrapped() - self._index.width, 0)
        x = max(0, min(self.x_offset + direction * SIDE_STEP, limit))
        if x != self.x_offset:
            self.x_offset = x
            self.refresh()

    # --- search -----------------------------------------------------------------------------

    def search(self, query: str) -> int:
        """Highlight the items whose text contains ``query`` (case-insensitive), and
        the matching words in them, and move the cursor to the first match at or
        after it. Returns how many items match; an empty query clears the search."""
        self._sync_width()
        self._append_new()
        search = self._search
        search.set(query)
        if not search.active:
            search.clear_matches()
            self.refresh()
            return 0
        search.find(self._index.items, self._index.accepts)
        target = search.first_from(self._cursor)
        if target is not None:
            self._go_to_match(target, 1)
        self.refresh()
        return len(search.matches)

    def search_next(self) -> bool:
        """Move to the next match, inside the item first, then in the next
        matching item (wrapping); False when nothing matches."""
        return self.action_search_step(1)

    def action_search_step(self, direction: int) -> bool:
        """``n`` / ``N``: the next (1) or previous (-1) matching row; False when
        nothing matches."""
        self._sync_width()
        self._append_new()
        search = self._search
        if not search.matches:
            return False
        cursor = self._cursor
        if cursor is not None and cursor in search.match_set and search.row is not None:
            row = search.next_row(self._match_rows(cursor), direction)
            if row is not None:
                search.row = row
                self._scroll_row_into_view(cursor, row)
                self.refresh()
                return True
        self._go_to_match(search.next_item(cursor, direction), direction)
        return True

    def _match_rows(self, index: int) -> list[int]:
        """The rows of item ``index`` (as drawn now) that contain the query."""
        return matching_rows(self._strips(index), self._search.text)

    def _go_to_match(self, index: int, direction: int) -> None:
        """Put the cursor on matching item ``index`` and on its first (or, going
        back, last) matching row; a folded item whose drawn rows do not show the
        match is expanded so they do."""
        self._set_cursor(index)
        if not self._index.built:
            return
        rows = self._match_rows(index)
        item = self._index.items[index]
        if not rows and item not in self._expansion:
            self.toggle_expanded(item)
            rows = self._match_rows(index)
        if rows:
            self._search.row = rows[0] if direction > 0 else rows[-1]
            self._scroll_row_into_view(index, self._search.row)
        self.refresh()
