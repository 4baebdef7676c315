"""Which transcript items are expanded, and how far.

No Textual, no Rich: the line index keeps expansions with the heights a seek
back cuts off (:meth:`~.line_index.LineIndex.rebind`), and the view draws and
sizes an item at its :meth:`Expansion.level`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from cctv.reducer.state import Item

__all__ = ["Expansion", "Opened"]

Opened = dict[tuple[int, int], int]
"""Expanded items by ``(index, line_no)``: how many pages of each are shown.
What outlives the item objects (another state of the session has other ones)."""


class Expansion:
    """The expanded items and how many pages of each are shown (a long body
    expands a page at a time)."""

    __slots__ = ("_pages",)

    def __init__(self) -> None:
        self._pages: dict[Item, int] = {}

    def level(self, item: Item) -> int:
        """0 for a collapsed item, else how many pages of it are shown."""
        return self._pages.get(item, 0)

    def __contains__(self, item: Item) -> bool:
        return item in self._pages

    def __iter__(self) -> Iterator[Item]:
        return iter(self._pages)

    def toggle(self, item: Item) -> None:
        """Expand a collapsed item (one page) or collapse an expanded one."""
        if self._pages.pop(item, None) is None:
            self._pages[item] = 1

    def more(self, item: Item) -> None:
        """One more page of an expanded item."""
        self._pages[item] += 1

    def clear(self) -> None:
        self._pages.clear()

    def opened(self) -> Opened:
        """The expanded items, by place."""
        return {(item.index, item.line_no): pages for item, pages in self._pages.items()}

    def reopen(self, items: Sequence[Item], opened: Opened) -> None:
        """Expand the items of ``items`` that ``opened`` names (same index, same
        line) as far as it says; everything else is collapsed."""
        n = len(items)
        self._pages = {items[i]: pages for (i, line_no), pages in opened.items()
                       if i < n and items[i].line_no == line_no}
