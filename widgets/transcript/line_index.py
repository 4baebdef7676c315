"""The transcript's line index: one height per item, and what makes them right.

No Textual, no Rich (tests/test_import_hygiene.py): the view hands it a
function that sizes an item cheaply (``size``) and tells it the exact height
of the items it draws. It keeps:

* one height per item (its top margin included, 0 when the view hides it) in
  a :class:`~.fenwick.Fenwick` tree, so "first row of item i", "item at row
  y" and "height of item i changed" are all O(log n), and appending items is
  O(new);
* for each item, what its height is: exact for what it was drawn as (the
  view's measure key), an estimate (``None``), or the mean height
  (:data:`PENDING`), with the item's version when it was set;
* after a replay seek (:meth:`LineIndex.rebind`), the work left for later:
  heights still at the mean, and index ranges not compared with the items
  known there yet (:meth:`LineIndex.settle_some`);
* the shelf: what it knew of the items a seek back cut off, for the seek
  forward again (their expansions too);
* parked heights of the items a filter hides, for when it shows them again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import compress, count, repeat
from operator import attrgetter, is_, ne

from cctv.reducer.state import Item

from .expansion import Expansion, Opened
from .fenwick import Fenwick

__all__ = ["LineIndex", "Shelf", "PENDING", "not_hidden", "EAGER_ESTIMATES", "BUILD_ESTIMATES", "EAGER_COMPARE"]

EAGER_ESTIMATES = 2000
"""A seek estimates this many new items at once; more start at the mean
height and are estimated in slices after the screen is drawn."""
BUILD_ESTIMATES = 2000
"""A first layout (or one at a new width) estimates this many items at each
end at once; the ones between start at their mean height and are estimated in
slices after the screen is drawn."""
EAGER_COMPARE = 4000
"""A seek compares at most this many items with the ones known at their
index at once (the last ones, and those around the cursor); the others keep
the height they had until they are compared, in slices, after the screen is
drawn (the rows on screen are measured exactly either way)."""

_ident = attrgetter("version")
"""What tells an item from the one at its index in another state of the same
session: the i-th item of an agent is always made by the same frame, and
every change to it (hiding it too) bumps its version. One int: read for
every item at each seek, in C, with nothing allocated."""
_hidden = attrgetter("hidden")
PENDING = ("pending",)
"""In :attr:`LineIndex.measured`: the height is the mean height, not estimated yet."""


def not_hidden(item: Item) -> bool:
    """What the view shows with no filter: everything the fold did not hide."""
    return not item.hidden


@dataclass(slots=True)
class Shelf:
    """What the index knew of the items from ``base`` on, which a seek back cut
    off: their versions, heights, measure keys, and the expanded ones."""

    base: int = 0
    keys: list[int] = field(default_factory=list)
    heights: list[int] = field(default_factory=list)
    measured: list[tuple | None] = field(default_factory=list)
    opened: Opened = field(default_factory=dict)


class LineIndex:
    """The heights of one agent's items as the view shows them at one width.

    ``size(item, width)`` is the estimated rows of a shown item (margin
    included); :attr:`accepts` says which items are shown; ``expansion`` is
    the view's, which a rebind keeps with the shelf."""

    def __init__(self, size: Callable[[Item, int], int], expansion: Expansion) -> None:
        self.size = size
        self.expansion = expansion
        self.accepts: Callable[[Item], bool] = not_hidden
        """What the view shows. Set it directly before a build (the heights
        are made for it); on a built index, through :meth:`refilter`."""
        self.clear()

    def clear(self) -> None:
        """Know nothing (until :meth:`build`)."""
        self.items: list[Item] = []
        self.heights: list[int] = []
        self.measured: list[tuple | None] = []
        self.keys: list[int] = []
        """The version of each item when its height was last set."""
        self.pending: list[int] = []
        """Indices whose height may still be :data:`PENDING` (estimated last first)."""
        self.found: dict[int, int] = {}
        """Estimates of pending heights made so far (applied all at once)."""
        self.to_compare: list[tuple[int, int]] = []
        """Index ranges a seek has not compared with the items known there yet."""
        self.recompared: dict[int, int] = {}
        """Estimates of the items those comparisons found changed (applied with the others)."""
        self.shelf = Shelf()
        self.parked: dict[int, int] = {}
        """Heights of items a filter hides, kept for when it shows them again."""
        self.tree = Fenwick([])
        self.width = 0
        self.built = False

    def estimate(self, item: Item) -> int:
        """The estimated height of ``item`` at this width (0 when not shown)."""
        if not self.accepts(item):
            return 0
        return self.size(item, self.width)

    def build(self, items: list[Item], width: int) -> None:
        """Every height at ``width``, nothing drawn: estimates of the first and
        the last :data:`BUILD_ESTIMATES` items (what a first screen shows: the
        start, or the end), the mean of those for the ones between, left
        :data:`PENDING` for :meth:`settle_some` (nearest the end first). O(n),
        with the estimates O(min(n, 2 × BUILD_ESTIMATES))."""
        self.width = width
        size, accepts = self.size, self.accepts  # (what estimate does, one call less per item)
        if len(items) <= 2 * BUILD_ESTIMATES:
            heights = [size(item, width) if accepts(item) else 0 for item in items]
            measured: list[tuple | None] = [None] * len(items)
            pending: list[int] = []
        else:
            eager, last = BUILD_ESTIMATES, len(items) - BUILD_ESTIMATES
            head = [size(item, width) if accepts(item) else 0 for item in items[:eager]]
            tail = [size(item, width) if accepts(item) else 0 for item in items[last:]]
            heights, measured = head, [None] * eager
            self._at_mean(items[eager:last], heights, measured, head + tail)
            pending = list(range(eager, last))
            heights += tail
            measured += [None] * eager
        self.items = items
        self.heights = heights
        self.measured = measured
        self.keys = list(map(_ident, items))
        self.pending, self.found = pending, {}
        self.to_compare, self.recompared = [], {}
        self.shelf = Shelf()
        self.parked = {}
        self.tree = Fenwick(heights)
        self.built = True

    def drop_shelf(self) -> None:
        """Forget the items a seek back cut off (their heights are for another
        width, filter or wrap now)."""
        self.shelf = Shelf()

    # --- rows and items ---------------------------------------------------------------------

    @property
    def total(self) -> int:
        """Rows of every item."""
        return self.tree.total

    def start(self, index: int) -> int:
        """The first row of item ``index`` (its margin's)."""
        return self.tree.prefix(index)

    def item_at(self, row: int) -> int | None:
        """The item that holds ``row`` (None above the first or past the last)."""
        if row < 0:
            return None
        index = self.tree.find(row)
        return index if index < len(self.items) else None

    def on_rows(self, top: int, bottom: int) -> range:
        """The items with a row from ``top`` up to ``bottom`` (not included),
        and the hidden ones between them."""
        first = self.item_at(top)
        if first is None or bottom <= 0:
            return range(0)
        # the items that start before ``bottom``: ``find`` gives the last of them
        return range(first, min(self.tree.find(bottom - 1) + 1, len(self.items)))

    def shows(self, index: int) -> bool:
        """Whether there is an item ``index`` and it is shown."""
        return 0 <= index < len(self.items) and self.accepts(self.items[index])

    def first_shown(self) -> int | None:
        if self.tree.total <= 0:
            return None
        index = self.tree.find(0)
        return index if index < len(self.items) else None

    def last_shown(self) -> int | None:
        # shown items have a height and hidden ones none: the tree finds them in O(log n)
        total = self.tree.total
        if total <= 0:
            return None
        index = self.tree.find(total - 1)
        return index if index < len(self.items) else None

    def anchor(self, top: int) -> tuple[int, int] | None:
        """The item at row ``top`` and how far into it that row is."""
        if not self.items:
            return None
        index = self.item_at(top)
        if index is None:
            return None
        return index, top - self.start(index)

    def anchored_row(self, anchor: tuple[int, int]) -> int:
        """The row an :meth:`anchor` is at now (inside its item, however it shrank)."""
        index, offset = anchor
        height = self.heights[index] if index < len(self.heights) else 0
        return self.start(index) + max(min(offset, height - 1), 0)

    # --- heights ----------------------------------------------------------------------------

    def set_heights(self, new: dict[int, int]) -> bool:
        """Apply height changes; whether any height changed."""
        heights, tree = self.heights, self.tree
        changed = False
        for i, h in new.items():
            delta = h - heights[i]
            if delta:
                heights[i] = h
                tree.add(i, delta)
                changed = True
        return changed

    def measured_as(self, index: int, key: tuple) -> None:
        """Item ``index`` was drawn for ``key``: the height it is given now is exact."""
        self.measured[index] = key
        self.keys[index] = _ident(self.items[index])

    def append_new(self, items: list[Item]) -> range:
        """Index the items of ``items`` past the ones known (the fold appended
        them), estimated: O(new). Returns their indices."""
        start = len(self.items)
        if len(items) <= start or not self.built:
            return range(0)
        estimate, tree = self.estimate, self.tree
        for item in items[start:]:
            height = estimate(item)
            self.items.append(item)
            self.heights.append(height)
            self.measured.append(None)
            self.keys.append(_ident(item))
            tree.append(height)
        return range(start, len(self.items))

    def forget(self, indices: set[int]) -> dict[int, int]:
        """Items ``indices`` changed: their new estimated heights (to apply)."""
        new: dict[int, int] = {}
        for i in indices:
            item = self.items[i]
            self.measured[i] = None
            self.keys[i] = _ident(item)
            new[i] = self.estimate(item)
        return new

    def refilter(self, accepts: Callable[[Item], bool]) -> None:
        """Show what ``accepts`` accepts, in one pass: only the items whose
        visibility flipped change; one that comes back takes the height it had
        (parked when it was hidden) or an estimate; then the tree is rebuilt."""
        old, self.accepts = self.accepts, accepts
        heights, measured, parked, keys = self.heights, self.measured, self.parked, self.keys
        estimate = self.estimate
        self.shelf = Shelf()
        for i, item in enumerate(self.items):
            if measured[i] is PENDING:  # not estimated yet: now, with the new filter
                heights[i] = estimate(item)
                measured[i] = None
                continue
            now = accepts(item)
            if now == old(item):
                continue
            if now:
                height = parked.pop(i, None)
                heights[i] = height if height is not None else estimate(item)
            else:
                parked[i] = heights[i]
                heights[i] = 0
            measured[i] = None
            keys[i] = _ident(item)
        self.pending, self.found = [], {}
        self.tree = Fenwick(heights)

    # --- another state of the session (a replay seek) ----------------------------------------

    def rebind(self, items: list[Item], cursor: int | None) -> None:
        """Index ``items`` instead: the same conversation at another moment.
        Items equal to the ones known at their index (same version: compared
        in C) keep their heights, measure keys and expansion; the others are
        estimated again; items never seen start at the mean height past
        :data:`EAGER_ESTIMATES` (:meth:`settle_some` estimates them). What is
        cut off goes on the shelf for the seek forward again."""
        n, old_n = len(items), len(self.items)
        old_heights, old_tree, shelf = self.heights, self.tree, self.shelf
        # what the index knows by position: the items it has, then the shelf
        skip = old_n - shelf.base
        book_keys = self.keys + shelf.keys[skip:]
        book_heights = old_heights + shelf.heights[skip:]
        book_measured = self.measured + shelf.measured[skip:]
        opened = {k: v for k, v in shelf.opened.items() if k[0] >= old_n}
        opened.update(self.expansion.opened())
        known = min(n, len(book_keys))
        keys, differ, later = self.compare(items, book_keys, known, cursor)
        heights, measured = book_heights[:known], book_measured[:known]
        self.shelf = Shelf(n, book_keys[n:], book_heights[n:], book_measured[n:],
                           {k: v for k, v in opened.items() if k[0] >= n})
        self.expansion.reopen(items, opened)  # (before the estimates: they depend on it)
        self.items, self.keys = items, keys
        estimate = self.estimate
        for i in differ:
            heights[i] = estimate(items[i])
            measured[i] = None
        self._add_fresh(items[known:], heights, measured)
        self.heights, self.measured = heights, measured
        keep = min(old_n, n)
        self.tree = tree = Fenwick.extended(old_tree, keep, heights[keep:])
        for i in differ:
            if i < keep and heights[i] != old_heights[i]:
                tree.add(i, heights[i] - old_heights[i])
        self.pending = list(compress(count(), map(is_, measured, repeat(PENDING))))
        self.found = {}
        self.to_compare, self.recompared = later, {}
        self.parked = {}

    def _add_fresh(self, fresh: list[Item], heights: list[int],
                   measured: list[tuple | None]) -> None:
        """Heights for items never seen: estimates, or the mean height (left
        :data:`PENDING`) when there are more than :data:`EAGER_ESTIMATES`."""
        if len(fresh) <= EAGER_ESTIMATES:
            size, accepts, width = self.size, self.accepts, self.width
            heights += [size(item, width) if accepts(item) else 0 for item in fresh]
            measured += [None] * len(fresh)
        elif fresh:
            self._at_mean(fresh, heights, measured, heights)

    def _at_mean(self, fresh: list[Item], heights: list[int], measured: list[tuple | None],
                 sample: list[int]) -> None:
        """``fresh`` at the mean height of ``sample`` (0 if hidden), left :data:`PENDING`."""
        mean = max(round(sum(sample) / len(sample)), 1) if sample else 2
        accepts = self.accepts
        if accepts is not_hidden:
            heights += [0 if hidden else mean for hidden in map(_hidden, fresh)]
        else:
            heights += [mean if accepts(item) else 0 for item in fresh]
        measured += repeat(PENDING, len(fresh))

    def compare(self, items: list[Item], book_keys: list[int], known: int, cursor: int | None
                ) -> tuple[list[int], list[int], list[tuple[int, int]]]:
        """The keys of a rebind's ``items``, the indices (< ``known``) whose
        item differs from the one known there, and the index ranges left to
        compare later. Up to :data:`EAGER_COMPARE` known items are all
        compared now (in C); past that, the last ones and those around the
        cursor: the others keep the key they had (and so the height, which
        goes with it) until :meth:`settle_some` compares them."""
        if known <= EAGER_COMPARE:
            keys = list(map(_ident, items))
            return keys, list(compress(count(), map(ne, keys, book_keys))), []
        keys = book_keys[:known]
        keys += map(_ident, items[known:])
        half = EAGER_COMPARE // 2
        windows = [(known - half, known)]
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

    @property
    def unsettled(self) -> bool:
        """Whether heights are left at the mean or items left to compare."""
        return bool(self.pending or self.to_compare)

    def settle_some(self, deadline: float, clock: Callable[[], float]) -> bool:
        """Estimate the heights still at the mean (last items first: nearest
        the end a seek mostly shows), then compare the items not compared yet,
        until ``clock()`` passes ``deadline``. Whether work is left; the
        heights found wait for :meth:`settled_heights`."""
        pending, measured, items = self.pending, self.measured, self.items
        compare, keys = self.to_compare, self.keys
        estimate, found = self.estimate, self.found
        while pending:
            for _ in range(min(len(pending), 64)):
                i = pending.pop()
                if i < len(items) and measured[i] is PENDING:
                    found[i] = estimate(items[i])
            if clock() > deadline:
                break
        recompared = self.recompared
        while compare and not pending and clock() <= deadline:
            low, high = compare[-1]  # (nearest the end first)
            cut = max(low, high - 1024)
            for i in compress(count(cut), map(ne, map(_ident, items[cut:high]), keys[cut:high])):
                recompared[i] = estimate(items[i])
            if cut > low:
                compare[-1] = (low, cut)
            else:
                compare.pop()
        return bool(pending or compare)

    def settled_heights(self) -> dict[int, int]:
        """The heights :meth:`settle_some` found, for the items neither drawn
        nor changed since (to apply all at once, so the text on screen moves
        at most once)."""
        measured, keys, items = self.measured, self.keys, self.items
        fixes: dict[int, int] = {}
        for i, height in self.found.items():
            if measured[i] is PENDING:
                measured[i] = None
                keys[i] = _ident(items[i])
                fixes[i] = height
        for i, height in self.recompared.items():
            if keys[i] != _ident(items[i]):
                measured[i] = None
                keys[i] = _ident(items[i])
                fixes[i] = height
        self.found, self.recompared = {}, {}
        return fixes
