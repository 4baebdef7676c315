"""The pieces of a transcript row: an item's rows, the gutter, the time
column, the sideways window on an unwrapped body.

An item's rows come from :func:`widgets.cards.render_item` (a renderer's bug
draws one warning row instead of taking the viewer down); the view caches
them and lays each row out as ``gutter · time column · content``.
"""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip

from cctv.reducer.item_time import format_clock
from cctv.reducer.state import Item

from ..cards import RenderContext, render_item
from ..safe_text import visible

__all__ = ["GUTTER", "TIME_COLUMN", "UNWRAPPED_WIDTH", "SIDE_STEP", "draw_item", "marked_row",
           "plain_row", "time_cell", "side_window", "centred_row"]

GUTTER = 2
"""Columns left of every row: the cursor / search-match bar and a space."""
TIME_COLUMN = 9
"""Columns of the optional time column (``HH:MM:SS`` and a space)."""
UNWRAPPED_WIDTH = 1000
"""With wrapping off, expanded tool bodies are laid out this wide and scrolled sideways."""
SIDE_STEP = 8
"""Columns ``left`` / ``right`` scroll an unwrapped body by."""


def draw_item(item: Item, width: int, expanded: int, unwrapped: bool,
              context: RenderContext) -> list[Strip]:
    """The rows of ``item`` (margin excluded) at ``width``, ``expanded`` pages
    of it; ``unwrapped``: its header as usual, its body laid out wide."""
    try:
        strips = render_item(item, width, expanded, context)
        if unwrapped:
            wide = render_item(item, max(UNWRAPPED_WIDTH, width), expanded, context)
            strips = strips[:1] + wide[1:]
    except Exception as exc:  # a renderer bug must not take the viewer down
        strips = [Strip([Segment(visible(f"⚠ cannot draw {item.kind}: {exc}", oneline=True),
                                 context.palette.error)])]
    return strips


def marked_row(content: Strip, time: Strip, bar: Style, background: Style) -> Strip:
    """A row with the bar in the gutter (the cursor's item, a search match)."""
    gutter = Strip([Segment("▌", Style(color=bar.color)), Segment(" ")], GUTTER)
    return Strip.join([gutter, time, content]).apply_style(Style(bgcolor=background.bgcolor))


def plain_row(content: Strip, time: Strip) -> Strip:
    """A row with an empty gutter."""
    return Strip.join([Strip.blank(GUTTER), time, content])


def time_cell(when: float | None, style: Style) -> Strip:
    """The time column of an item's first row: its clock time, or dashes."""
    text = format_clock(when) if when is not None else "--:--:--"
    return Strip([Segment(text.ljust(TIME_COLUMN)[:TIME_COLUMN], Style(color=style.color))],
                 TIME_COLUMN)


def side_window(line: Strip, x: int, width: int, marker: Style) -> Strip:
    """The ``width`` cells of an unwrapped body row from column ``x``, with a
    ``›`` / ``‹`` (in ``marker``'s colour) where more of it is off screen."""
    length = line.cell_length
    if x == 0 and length <= width:
        return line
    window = line.crop(x, x + width)
    muted = Style(color=marker.color)
    if length > x + width and width > 1:
        window = Strip.join([window.crop(0, width - 1), Strip([Segment("›", muted)], 1)])
    if x > 0 and width > 1 and length > x:
        window = Strip.join([Strip([Segment("‹", muted)], 1), window.crop(1, width)])
    return window


def centred_row(text: str, width: int, style: Style) -> Strip:
    """``text`` (made visible) in the middle of a row ``width`` cells wide."""
    shown = visible(text, oneline=True)
    pad = max((width - Segment(shown).cell_length) // 2, 0)
    return Strip([Segment(" " * pad), Segment(shown, style)]).crop_extend(0, width, None)
