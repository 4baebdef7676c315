"""The transcript of one agent, as a virtualized Line-API view.

:class:`TranscriptView` draws the items of one agent (the main conversation or
a sub-agent) from the folded :class:`~reducer.session.Session`. It reads state
and never parses frames; the app feeds it the fold's
:class:`~reducer.state.Change` records through :meth:`TranscriptView.apply_changes`.

How it scales (textual ``OptionList``/``Log`` are the models):

* A line index: one height per item (its top margin included, 0 when hidden)
  in a Fenwick tree, so "first row of item i", "item at row y" and "height of
  item i changed" are all O(log n), and appending items is O(new).
* Heights start as cheap estimates (:func:`~widgets.render_items.estimate_height`,
  exact for collapsed cards and one-liners) and become exact when the item is
  rendered, which happens only for items in the viewport. When a height above
  the top row changes, the scroll position moves with it so the text on screen
  stays put.
* Rendered rows are kept in an LRU cache keyed by
  ``(item index, line, version, width, expanded, theme, live state)``: the
  same for an equal item of another state of the session, so a replay seek
  draws again only the items that differ.
* A replay seek (:meth:`TranscriptView.rebind`) costs the view a comparison
  of the items' versions made in C (at once for the last items and those
  around the cursor, in short slices after the screen is drawn for the
  others), and work for the items that differ only. What it knew of the
  items a seek back cut off is kept ("the shelf") for the seek forward
  again; the heights of items it never saw start as the mean height and are
  estimated in short slices while the user looks (the rows on screen are
  measured exactly at once).
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Callable
from dataclasses import dataclass
from itertools import compress, count, repeat
from operator import attrgetter, is_, ne
from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding, BindingType
from textual.cache import LRUCache
from textual.geometry import Size
from textual.message import Message
from textual.reactive import var
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widget import Widget

from cctv.reducer.filters import ViewFilter, next_preset
from cctv.reducer.item_time import format_clock
from cctv.reducer.session import Session
from cctv.reducer.state import MAIN, Change, Item, ToolItem
from cctv.reducer.views import contains_folded, is_error_item, is_turn_start, search_parts

from .render_items import Palette, RenderContext, estimate_height, live_key, margin_top, render_item
from .safe_text import visible
from .search import highlight_matches, matching_rows

__all__ = ["TranscriptView"]

GUTTER = 2
"""Columns left of every row: the cursor / search-match bar and a space."""
TIME_COLUMN = 9
"""Columns of the optional time column (``HH:MM:SS`` and a space)."""
UNWRAPPED_WIDTH = 1000
"""With wrapping off, expanded tool bodies are laid out this wide and scrolled sideways."""
SIDE_STEP = 8
"""Columns ``left`` / ``right`` scroll an unwrapped body by."""
EAGER_ESTIMATES = 2000
"""A seek estimates this many new items at once; more start at the mean
height and are estimated in slices after the screen is drawn."""
EAGER_COMPARE = 4000
"""A seek compares at most this many items with the ones known at their
index at once (the last ones, and those around the cursor); the others keep
the height they had until they are compared, in slices, after the screen is
drawn (the rows on screen are measured exactly either way)."""
SLICE_S = 0.004
"""How long one slice of those estimates may hold the UI thread."""

_ident = attrgetter("version")
"""What tells an item from the one at its index in another state of the same
session: the i-th item of an agent is always made by the same frame, and
every change to it (hiding it too) bumps its version. One int: read for
every item at each seek, in C, with nothing allocated."""
_hidden = attrgetter("hidden")
_PENDING = ("pending",)
"""In ``_measured``: the height is the mean height, not estimated yet."""


def _not_hidden(item: Item) -> bool:
    """What the view shows with no filter: everything the fold did not hide."""
    return not item.hidden


class _Fenwick:
    """Prefix sums of item heights with O(log n) update, prefix and row lookup."""

    __slots__ = ("tree", "n")

    def __init__(self, values: list[int]) -> None:
        n = len(values)
        tree = [0] * (n + 1)
        tree[1:] = values
        for i in range(1, n + 1):
            j = i + (i & -i)
            if j <= n:
                tree[j] += tree[i]
        self.tree = tree
        self.n = n

    @classmethod
    def extended(cls, old: _Fenwick, keep: int, tail: list[int]) -> _Fenwick:
        """The tree of ``old``'s first ``keep`` values followed by ``tail``, in
        O(len(tail) + log keep): a node covers only values at or before it."""
        tree = old.tree[:keep + 1]
        tree += tail
        n = keep + len(tail)
        i = keep  # the kept nodes whose parent is past them: keep's prefix path
        while i > 0:
            j = i + (i & -i)
            if j <= n:
                tree[j] += tree[i]
            i -= i & -i
        for i in range(keep + 1, n + 1):
            j = i + (i & -i)
            if j <= n:
                tree[j] += tree[i]
        new = cls.__new__(cls)
        new.tree, new.n = tree, n
        return new

    def append(self, value: int) -> None:
        self.n += 1
        i = self.n
        low = i - (i & -i)
        self.tree.append(value + self.prefix(i - 1) - self.prefix(low))

    def add(self, index: int, delta: int) -> None:
        i = index + 1
        tree, n = self.tree, self.n
        while i <= n:
            tree[i] += delta
            i += i & -i

    def prefix(self, count: int) -> int:
        """Sum of the first ``count`` values (the first row of item ``count``)."""
        total, tree = 0, self.tree
        i = count
        while i > 0:
            total += tree[i]
            i -= i & -i
        return total

    @property
    def total(self) -> int:
        return self.prefix(self.n)

    def find(self, row: int) -> int:
        """Index of the item that holds ``row`` (``n`` when past the end).

        The largest ``i`` with ``prefix(i) <= row``: zero-height items are skipped."""
        pos, rem, tree, n = 0, row, self.tree, self.n
        step = 1 << n.bit_length()
        while step:
            nxt = pos + step
            if nxt <= n and tree[nxt] <= rem:
                pos = nxt
                rem -= tree[nxt]
            step >>= 1
        return pos


class TranscriptView(ScrollView, can_focus=True):
    """A scrolling, virtualized transcript of one agent's items."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j,down", "cursor_down", "Next item", show=False, id="transcript.next_item"),
        Binding("k,up", "cursor_up", "Previous item", show=False, id="transcript.previous_item"),
        Binding("pagedown", "page_down", "Page down", show=False, id="transcript.page_down"),
        Binding("pageup", "page_up", "Page up", show=False, id="transcript.page_up"),
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
        Binding("o", "open_text", "Pager", show=False, id="transcript.pager",
                tooltip="Open the item's full text in $PAGER"),
        Binding("O", "edit_text", "Editor", show=False, id="transcript.editor",
                tooltip="Open the item's full text in $EDITOR"),
        Binding("v", "view_image", "View image", show=False, id="transcript.view_image",
                tooltip="Save the item's images to the cache directory and open them"),
        Binding("n", "search_next", "Next match", show=False, id="transcript.next_match"),
        Binding("N", "search_previous", "Previous match", show=False,
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

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "transcript--cursor", "transcript--cursor-bar", "transcript--match",
        "transcript--match-bar", "transcript--muted", "transcript--accent",
        "transcript--secondary", "transcript--primary", "transcript--error",
        "transcript--warning", "transcript--success", "transcript--prompt",
        "transcript--prompt-label", "transcript--diff-add", "transcript--diff-del",
        "transcript--match-word", "transcript--match-current",
    }
    """
    | Class | Description |
    | :- | :- |
    | `transcript--cursor` | Background of the item under the cursor. |
    | `transcript--cursor-bar` | The bar left of the item under the cursor. |
    | `transcript--match` | Background of an item matching the search. |
    | `transcript--match-bar` | The bar left of a matching item. |
    | `transcript--muted` | Secondary text: chips, footers, folded hints, thinking. |
    | `transcript--accent` | Running calls, the active todo. |
    | `transcript--secondary` | Compaction dividers, sub-agent types, background tasks. |
    | `transcript--primary` | Reserved for emphasis. |
    | `transcript--error` | Failed calls, error output, error notices. |
    | `transcript--warning` | Denied / interrupted calls, warnings, problem rows, stderr. |
    | `transcript--success` | Completed calls and hooks. |
    | `transcript--prompt` | The band of a human prompt. |
    | `transcript--prompt-label` | The "you" label of a prompt. |
    | `transcript--diff-add` | Added lines of an edit diff. |
    | `transcript--diff-del` | Removed lines of an edit diff. |
    | `transcript--match-word` | The words that match the search. |
    | `transcript--match-current` | The match ``n`` / ``N`` is on. |
    """

    DEFAULT_CSS = """
    TranscriptView {
        background: $surface;
        color: $foreground;
        overflow-x: hidden;
        overflow-y: scroll;
        scrollbar-size-vertical: 1;
        & > .transcript--cursor { background: $accent 12%; }
        & > .transcript--cursor-bar { color: $accent; }
        & > .transcript--match { background: $warning 10%; }
        & > .transcript--match-bar { color: $warning; }
        & > .transcript--muted { color: $text-muted; }
        & > .transcript--accent { color: $text-accent; }
        & > .transcript--secondary { color: $text-secondary; }
        & > .transcript--primary { color: $text-primary; }
        & > .transcript--error { color: $text-error; }
        & > .transcript--warning { color: $text-warning; }
        & > .transcript--success { color: $text-success; }
        & > .transcript--prompt { background: $primary 15%; color: $foreground; }
        & > .transcript--prompt-label { color: $text-primary; text-style: bold; }
        & > .transcript--diff-add { color: $text-success; background: $success 12%; }
        & > .transcript--diff-del { color: $text-error; background: $error 12%; }
        & > .transcript--match-word { color: $text-warning; text-style: reverse; }
        & > .transcript--match-current { color: $text-primary; text-style: reverse bold; }
    }
    """

    following: var[bool] = var(True, init=False)
    """True while the view is pinned to the end: new items keep it there."""

    # --- messages --------------------------------------------------------------------------

    @dataclass
    class OpenAgent(Message):
        """Enter on a tool call that started a sub-agent: open that agent's transcript."""

        transcript: TranscriptView
        agent_id: str

        @property
        def control(self) -> TranscriptView:
            return self.transcript

    @dataclass
    class OpenText(Message):
        """``o`` / ``O``: show the full text of ``item`` outside the app."""

        transcript: TranscriptView
        item: Item
        editor: bool

        @property
        def control(self) -> TranscriptView:
            return self.transcript

    @dataclass
    class ViewImages(Message):
        """``v``: open the images of ``item`` outside the app."""

        transcript: TranscriptView
        item: Item

        @property
        def control(self) -> TranscriptView:
            return self.transcript

    @dataclass
    class FollowChanged(Message):
        """Following the end was switched on or off (by scrolling, ``G`` or End)."""

        transcript: TranscriptView
        following: bool

        @property
        def control(self) -> TranscriptView:
            return self.transcript

    @dataclass
    class CursorMoved(Message):
        """The cursor is on another item (``None`` when the transcript is empty)."""

        transcript: TranscriptView
        item: Item | None

        @property
        def control(self) -> TranscriptView:
            return self.transcript

    @dataclass
    class FilterChanged(Message):
        """The view shows another selection of items (its :attr:`filter` changed)."""

        transcript: TranscriptView
        filter: ViewFilter

        @property
        def control(self) -> TranscriptView:
            return self.transcript

    # --- construction ----------------------------------------------------------------------

    def __init__(self, session: Session, agent_id: str = MAIN, *, id: str | None = None,
                 name: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, name=name, classes=classes)
        self.session = session
        self.agent_id = agent_id
        self._cache: LRUCache[tuple, list[Strip]] = LRUCache(1024)
        self._palette: Palette | None = None
        self._last_palette: Palette | None = None
        self._palette_gen = 0
        self._expanded: set[Item] = set()
        self._pages: dict[Item, int] = {}
        """Pages shown of an expanded item, when more than one."""
        self._query = ""
        self._query_text = ""
        self._matches: list[int] = []
        self._match_set: set[int] = set()
        self._cursor: int | None = None
        self._reveal: int | None = None
        self._adjusting = False
        self._filter = ViewFilter()
        self._accepts: Callable[[Item], bool] = _not_hidden
        self._match_row: int | None = None
        self.show_times = False
        self.wrap = True
        """Long lines of expanded tool bodies wrap; when False they scroll sideways."""
        self.x_offset = 0
        self.time_of: Callable[[Item], float | None] | None = None
        """Where the time column reads an item's time (set by the screen)."""
        self._clear_index()

    def _clear_index(self) -> None:
        self._items: list[Item] = []
        self._heights: list[int] = []
        self._measured: list[tuple | None] = []
        self._keys: list[int] = []
        """``_ident`` of each item when its height was last set."""
        self._pending: list[int] = []
        """Indices whose height may still be ``_PENDING`` (estimated last first)."""
        self._found: dict[int, int] = {}
        """Estimates of pending heights made so far (applied all at once)."""
        self._to_compare: list[tuple[int, int]] = []
        """Index ranges a seek has not compared with the items known there yet."""
        self._recompared: dict[int, int] = {}
        """Estimates of the items those comparisons found changed (applied with the others)."""
        self._estimating = False
        self._drop_shelf()
        self._parked: dict[int, int] = {}
        """Heights of items a filter hides, kept for when it shows them again."""
        self._index = _Fenwick([])
        self._width = 0
        self._built = False

    @property
    def items(self) -> list[Item]:
        """The items this view shows (the agent's list, read live)."""
        agent = self.session.agents.get(self.agent_id)
        return agent.items if agent is not None else []

    @property
    def cursor_item(self) -> Item | None:
        """The item under the cursor."""
        if self._cursor is None or self._cursor >= len(self._items):
            return None
        return self._items[self._cursor]

    @property
    def cursor_index(self) -> int | None:
        """The index (in the agent's items) of the item under the cursor."""
        return self._cursor

    # --- style -----------------------------------------------------------------------------

    @property
    def palette(self) -> Palette:
        if self._palette is None:
            def fg(name: str) -> Style:
                s = self.get_component_rich_style(name)
                return Style(color=s.color, bold=s.bold, italic=s.italic, underline=s.underline)

            def full(name: str) -> Style:
                return self.get_component_rich_style(name)

            palette = Palette(
                muted=fg("transcript--muted"), accent=fg("transcript--accent"),
                secondary=fg("transcript--secondary"), primary=fg("transcript--primary"),
                error=fg("transcript--error"), warning=fg("transcript--warning"),
                success=fg("transcript--success"), band=full("transcript--prompt"),
                band_label=fg("transcript--prompt-label"),
                diff_add=full("transcript--diff-add"), diff_del=full("transcript--diff-del"),
                dark=self.app.current_theme.dark if self.is_attached else True,
            )
            if self._last_palette is not None and palette != self._last_palette:
                # another theme (or CSS): rendered rows have the old colours
                self._palette_gen += 1
                self._cache.clear()
            self._palette = self._last_palette = palette
        return self._palette

    def notify_style_update(self) -> None:
        super().notify_style_update()
        # Resolved lazily: component styles may not be updated yet at this point.
        self._palette = None
        self.refresh()

    def _render_context(self) -> RenderContext:
        return RenderContext(self.session, self.app.console, self.palette)

    # --- the line index --------------------------------------------------------------------

    @property
    def _gutter(self) -> int:
        return GUTTER + (TIME_COLUMN if self.show_times else 0)

    def _content_width(self) -> int:
        return max(self.scrollable_content_region.width - self._gutter, 0)

    def _estimate(self, item: Item, width: int) -> int:
        if not self._accepts(item):
            return 0
        return margin_top(item) + estimate_height(item, width, self._expansion(item),
                                                  self.session)

    def _drop_shelf(self) -> None:
        """Forget the items a seek back cut off (their heights are for another
        width, filter or wrap now)."""
        self._shelf_base = 0
        self._shelf_keys: list[int] = []
        self._shelf_heights: list[int] = []
        self._shelf_measured: list[tuple | None] = []
        self._shelf_opened: dict[tuple[int, int], int] = {}

    def _build(self, width: int) -> None:
        """(Re)compute every height from estimates at ``width``: O(n), no rendering."""
        items = list(self.items)
        estimate = self._estimate
        heights = [estimate(item, width) for item in items]
        self._items = items
        self._heights = heights
        self._measured = [None] * len(items)
        self._keys = list(map(_ident, items))
        self._pending, self._found = [], {}
        self._to_compare, self._recompared = [], {}
        self._drop_shelf()
        self._parked = {}
        self._index = _Fenwick(heights)
        self._width = width
        if not self._built:
            self._built = True
            if self._cursor is None and items:
                self._set_cursor(self._last_visible(), scroll=False)
        self._update_virtual_size()

    def _sync_width(self) -> bool:
        """Rebuild the index when the width changed; False while there is no width."""
        width = self._content_width()
        if width <= 0:
            return False
        if width != self._width or not self._built:
            anchor = self._anchor()
            self._build(width)
            self._restore(anchor)
        return True

    def _update_virtual_size(self) -> None:
        size = Size(self.scrollable_content_region.width, self._index.total)
        if size != self.virtual_size:
            self._adjusting = True
            try:
                self.virtual_size = size
                self._scroll_update(size)
            finally:
                self._adjusting = False

    def _start(self, index: int) -> int:
        return self._index.prefix(index)

    def _item_at_row(self, row: int) -> int | None:
        if row < 0:
            return None
        index = self._index.find(row)
        return index if index < len(self._items) else None

    def _anchor(self) -> tuple[int, int] | None:
        """The item at the top row and how far into it the top row is."""
        if not self._items:
            return None
        top = round(self.scroll_y)
        index = self._item_at_row(top)
        if index is None:
            return None
        return index, top - self._start(index)

    def _restore(self, anchor: tuple[int, int] | None) -> None:
        """Scroll so the anchored item is where it was (or pin the end when following)."""
        self._update_virtual_size()
        if self.following:
            self._set_scroll(self.max_scroll_y)
        elif anchor is not None:
            index, offset = anchor
            height = self._heights[index] if index < len(self._heights) else 0
            self._set_scroll(self._start(index) + max(min(offset, height - 1), 0))

    def _set_scroll(self, y: float) -> None:
        """Move the scroll position without it counting as the user's scroll."""
        y = max(0, min(round(y), self.max_scroll_y))
        if y == self.scroll_y:
            return
        self._adjusting = True
        try:
            self.set_reactive(Widget.scroll_y, float(y))
            self.set_reactive(Widget.scroll_target_y, float(y))
            if self.show_vertical_scrollbar:
                self.vertical_scrollbar.position = y
        finally:
            self._adjusting = False
        self.refresh()

    def _set_heights(self, new: dict[int, int]) -> None:
        """Apply height changes, keeping the text on screen still."""
        anchor = self._anchor()
        heights, index = self._heights, self._index
        changed = False
        for i, h in new.items():
            delta = h - heights[i]
            if delta:
                heights[i] = h
                index.add(i, delta)
                changed = True
        if changed:
            self._restore(anchor)

    def _measure_key(self, item: Item, width: int) -> tuple:
        return (item.version, width, self._expansion(item), self._accepts(item),
                self._unwrapped(item),
                live_key(item, self.session))

    def _strips(self, index: int) -> list[Strip]:
        """The rendered rows of item ``index`` (margin excluded), from the cache."""
        item = self._items[index]
        width = self._width
        expanded = self._expansion(item)
        live = live_key(item, self.session)
        context = self._render_context()  # resolves the palette: it may bump the generation
        unwrapped = self._unwrapped(item)
        key = (item.index, item.line_no, item.version, width, expanded, self._palette_gen, live,
               unwrapped)
        strips = self._cache.get(key)
        if strips is None:
            try:
                strips = render_item(item, width, expanded, context)
                if unwrapped:  # the header as usual, the body laid out wide
                    wide = render_item(item, max(UNWRAPPED_WIDTH, width), expanded, context)
                    strips = strips[:1] + wide[1:]
            except Exception as exc:  # a renderer bug must not take the viewer down
                strips = [Strip([Segment(visible(f"⚠ cannot draw {item.kind}: {exc}", oneline=True),
                                         self.palette.error)])]
            self._cache.set(key, strips)
        return strips

    def _measure(self, index: int) -> int:
        """Render item ``index`` and return its exact height (margin included)."""
        item = self._items[index]
        key = self._measure_key(item, self._width)
        if not self._accepts(item):
            self._measured[index] = key
            self._keys[index] = _ident(item)
            return 0
        height = margin_top(item) + len(self._strips(index))
        self._measured[index] = key
        self._keys[index] = _ident(item)
        return height

    def _prepare_viewport(self) -> None:
        """Render and measure the items on screen (and the one to reveal), correcting
        heights and the scroll position until what is drawn is exact."""
        if not self._sync_width():
            return
        self._append_new()
        view_height = self.scrollable_content_region.height
        width = self._width
        for _ in range(8):
            if self.following:
                self._set_scroll(self.max_scroll_y)
            top = round(self.scroll_y)
            fixes: dict[int, int] = {}
            index = self._item_at_row(top)
            row = self._start(index) if index is not None else 0
            while index is not None and index < len(self._items) and row < top + view_height:
                if self._measured[index] != self._measure_key(self._items[index], width):
                    height = self._measure(index)
                    if height != self._heights[index]:
                        fixes[index] = height
                row += self._heights[index]
                index += 1
            reveal = self._reveal
            if reveal is not None and reveal < len(self._items):
                if self._measured[reveal] != self._measure_key(self._items[reveal], width):
                    height = self._measure(reveal)
                    if height != self._heights[reveal]:
                        fixes[reveal] = height
            if fixes:
                self._set_heights(fixes)
                continue
            if reveal is not None:
                self._reveal = None
                if self._scroll_into_view(reveal):
                    continue
            break
        self._update_virtual_size()

    def _scroll_into_view(self, index: int) -> bool:
        """Scroll (as the user's move) so item ``index`` is visible; True if it scrolled."""
        if index >= len(self._items):
            return False
        item = self._items[index]
        start = self._start(index) + (margin_top(item) if self._heights[index] else 0)
        height = max(self._heights[index] - margin_top(item), 1)
        top = round(self.scroll_y)
        view_height = max(self.scrollable_content_region.height, 1)
        if start < top:
            target = start
        elif start + height > top + view_height:
            target = start if height > view_height else start + height - view_height
        else:
            return False
        target = max(0, min(target, self.max_scroll_y))
        if target == top:
            return False
        self.scroll_to(y=target, animate=False, immediate=True)
        return True

    def _append_new(self) -> bool:
        """Index items the fold appended since we last looked: O(new)."""
        items = self.items
        if len(items) <= len(self._items) or not self._built:
            return False
        width = self._width
        for item in items[len(self._items):]:
            height = self._estimate(item, width)
            self._items.append(item)
            self._heights.append(height)
            self._measured.append(None)
            self._keys.append(_ident(item))
            self._index.append(height)
            if self._query and self._matches_query(item):
                self._matches.append(len(self._items) - 1)
                self._match_set.add(len(self._items) - 1)
        return True

    # --- feeding ----------------------------------------------------------------------------

    def apply_changes(self, changes: list[Change]) -> None:
        """Take the fold's changes: new items are indexed in O(new), updated items
        re-measured; changes of other agents only matter when they are the
        progress of a sub-agent whose card is in this view."""
        if not changes:
            return
        dirty: set[int] = set()
        relevant = added = False
        session = self.session
        for change in changes:
            what = change.what
            if change.agent == self.agent_id:
                if what == "item_updated" and 0 <= change.index < len(self._items):
                    dirty.add(change.index)
                elif what == "item_added":
                    added = True
                relevant = True
            elif what in ("item_added", "item_updated", "agent_updated") and change.agent:
                call = session.calls.get(change.agent)
                if call is not None and call.agent == self.agent_id:
                    relevant = True
            elif what == "task" and change.key:
                task = session.tasks.get(change.key)
                call = session.calls.get(task.tool_use_id or "") if task is not None else None
                if call is not None and call.agent == self.agent_id:
                    relevant = True
        if not relevant:
            return
        if not self._built:
            self.refresh()
            return
        was_last = self._cursor is not None and self._cursor == self._last_visible()
        if dirty:
            width = self._width
            new = {}
            for i in dirty:
                item = self._items[i]
                self._measured[i] = None
                self._keys[i] = _ident(item)
                if self._query:
                    self._recheck_match(i)
                new[i] = self._estimate(item, width)
            self._set_heights(new)
        appended = added and self._append_new()
        if appended or dirty:
            self._update_virtual_size()
            if self.following:
                self._set_scroll(self.max_scroll_y)
                if was_last or self._cursor is None:
                    last = self._last_visible()
                    if last is not None and last != self._cursor:
                        self._set_cursor(last, scroll=False)
        if self._cursor is not None and self._items and not self._accepts(self._items[self._cursor]):
            self._set_cursor(self._nearest_visible(self._cursor), scroll=False)
        self.refresh()

    def reset(self, session: Session) -> None:
        """Start again from ``session`` (the source was truncated or replaced)."""
        self.session = session
        self._cache.clear()
        self._expanded.clear()
        self._pages.clear()
        self._matches, self._match_set = [], set()
        self._cursor = None
        self._reveal = None
        self._clear_index()
        self.following = True
        if self._sync_width() and self._query:
            self.search(self._query)
        self.refresh()

    def rebind(self, session: Session) -> None:
        """Show ``session`` instead: the same conversation at another moment (a
        replay seek). Items equal to the ones known at their index (same
        version: compared in C) keep their heights, rendered
        rows and expansion; the others are estimated again; items never seen
        start at the mean height and are estimated after the screen is drawn
        (:meth:`_estimate_pending`). What a seek back cuts off is kept for
        the seek forward again. The rows drawn are measured exactly either way."""
        if not self._built:
            self.reset(session)
            return
        agent = session.agents.get(self.agent_id)
        items = list(agent.items) if agent is not None else []
        n, old_n = len(items), len(self._items)
        old_heights, old_index = self._heights, self._index
        # what the view knows by index: the items it shows, then the shelf
        skip = old_n - self._shelf_base
        book_keys = self._keys + self._shelf_keys[skip:]
        book_heights = old_heights + self._shelf_heights[skip:]
        book_measured = self._measured + self._shelf_measured[skip:]
        opened = {k: v for k, v in self._shelf_opened.items() if k[0] >= old_n}
        pages = self._pages
        for item in self._expanded:
            opened[(item.index, item.line_no)] = pages.get(item, 1)
        known = min(n, len(book_keys))
        keys, differ, later = self._compare(items, book_keys, known)
        heights, measured = book_heights[:known], book_measured[:known]
        self._shelf_base = n
        self._shelf_keys, self._shelf_heights = book_keys[n:], book_heights[n:]
        self._shelf_measured = book_measured[n:]
        self._shelf_opened = {k: v for k, v in opened.items() if k[0] >= n}
        self._expanded, self._pages = set(), {}
        for (i, line_no), shown in opened.items():
            if i < n and items[i].line_no == line_no:
                self._expanded.add(items[i])
                if shown != 1:
                    self._pages[items[i]] = shown
        self.session = session
        self._items, self._keys = items, keys
        estimate, width = self._estimate, self._width
        for i in differ:
            heights[i] = estimate(items[i], width)
            measured[i] = None
        fresh = items[known:]
        if len(fresh) <= EAGER_ESTIMATES:
            heights += [estimate(item, width) for item in fresh]
            measured += [None] * len(fresh)
        elif fresh:
            mean = max(round(sum(heights) / len(heights)), 1) if heights else 2
            accepts = self._accepts
            if accepts is _not_hidden:
                heights += [0 if hidden else mean for hidden in map(_hidden, fresh)]
            else:
                heights += [mean if accepts(item) else 0 for item in fresh]
            measured += repeat(_PENDING, len(fresh))
        self._heights, self._measured = heights, measured
        keep = min(old_n, n)
        self._index = index = _Fenwick.extended(old_index, keep, heights[keep:])
        for i in differ:
            if i < keep and heights[i] != old_heights[i]:
                index.add(i, heights[i] - old_heights[i])
        self._pending = list(compress(count(), map(is_, measured, repeat(_PENDING))))
        self._found = {}
        self._to_compare, self._recompared = later, {}
        self._parked = {}
        self._reveal = None
        if self._cursor is not None and self._cursor >= n:
            self._cursor = self._last_visible()
        if self._query:
            self.search(self._query)
        self._update_virtual_size()
        if self.following:
            self._set_scroll(self.max_scroll_y)
            self._cursor = self._last_visible()
        if (self._pending or self._to_compare) and not self._estimating:
            self._estimating = True
            self.call_after_refresh(self._estimate_pending)
        self.refresh()

    def _compare(self, items: list[Item], book_keys: list[int], known: int
                 ) -> tuple[list[int], list[int], list[tuple[int, int]]]:
        """The keys of a rebind's ``items``, the indices (< ``known``) whose
        item differs from the one known there, and the index ranges left to
        compare later. Up to :data:`EAGER_COMPARE` known items are all
        compared now (in C); past that, the last ones and those around the
        cursor: the others keep the key they had (and so the height, which
        goes with it) until :meth:`_estimate_pending` compares them."""
        if known <= EAGER_COMPARE:
            keys = list(map(_ident, items))
            return keys, list(compress(count(), map(ne, keys, book_keys))), []
        keys = book_keys[:known]
        keys += map(_ident, items[known:])
        half = EAGER_COMPARE // 2
        windows = [(known - half, known)]
        cursor = self._cursor
        if cursor is not None and cursor < known - half:
            windows.insert(0, (max(cursor - half // 2, 0), min(cursor + half // 2, known - half)))
        differ: list[int] = []
        later: list[tuple[int, int]] = []
        start = 0
        for low, high in windows:
            if start < low:
                later.append((start, low))
            new = list(map(_ident, items[low:high]))
            differ += compress(count(low), map(ne, new, keys[low:high]))
            keys[low:high] = new
            start = high
        return keys, differ, later

    def _estimate_pending(self) -> None:
        """Estimate the heights still at the mean, for :data:`SLICE_S` at a
        time (last items first: nearest to the end a seek mostly shows), and
        apply them together once all are done, so the text on screen moves
        (at most) once."""
        self._estimating = False
        pending, measured, items = self._pending, self._measured, self._items
        compare, keys = self._to_compare, self._keys
        if not (pending or compare) or not self._built:
            return
        estimate, width, found = self._estimate, self._width, self._found
        stop = time.perf_counter() + SLICE_S
        while pending:
            for _ in range(min(len(pending), 64)):
                i = pending.pop()
                if i < len(items) and measured[i] is _PENDING:
                    found[i] = estimate(items[i], width)
            if time.perf_counter() > stop:
                break
        recompared = self._recompared
        while compare and not pending and time.perf_counter() <= stop:
            low, high = compare[-1]  # (nearest the end first)
            cut = max(low, high - 1024)
            for i in compress(count(cut), map(ne, map(_ident, items[cut:high]), keys[cut:high])):
                recompared[i] = estimate(items[i], width)
            if cut > low:
                compare[-1] = (low, cut)
            else:
                compare.pop()
        if pending or compare:
            self._estimating = True
            self.set_timer(0.001, self._estimate_pending)
            return
        fixes: dict[int, int] = {}
        for i, height in found.items():
            if measured[i] is _PENDING:  # (not measured on screen meanwhile)
                measured[i] = None
                keys[i] = _ident(items[i])
                fixes[i] = height
        for i, height in recompared.items():
            if keys[i] != _ident(items[i]):  # (not measured or updated meanwhile)
                measured[i] = None
                keys[i] = _ident(items[i])
                fixes[i] = height
        self._found, self._recompared = {}, {}
        self._set_heights(fixes)
        self.refresh()

    # --- rendering --------------------------------------------------------------------------

    def render_lines(self, crop):  # type: ignore[override]
        self._prepare_viewport()
        return super().render_lines(crop)

    def render_line(self, y: int) -> Strip:
        full_width = self.scrollable_content_region.width
        row = round(self.scroll_y) + y
        index = self._item_at_row(row)
        if index is None or not self._built:
            return Strip.blank(full_width, self.rich_style)
        item = self._items[index]
        offset = row - self._start(index)
        margin = margin_top(item)
        content_width = self._width
        if offset < margin:
            return Strip.blank(full_width, self.rich_style)
        strips = self._strips(index)
        line_no = offset - margin
        line = strips[line_no] if line_no < len(strips) else Strip.blank(0)
        if line_no >= 1 and self._unwrapped(item):
            line = self._side_window(line, content_width)
        line = line.crop_extend(0, content_width, None)
        is_cursor = index == self._cursor
        is_match = index in self._match_set
        if is_match and self._query_text:
            current = is_cursor and line_no == self._match_row
            word = "transcript--match-current" if current else "transcript--match-word"
            line = highlight_matches(line, self._query_text, self.get_component_rich_style(word))
        if is_cursor:
            bar_style = self.get_component_rich_style("transcript--cursor-bar")
            gutter = Strip([Segment("▌", Style(color=bar_style.color)), Segment(" ")], GUTTER)
            strip = Strip.join([gutter, self._time_cell(item, line_no), line])
            bg = self.get_component_rich_style("transcript--cursor")
            strip = strip.apply_style(Style(bgcolor=bg.bgcolor))
        elif is_match:
            bar_style = self.get_component_rich_style("transcript--match-bar")
            gutter = Strip([Segment("▌", Style(color=bar_style.color)), Segment(" ")], GUTTER)
            strip = Strip.join([gutter, self._time_cell(item, line_no), line])
            bg = self.get_component_rich_style("transcript--match")
            strip = strip.apply_style(Style(bgcolor=bg.bgcolor))
        else:
            strip = Strip.join([Strip.blank(GUTTER), self._time_cell(item, line_no), line])
        base = self.rich_style  # the widget's colours under everything the renderers left unset
        return strip.crop_extend(0, full_width, None).apply_style(base)

    def _unwrapped(self, item: Item) -> bool:
        return not self.wrap and isinstance(item, ToolItem) and item in self._expanded

    def _side_window(self, line: Strip, width: int) -> Strip:
        """The part of an unwrapped body row the sideways scroll shows, with a
        ``›`` / ``‹`` where more of it is off screen."""
        x = self.x_offset
        length = line.cell_length
        if x == 0 and length <= width:
            return line
        window = line.crop(x, x + width)
        muted = Style(color=self.get_component_rich_style("transcript--accent").color)
        if length > x + width and width > 1:
            window = Strip.join([window.crop(0, width - 1), Strip([Segment("›", muted)], 1)])
        if x > 0 and width > 1 and length > x:
            window = Strip.join([Strip([Segment("‹", muted)], 1), window.crop(1, width)])
        return window

    def action_toggle_wrap(self) -> None:
        self.set_wrap(not self.wrap)

    def set_wrap(self, wrap: bool) -> None:
        """Wrap (``True``) or unwrap the long lines of expanded tool bodies; the
        expanded items are measured again (they are few: O(expanded))."""
        if wrap == self.wrap:
            return
        self.wrap = wrap
        self.x_offset = 0
        self._drop_shelf()  # its expanded tool bodies were measured wrapped the other way
        if self._built:
            new: dict[int, int] = {}
            for item in self._expanded:
                i = item.index
                if isinstance(item, ToolItem) and i < len(self._items) and self._items[i] is item:
                    new[i] = self._measure(i)
            if new:
                self._set_heights(new)
        self.refresh()

    def action_scroll_side(self, direction: int) -> None:
        """Scroll unwrapped bodies sideways; ``right`` on a wrapped view unwraps first."""
        if self.wrap:
            if direction < 0:
                return
            self.set_wrap(False)
            self.notify("long lines unwrapped: ← → scroll, w wraps them again", timeout=3)
            return
        widest = self._widest_unwrapped()
        limit = max(widest - self._width, 0)
        x = max(0, min(self.x_offset + direction * SIDE_STEP, limit))
        if x != self.x_offset:
            self.x_offset = x
            self.refresh()

    def _widest_unwrapped(self) -> int:
        """The longest body row of the unwrapped items on screen."""
        top = round(self.scroll_y)
        index = self._item_at_row(top)
        bottom = top + self.scrollable_content_region.height
        widest = 0
        while index is not None and index < len(self._items) and self._start(index) < bottom:
            if self._unwrapped(self._items[index]):
                strips = self._strips(index)
                widest = max([widest] + [s.cell_length for s in strips[1:]])
            index += 1
        return widest

    def _time_cell(self, item: Item, line_no: int) -> Strip:
        """The time column of one row: the item's time on its first row, else blank."""
        if not self.show_times:
            return Strip.blank(0)
        if line_no != 0 or self.time_of is None:
            return Strip.blank(TIME_COLUMN)
        when = self.time_of(item)
        text = format_clock(when) if when is not None else "--:--:--"
        style = self.get_component_rich_style("transcript--muted")
        return Strip([Segment(text.ljust(TIME_COLUMN)[:TIME_COLUMN],
                              Style(color=style.color))], TIME_COLUMN)

    # --- follow mode ------------------------------------------------------------------------

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if self._adjusting or not self._built:
            return
        at_end = round(new_value) >= self.max_scroll_y
        if at_end and not self.following:
            self.following = True
        elif not at_end and new_value < old_value and self.following:
            self.following = False

    def watch_following(self, following: bool) -> None:
        self.post_message(self.FollowChanged(self, following))
        if following:
            self._set_scroll(self.max_scroll_y)

    def _on_resize(self, event: events.Resize) -> None:
        self._sync_width()
        self.refresh()

    # --- the cursor -------------------------------------------------------------------------

    def _visible(self, index: int) -> bool:
        return 0 <= index < len(self._items) and self._accepts(self._items[index])

    def _last_visible(self) -> int | None:
        # shown items have a height and hidden ones none: the line index finds them in O(log n)
        total = self._index.total
        if total <= 0:
            return None
        index = self._index.find(total - 1)
        return index if index < len(self._items) else None

    def _first_visible(self) -> int | None:
        if self._index.total <= 0:
            return None
        index = self._index.find(0)
        return index if index < len(self._items) else None

    def _nearest_visible(self, index: int) -> int | None:
        for i in range(index, len(self._items)):
            if self._accepts(self._items[i]):
                return i
        for i in range(index - 1, -1, -1):
            if self._accepts(self._items[i]):
                return i
        return None

    def _set_cursor(self, index: int | None, *, scroll: bool = True) -> None:
        old = self._cursor
        self._cursor = index
        if old != index:
            self._match_row = None
        if scroll and index is not None:
            self._reveal = index
            if self._built:
                self._measure_now(index)
                self._scroll_into_view(index)
        if old != index:
            self.post_message(self.CursorMoved(self, self.cursor_item))
        self.refresh()

    def _measure_now(self, index: int) -> None:
        if self._measured[index] != self._measure_key(self._items[index], self._width):
            height = self._measure(index)
            if height != self._heights[index]:
                self._set_heights({index: height})

    def move_cursor(self, index: int) -> None:
        """Put the cursor on item ``index`` (of the agent's items) and show it."""
        if not self._sync_width():  # not laid out yet: remember it for the first render
            items = self.items
            if 0 <= index < len(items) and self._accepts(items[index]):
                self._cursor = index
                self._reveal = index
                self.following = False
            return
        self._append_new()
        if self._visible(index):
            self._set_cursor(index)

    def _step(self, direction: int, predicate=None) -> bool:
        """Move the cursor to the next visible item in ``direction`` that satisfies
        ``predicate``; False when there is none."""
        self._sync_width()
        self._append_new()
        if not self._items:
            return False
        start = self._cursor
        if start is None:
            start = -1 if direction > 0 else len(self._items)
        i = start + direction
        items = self._items
        while 0 <= i < len(items):
            item = items[i]
            if self._accepts(item) and (predicate is None or predicate(i, item)):
                self._set_cursor(i)
                return True
            i += direction
        return False

    def action_cursor_down(self) -> None:
        self._step(1)

    def action_cursor_up(self) -> None:
        self._step(-1)

    def action_first(self) -> None:
        first = self._first_visible()
        self.following = False
        self.scroll_to(y=0, animate=False, immediate=True)
        if first is not None:
            self._set_cursor(first)

    def action_last(self) -> None:
        self._append_new()
        last = self._last_visible()
        if last is not None:
            self._set_cursor(last, scroll=False)
        self.following = True
        self._set_scroll(self.max_scroll_y)
        self.refresh()

    def _page(self, direction: int) -> None:
        self._append_new()
        if not self._items:
            return
        view_height = max(self.scrollable_content_region.height, 1)
        top = round(self.scroll_y)
        screen_row = 0
        if self._cursor is not None:
            screen_row = min(max(self._start(self._cursor) - top, 0), view_height - 1)
        new_top = max(0, min(top + direction * view_height, self.max_scroll_y))
        if new_top == top:
            target = self._last_visible() if direction > 0 else self._first_visible()
            if target is not None:
                self._set_cursor(target)
            return
        self.scroll_to(y=new_top, animate=False, immediate=True)
        index = self._item_at_row(new_top + screen_row)
        if index is not None:
            index = self._nearest_visible(index)
            self._set_cursor(index, scroll=False)

    def action_page_down(self) -> None:
        self._page(1)

    def action_page_up(self) -> None:
        self._page(-1)

    def action_activate(self) -> None:
        """Open the sub-agent of the call under the cursor, else expand or collapse it."""
        item = self.cursor_item
        if item is None:
            return
        if isinstance(item, ToolItem) and item.call.subagent:
            self.post_message(self.OpenAgent(self, item.call.subagent))
            return
        self.toggle_expanded(item)

    def _expansion(self, item: Item) -> int:
        """0 for a collapsed item, else how many pages of it are shown."""
        return self._pages.get(item, 1) if item in self._expanded else 0

    def toggle_expanded(self, item: Item) -> None:
        """Expand a collapsed item or collapse an expanded one."""
        if item in self._expanded:
            self._expanded.discard(item)
            self._pages.pop(item, None)
        else:
            self._expanded.add(item)
        self._remeasure(item)

    def action_more(self) -> None:
        """Show one more page of the expanded item under the cursor (expand it first)."""
        item = self.cursor_item
        if item is None:
            return
        if item not in self._expanded:
            self.toggle_expanded(item)
            return
        self._pages[item] = self._pages.get(item, 1) + 1
        self._remeasure(item, reveal=False)

    def action_open_text(self) -> None:
        if self.cursor_item is not None:
            self.post_message(self.OpenText(self, self.cursor_item, editor=False))

    def action_edit_text(self) -> None:
        if self.cursor_item is not None:
            self.post_message(self.OpenText(self, self.cursor_item, editor=True))

    def action_view_image(self) -> None:
        if self.cursor_item is not None:
            self.post_message(self.ViewImages(self, self.cursor_item))

    def _remeasure(self, item: Item, reveal: bool = True) -> None:
        if item.index < len(self._items) and self._items[item.index] is item:
            self._measure_now(item.index)
            if reveal and item.index == self._cursor:
                self._reveal = item.index
                self._scroll_into_view(item.index)
        self.refresh()

    def is_expanded(self, item: Item) -> bool:
        return item in self._expanded

    # jumps

    def _turn_start(self, i: int, item: Item) -> bool:
        previous = None
        for j in range(i - 1, -1, -1):
            if self._accepts(self._items[j]):
                previous = self._items[j]
                break
        return is_turn_start(item, previous)

    def action_next_turn(self) -> None:
        self._step(1, self._turn_start)

    def action_previous_turn(self) -> None:
        self._step(-1, self._turn_start)

    def action_next_error(self) -> None:
        self._step(1, lambda i, item: is_error_item(item))

    def action_previous_error(self) -> None:
        self._step(-1, lambda i, item: is_error_item(item))

    def action_next_call(self) -> None:
        self._step(1, lambda i, item: isinstance(item, ToolItem))

    def action_previous_call(self) -> None:
        self._step(-1, lambda i, item: isinstance(item, ToolItem))

    # --- filters and the time column ---------------------------------------------------------

    @property
    def filter(self) -> ViewFilter:
        """What the view leaves out."""
        return self._filter

    def set_filter(self, view_filter: ViewFilter) -> None:
        """Show only the items ``view_filter`` accepts. One pass over the items
        (their heights are re-estimated, O(n) once); drawing stays O(visible).
        The cursor stays on its item, or moves to the nearest one still shown."""
        if view_filter == self._filter:
            return
        old = self._accepts
        self._filter = view_filter
        self._accepts = view_filter.accepts if view_filter.active else _not_hidden
        if self._built and self._width == self._content_width():
            self._refilter(old)
        if self._sync_width():
            cursor = self._cursor
            if cursor is not None and cursor < len(self._items):
                target = self._nearest_visible(cursor)
                if self.following:
                    self._set_scroll(self.max_scroll_y)
                    self._set_cursor(target, scroll=False)
                else:
                    self._set_cursor(target)
            if self._query:
                matches = [i for i, item in enumerate(self._items) if self._matches_query(item)]
                self._matches, self._match_set = matches, set(matches)
        self.post_message(self.FilterChanged(self, view_filter))
        self.refresh()

    def _refilter(self, old: Callable[[Item], bool]) -> None:
        """Heights after a filter change, in one pass: only the items whose
        visibility flipped change; one that comes back takes the height it had
        (parked when it was hidden) or an estimate, then the line index is rebuilt."""
        accepts = self._accepts
        heights, measured, parked = self._heights, self._measured, self._parked
        width = self._width
        self._drop_shelf()
        for i, item in enumerate(self._items):
            if measured[i] is _PENDING:  # not estimated yet: now, with the new filter
                heights[i] = self._estimate(item, width)
                measured[i] = None
                continue
            now = accepts(item)
            if now == old(item):
                continue
            if now:
                height = parked.pop(i, None)
                heights[i] = height if height is not None else self._estimate(item, width)
            else:
                parked[i] = heights[i]
                heights[i] = 0
            measured[i] = None
            self._keys[i] = _ident(item)
        self._pending, self._found = [], {}
        self._index = _Fenwick(heights)
        self._update_virtual_size()

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
        seconds), by bisection over the items (times only grow along a
        transcript; items with no time are skipped). False when none is that late."""
        time_of = self.time_of
        if time_of is None:
            return False
        self._sync_width()
        self._append_new()
        items = self._items

        def time_at(i: int) -> float | None:
            return time_of(items[i])

        lo, hi = 0, len(items)
        while lo < hi:
            mid = (lo + hi) // 2
            probe = mid
            t = time_at(probe)
            while t is None and probe + 1 < hi:  # rows with no time: look further on
                probe += 1
                t = time_at(probe)
            if t is None or t >= when:
                hi = mid
            else:
                lo = probe + 1
        for i in range(lo, len(items)):
            if self._accepts(items[i]):
                self.following = False
                self._set_cursor(i)
                return True
        return False

    # --- search -----------------------------------------------------------------------------

    def _matches_query(self, item: Item) -> bool:
        # No cache of the texts: it would double the memory a big session takes;
        # and no copy of a giant one either: it is casefolded a window at a time.
        return self._accepts(item) and contains_folded(search_parts(item), self._query)

    def _recheck_match(self, index: int) -> None:
        hit = self._matches_query(self._items[index])
        if hit and index not in self._match_set:
            self._match_set.add(index)
            self._matches.append(index)
            self._matches.sort()
        elif not hit and index in self._match_set:
            self._match_set.discard(index)
            self._matches.remove(index)

    def search(self, query: str) -> int:
        """Highlight the items whose text contains ``query`` (case-insensitive), and
        the matching words in them, and move the cursor to the first match at or
        after it. Returns how many items match; an empty query clears the search."""
        self._sync_width()
        self._append_new()
        self._query = query.casefold()
        self._query_text = query
        self._match_row = None
        if not self._query:
            self._matches, self._match_set = [], set()
            self.refresh()
            return 0
        matches = [i for i, item in enumerate(self._items) if self._matches_query(item)]
        self._matches, self._match_set = matches, set(matches)
        if matches:
            start = self._cursor if self._cursor is not None else 0
            at = bisect.bisect_left(matches, start)
            self._go_to_match(matches[at] if at < len(matches) else matches[0], 1)
        self.refresh()
        return len(matches)

    @property
    def match_row(self) -> int | None:
        """The row (inside the cursor's item) of the match ``n`` / ``N`` is on."""
        return self._match_row

    def search_next(self) -> bool:
        """Move to the next match, inside the item first, then in the next
        matching item (wrapping); False when nothing matches."""
        return self._search_step(1)

    def search_previous(self) -> bool:
        """Move to the previous match (wrapping); False when nothing matches."""
        return self._search_step(-1)

    def _match_rows(self, index: int) -> list[int]:
        """The rows of item ``index`` (as drawn now) that contain the query."""
        return matching_rows(self._strips(index), self._query_text)

    def _go_to_match(self, index: int, direction: int) -> None:
        """Put the cursor on matching item ``index`` and on its first (or, going
        back, last) matching row; a folded item whose drawn rows do not show the
        match is expanded so they do."""
        self._set_cursor(index)
        if not self._built:
            return
        rows = self._match_rows(index)
        item = self._items[index]
        if not rows and item not in self._expanded:
            self.toggle_expanded(item)
            rows = self._match_rows(index)
        if rows:
            self._match_row = rows[0] if direction > 0 else rows[-1]
            self._scroll_row_into_view(index, self._match_row)
        self.refresh()

    def _scroll_row_into_view(self, index: int, row: int) -> None:
        """Scroll so row ``row`` of item ``index`` is on screen (a third down when
        it had to move)."""
        self._measure_now(index)
        self._reveal = None  # the row is what to show, not the item's first row
        absolute = self._start(index) + margin_top(self._items[index]) + row
        top = round(self.scroll_y)
        view_height = max(self.scrollable_content_region.height, 1)
        if top <= absolute < top + view_height:
            return
        self.following = False
        target = max(0, min(absolute - view_height // 3, self.max_scroll_y))
        self.scroll_to(y=target, animate=False, immediate=True)

    def _search_step(self, direction: int) -> bool:
        self._sync_width()
        self._append_new()
        matches = self._matches
        if not matches:
            return False
        cursor = self._cursor
        if cursor is not None and cursor in self._match_set and self._match_row is not None:
            rows = self._match_rows(cursor)
            here = self._match_row
            step = [r for r in rows if (r > here if direction > 0 else r < here)]
            if step:
                self._match_row = step[0] if direction > 0 else step[-1]
                self._scroll_row_into_view(cursor, self._match_row)
                self.refresh()
                return True
        at = -1 if cursor is None else cursor
        if direction > 0:
            i = bisect.bisect_right(matches, at)
            target = matches[i] if i < len(matches) else matches[0]
        else:
            i = bisect.bisect_left(matches, at) - 1 if cursor is not None else len(matches) - 1
            target = matches[i] if i >= 0 else matches[-1]
        self._go_to_match(target, direction)
        return True

    def action_search_next(self) -> None:
        self.search_next()

    def action_search_previous(self) -> None:
        self.search_previous()

    # --- mouse ------------------------------------------------------------------------------

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None or offset.x >= self.scrollable_content_region.width:
            return
        index = self._item_at_row(round(self.scroll_y) + offset.y)
        if index is None or not self._visible(index):
            return
        event.stop()
        if index == self._cursor:
            self.action_activate()
        else:
            self._set_cursor(index, scroll=False)
