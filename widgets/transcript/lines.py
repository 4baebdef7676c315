"""The transcript's rows on a Line-API scroll view.

:class:`TranscriptLines` lays one agent's items out through a
:class:`~.line_index.LineIndex` (textual ``OptionList`` and ``Log`` are the
models): heights start as cheap estimates
(:func:`~widgets.cards.estimate_height`, exact for collapsed cards and
one-liners) and become exact when an item is drawn, which happens only for
the items on screen. When a height above the top row changes, the scroll
position moves with it so the text on screen stays put; while following,
the end stays pinned. Drawn rows are kept in an LRU cache keyed by ``(item
index, line, version, width, expanded, theme, unwrapped)``: the version goes
up whenever the item's look changes (what a card shows of a sub-agent or a
task included), so the key is the same for an equal item of another state of
the session, and a replay seek draws again only the items that differ.

:class:`~.view.TranscriptView` adds the cursor, the keys, search and filters.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import ClassVar

from rich.style import Style
from textual import events
from textual.cache import LRUCache
from textual.geometry import Size
from textual.reactive import var
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widget import Widget

from cctv.reducer.fold import Session
from cctv.reducer.state import MAIN, Item, ToolItem

from ..cards import Palette, RenderContext, estimate_height, margin_top
from .expansion import Expansion
from .follow_state import FollowState
from .line_index import LineIndex
from .rows import GUTTER, TIME_COLUMN, draw_item, time_cell

__all__ = ["TranscriptLines"]

SLICE_S = 0.004
"""How long one slice of the estimates a seek leaves for later may hold the UI thread."""


class TranscriptLines(ScrollView):
    """One agent's items laid out as rows: measured where drawn, scrolled
    without the text on screen moving, following the end."""

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
    TranscriptLines {
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

    def __init__(self, session: Session, agent_id: str = MAIN, *, id: str | None = None,
                 name: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, name=name, classes=classes)
        self.session = session
        self.agent_id = agent_id
        self._cache: LRUCache[tuple, list[Strip]] = LRUCache(1024)
        self._palette: Palette | None = None
        self._last_palette: Palette | None = None
        self._palette_gen = 0
        self._expansion = Expansion()
        self._index = LineIndex(self._estimated_rows, self._expansion)
        self._follow = FollowState()
        self._reveal: int | None = None
        """An item to scroll into view once the rows on screen are measured."""
        self._estimating = False
        """A slice of the estimates a seek left for later is scheduled."""
        self.show_times = False
        self.time_of: Callable[[Item], float | None] | None = None
        """Where the time column reads an item's time (set by the screen)."""
        self.wrap = True
        """Long lines of expanded tool bodies wrap; when False they scroll sideways."""
        self.x_offset = 0

    @property
    def items(self) -> list[Item]:
        """The items this view shows (the agent's list, read live)."""
        agent = self.session.agents.get(self.agent_id)
        return agent.items if agent is not None else []

    def is_expanded(self, item: Item) -> bool:
        return item in self._expansion

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

    # --- the layout ------------------------------------------------------------------------

    def _content_width(self) -> int:
        gutter = GUTTER + (TIME_COLUMN if self.show_times else 0)
        return max(self.scrollable_content_region.width - gutter, 0)

    def _estimated_rows(self, item: Item, width: int) -> int:
        """The estimated rows of a shown item at ``width``, its margin included."""
        return margin_top(item) + estimate_height(item, width, self._expansion.level(item),
                                                  self.session)

    def _sync_width(self) -> bool:
        """Lay the items out again when the width changed; False while there is no width."""
        width = self._content_width()
        if width <= 0:
            return False
        index = self._index
        if width != index.width or not index.built:
            anchor = index.anchor(round(self.scroll_y))
            self._build(width)
            self._restore(anchor)
        return True

    def _build(self, width: int) -> None:
        """Every height at ``width``, nothing drawn: the start's and the end's
        estimated now, the rest after the screen is drawn (:meth:`_settle_later`)."""
        self._index.build(list(self.items), width)
        self._update_virtual_size()
        self._settle_later()

    def _append_new(self) -> range:
        """Index the items the fold appended since we last looked: O(new)."""
        return self._index.append_new(self.items)

    def _update_virtual_size(self) -> None:
        size = Size(self.scrollable_content_region.width, self._index.total)
        if size != self.virtual_size:
            with self._follow.own_scroll():
                self.virtual_size = size
                self._scroll_update(size)

    def _restore(self, anchor: tuple[int, int] | None) -> None:
        """Scroll so the anchored item is where it was (or pin the end when following)."""
        self._update_virtual_size()
        if self.following:
            self._set_scroll(self.max_scroll_y)
        elif anchor is not None:
            self._set_scroll(self._index.anchored_row(anchor))

    def _set_scroll(self, y: float) -> None:
        """Move the scroll position without it counting as the user's scroll."""
        y = max(0, min(round(y), self.max_scroll_y))
        if y == self.scroll_y:
            return
        with self._follow.own_scroll():
            self.set_reactive(Widget.scroll_y, float(y))
            self.set_reactive(Widget.scroll_target_y, float(y))
            if self.show_vertical_scrollbar:
                self.vertical_scrollbar.position = y
        self.refresh()

    def _set_heights(self, new: dict[int, int]) -> None:
        """Apply height changes, keeping the text on screen still."""
        anchor = self._index.anchor(round(self.scroll_y))
        if self._index.set_heights(new):
            self._restore(anchor)

    # --- drawing and measuring --------------------------------------------------------------

    def _unwrapped(self, item: Item) -> bool:
        return not self.wrap and isinstance(item, ToolItem) and item in self._expansion

    def _measure_key(self, item: Item, width: int) -> tuple:
        return (item.version, width, self._expansion.level(item), self._index.accepts(item),
                self._unwrapped(item))

    def _strips(self, index: int) -> list[Strip]:
        """The rendered rows of item ``index`` (margin excluded), from the cache."""
        item = self._index.items[index]
        width = self._index.width
        expanded = self._expansion.level(item)
        # (the palette is resolved before the key is made: it may bump the generation)
        context = RenderContext(self.session, self.app.console, self.palette)
        unwrapped = self._unwrapped(item)
        key = (item.index, item.line_no, item.version, width, expanded, self._palette_gen,
               unwrapped)
        strips = self._cache.get(key)
        if strips is None:
            strips = draw_item(item, width, expanded, unwrapped, context)
            self._cache.set(key, strips)
        return strips

    def _measure(self, index: int) -> int:
        """Render item ``index`` and return its exact height (margin included)."""
        lines = self._index
        item = lines.items[index]
        key = self._measure_key(item, lines.width)
        height = margin_top(item) + len(self._strips(index)) if lines.accepts(item) else 0
        lines.measured_as(index, key)
        return height

    def _check_height(self, index: int, fixes: dict[int, int]) -> None:
        """Draw item ``index`` again if what it was measured for changed, and
        note its height in ``fixes`` when that is not the one indexed."""
        lines = self._index
        if lines.measured[index] != self._measure_key(lines.items[index], lines.width):
            height = self._measure(index)
            if height != lines.heights[index]:
                fixes[index] = height

    def _measure_now(self, index: int) -> None:
        fixes: dict[int, int] = {}
        self._check_height(index, fixes)
        if fixes:
            self._set_heights(fixes)

    def _prepare_viewport(self) -> None:
        """Render and measure the items on screen (and the one to reveal), correcting
        heights and the scroll position until what is drawn is exact."""
        if not self._sync_width():
            return
        self._append_new()
        lines = self._index
        view_height = self.scrollable_content_region.height
        for _ in range(8):
            if self.following:
                self._set_scroll(self.max_scroll_y)
            top = round(self.scroll_y)
            fixes: dict[int, int] = {}
            for index in lines.on_rows(top, top + view_height):
                self._check_height(index, fixes)
            reveal = self._reveal
            if reveal is not None and reveal < len(lines.items):
                self._check_height(reveal, fixes)
            if fixes:
                self._set_heights(fixes)
                continue
            if reveal is not None:
                self._reveal = None
                if self._scroll_into_view(reveal):
                    continue
            break
        self._update_virtual_size()

    def render_lines(self, crop):  # type: ignore[override]
        self._prepare_viewport()
        return super().render_lines(crop)

    def _time_cell(self, item: Item, line_no: int) -> Strip:
        """The time column of one row: the item's time on its first row, else blank."""
        if not self.show_times:
            return Strip.blank(0)
        if line_no != 0 or self.time_of is None:
            return Strip.blank(TIME_COLUMN)
        return time_cell(self.time_of(item), self.get_component_rich_style("transcript--muted"))

    # --- scrolling --------------------------------------------------------------------------

    def _scroll_into_view(self, index: int) -> bool:
        """Scroll (as the user's move) so item ``index`` is visible; True if it scrolled."""
        lines = self._index
        if index >= len(lines.items):
            return False
        item = lines.items[index]
        start = lines.start(index) + (margin_top(item) if lines.heights[index] else 0)
        height = max(lines.heights[index] - margin_top(item), 1)
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

    def _scroll_row_into_view(self, index: int, row: int) -> None:
        """Scroll so row ``row`` of item ``index`` is on screen (a third down when
        it had to move)."""
        self._measure_now(index)
        self._reveal = None  # the row is what to show, not the item's first row
        absolute = self._index.start(index) + margin_top(self._index.items[index]) + row
        top = round(self.scroll_y)
        view_height = max(self.scrollable_content_region.height, 1)
        if top <= absolute < top + view_height:
            return
        self.following = False
        target = max(0, min(absolute - view_height // 3, self.max_scroll_y))
        self.scroll_to(y=target, animate=False, immediate=True)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if not self._index.built:
            return
        following = self._follow.after_scroll(self.following, old_value, new_value,
                                              self.max_scroll_y)
        if following != self.following:
            self.following = following

    def _on_resize(self, event: events.Resize) -> None:
        self._sync_width()
        self.refresh()

    # --- estimates left for later -----------------------------------------------------------

    def _settle_later(self) -> None:
        """Have the heights a seek left at the mean estimated (and the items it
        left uncompared compared) after the screen is drawn."""
        if self._index.unsettled and not self._estimating:
            self._estimating = True
            self.call_after_refresh(self._estimate_pending)

    def _estimate_pending(self) -> None:
        """One slice of :meth:`LineIndex.settle_some <.line_index.LineIndex.settle_some>`
        (:data:`SLICE_S`), then another on a timer; when all is done, the heights
        found are applied together, so the text on screen moves (at most) once."""
        self._estimating = False
        lines = self._index
        if not lines.unsettled or not lines.built:
            return
        if lines.settle_some(time.perf_counter() + SLICE_S, time.perf_counter):
            self._estimating = True
            self.set_timer(0.001, self._estimate_pending)
            return
        self._set_heights(lines.settled_heights())
        self.refresh()

    # --- wrapping ---------------------------------------------------------------------------

    def set_wrap(self, wrap: bool) -> None:
        """Wrap (``True``) or unwrap the long lines of expanded tool bodies; the
        expanded items are measured again (they are few: O(expanded))."""
        if wrap == self.wrap:
            return
        self.wrap = wrap
        self.x_offset = 0
        lines = self._index
        lines.drop_shelf()  # its expanded tool bodies were measured wrapped the other way
        if lines.built:
            new: dict[int, int] = {}
            for item in self._expansion:
                i = item.index
                if isinstance(item, ToolItem) and i < len(lines.items) and lines.items[i] is item:
                    new[i] = self._measure(i)
            if new:
                self._set_heights(new)
        self.refresh()

    def _widest_unwrapped(self) -> int:
        """The longest body row of the unwrapped items on screen."""
        top = round(self.scroll_y)
        widest = 0
        for index in self._index.on_rows(top, top + self.scrollable_content_region.height):
            if self._unwrapped(self._index.items[index]):
                strips = self._strips(index)
                widest = max([widest] + [s.cell_length for s in strips[1:]])
        return widest
