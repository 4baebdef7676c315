"""The transcript's line index without Textual: heights, the Fenwick tree,
estimates, the shelf a seek back leaves, parked heights, the comparison a
rebind makes; on the items real recordings fold to.

The index is given the view's own estimate (``margin_top`` + ``estimate_height``);
"drawing" an item is standing in for the view: ``measured_as`` with a key and
a height that is not the estimate, so a test can tell a kept exact height
from one estimated again.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

import cctv.widgets.transcript.line_index as line_index
from cctv.reducer.filters import ViewFilter
from cctv.reducer.fold import Session
from cctv.reducer.state import HookItem, Item
from cctv.widgets.cards import estimate_height, margin_top
from cctv.widgets.transcript.expansion import Expansion
from cctv.widgets.transcript.fenwick import Fenwick
from cctv.widgets.transcript.line_index import PENDING, LineIndex, not_hidden
from conftest import FIXTURES, fold_until

WIDTH = 80
LONG = (FIXTURES / "public" / "claude-code-log" / "real_projects" / "-experiments-worktrees"
        / "ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl")
"""180 lines; between line 60 and the end, items 35 and 36 change (a call finishes)."""
HOOKS = FIXTURES / "captures" / "stream" / "07_hooks.jsonl"
DRAWN = ("drawn",)
"""The measure key the tests' stand-in for the view draws items with."""


class Sizer:
    """The view's estimate of an item's rows, over the session it shows."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.expansion = Expansion()
        self.sized: list[Item] = []

    def __call__(self, item: Item, width: int) -> int:
        self.sized.append(item)
        return margin_top(item) + estimate_height(item, width, self.expansion.level(item),
                                                  self.session)


def _lines(path: Path, line_no: int) -> tuple[LineIndex, Sizer, list[Item]]:
    session = fold_until(path, line_no)
    sizer = Sizer(session)
    return LineIndex(sizer, sizer.expansion), sizer, list(session.main.items)


def _at(path: Path, line_no: int, sizer: Sizer) -> list[Item]:
    """The items at ``line_no``, the sizer now reading that state."""
    sizer.session = fold_until(path, line_no)
    return list(sizer.session.main.items)


def _draw(index: LineIndex, i: int, extra: int = 3) -> int:
    """Stand in for the view drawing item ``i``: its exact height is not the estimate."""
    height = index.estimate(index.items[i]) + extra
    index.measured_as(i, DRAWN)
    index.set_heights({i: height})
    return height


def _consistent(index: LineIndex) -> None:
    assert index.tree.tree == Fenwick(index.heights).tree
    assert index.total == sum(index.heights)
    assert len(index.items) == len(index.heights) == len(index.measured) == len(index.keys)


# --- the Fenwick tree ------------------------------------------------------------------------


def test_a_fenwick_tree_sums_finds_appends_and_adds_like_a_list() -> None:
    rng = random.Random(7)
    for _ in range(300):
        values = [rng.choice((0, 0, 1, 2, 5, 9)) for _ in range(rng.randint(0, 60))]
        tree = Fenwick(values)
        grown = Fenwick([])
        for value in values:
            grown.append(value)
        assert grown.tree == tree.tree and grown.n == tree.n == len(values)
        sums = [sum(values[:i]) for i in range(len(values) + 1)]
        assert [tree.prefix(i) for i in range(len(values) + 1)] == sums
        for row in range(tree.total + 2):  # the last index whose start is at or before ``row``
            assert tree.find(row) == max(i for i, s in enumerate(sums) if s <= row)
        if values:
            i = rng.randrange(len(values))
            delta = rng.randint(-values[i], 7)
            tree.add(i, delta)
            values[i] += delta
            assert tree.tree == Fenwick(values).tree


# --- heights and rows -----------------------------------------------------------------------


@pytest.mark.parametrize("path", [LONG, HOOKS], ids=lambda p: p.name)
def test_every_row_is_found_in_the_item_that_holds_it(path: Path) -> None:
    index, sizer, items = _lines(path, 10_000)
    index.accepts = ViewFilter(hidden=frozenset({"hooks"})).accepts  # hidden items: no rows
    index.build(items, WIDTH)
    assert index.built and index.width == WIDTH
    assert index.heights == [sizer(item, WIDTH) if index.accepts(item) else 0 for item in items]
    assert 0 in index.heights and index.keys == [item.version for item in items]
    _consistent(index)
    starts = [sum(index.heights[:i]) for i in range(len(items))]
    holder = [i for i, h in enumerate(index.heights) for _ in range(h)]
    assert [index.item_at(row) for row in range(index.total)] == holder
    assert index.item_at(-1) is None and index.item_at(index.total) is None
    assert [index.start(i) for i in range(len(items))] == starts
    shown = [i for i, item in enumerate(items) if index.accepts(item)]
    assert (index.first_shown(), index.last_shown()) == (shown[0], shown[-1])
    assert all(index.shows(i) == (i in shown) for i in range(-1, len(items) + 1))
    for top in range(0, index.total + 2, 3):  # the items the view draws, rows top..bottom-1
        for bottom in range(top, min(top + 30, index.total + 3)):
            first = index.item_at(top)
            naive = [] if first is None else [i for i in range(first, len(items))
                                              if starts[i] < bottom]
            assert list(index.on_rows(top, bottom)) == naive, (top, bottom)


def test_an_anchor_keeps_the_top_row_in_its_item_when_heights_above_change() -> None:
    index, _sizer, items = _lines(LONG, 180)
    index.build(items, WIDTH)
    tall = next(i for i in range(40, len(items)) if index.heights[i] >= 3)
    top = index.start(tall) + 1
    anchor = index.anchor(top)
    assert anchor == (tall, 1)
    assert not index.set_heights({3: index.heights[3]})  # no change
    assert index.set_heights({3: index.heights[3] + 4, tall + 1: 1})
    assert index.anchored_row(anchor) == top + 4
    index.set_heights({tall: 1})  # the anchored item shrank under its offset: its last row
    assert index.anchored_row(anchor) == index.start(tall)
    _consistent(index)


def test_appended_items_are_indexed_as_a_build_would_index_them() -> None:
    index, _sizer, items = _lines(LONG, 180)
    index.build(items[:50], WIDTH)
    assert list(index.append_new(items)) == list(range(50, len(items)))
    assert not index.append_new(items)  # nothing new
    whole, _sizer, _items = _lines(LONG, 180)
    whole.build(items, WIDTH)
    assert (index.heights, index.keys, index.tree.tree) == (whole.heights, whole.keys,
                                                            whole.tree.tree)


def test_changed_items_are_estimated_again() -> None:
    index, sizer, items = _lines(LONG, 180)
    index.build(items, WIDTH)
    drawn = _draw(index, 35)
    items[35].version += 1
    new = index.forget({35})
    assert new == {35: sizer(items[35], WIDTH)} != {35: drawn}
    assert index.measured[35] is None and index.keys[35] == items[35].version


# --- parking --------------------------------------------------------------------------------


def test_a_filter_parks_the_heights_it_hides_and_gives_them_back() -> None:
    index, sizer, items = _lines(HOOKS, 29)
    index.build(items, WIDTH)
    hooks = [i for i, item in enumerate(items) if isinstance(item, HookItem)]
    drawn = {i: _draw(index, i, extra=i + 1) for i in hooks}  # exact, and unlike any estimate
    sizer.sized.clear()
    index.refilter(ViewFilter(hidden=frozenset({"hooks"})).accepts)
    assert [index.heights[i] for i in hooks] == [0] * len(hooks)
    assert index.parked == drawn
    assert not sizer.sized  # nothing shown changed: nothing estimated
    _consistent(index)
    index.refilter(not_hidden)
    assert {i: index.heights[i] for i in hooks} == drawn and not index.parked
    assert not sizer.sized  # they came back with the heights they had, not estimates
    _consistent(index)


# --- rebind: another state of the session --------------------------------------------------


def test_a_seek_back_keeps_equal_items_and_shelves_what_it_cuts_off() -> None:
    index, sizer, end = _lines(LONG, 180)
    index.build(end, WIDTH)
    drawn = {i: _draw(index, i) for i in (10, 35, 60, 100)}
    early = _at(LONG, 60, sizer)
    index.rebind(early, cursor=None)
    assert index.items == early and index.keys == [item.version for item in early]
    assert index.heights[10] == drawn[10] and index.measured[10] == DRAWN  # equal: kept exact
    assert index.heights[35] == sizer(early[35], WIDTH) and index.measured[35] is None  # changed
    assert index.heights[36] == sizer(early[36], WIDTH)
    assert len(index.heights) == len(early) == index.shelf.base == 39
    assert index.shelf.heights[60 - 39] == drawn[60] and index.shelf.measured[100 - 39] == DRAWN
    _consistent(index)
    # forward again: what was cut off comes back from the shelf, exact where it was drawn
    end = _at(LONG, 180, sizer)
    sizer.sized.clear()
    index.rebind(end, cursor=None)
    assert sizer.sized == [end[35], end[36]]  # only the items that differ were estimated
    assert (index.heights[60], index.heights[100], index.heights[10]) == (drawn[60], drawn[100],
                                                                          drawn[10])
    assert index.measured[60] == index.measured[100] == DRAWN
    assert index.heights[35] == sizer(end[35], WIDTH) and index.measured[35] is None
    assert index.keys == [item.version for item in end] and not index.shelf.keys
    _consistent(index)


def test_expanded_items_a_seek_back_cuts_off_are_expanded_again_after_the_seek_forward() -> None:
    index, sizer, end = _lines(LONG, 180)
    index.build(end, WIDTH)
    sizer.expansion.toggle(end[20])
    sizer.expansion.toggle(end[90])
    sizer.expansion.more(end[90])
    early = _at(LONG, 60, sizer)
    index.rebind(early, cursor=None)
    assert sizer.expansion.level(early[20]) == 1 and end[90] not in sizer.expansion
    assert index.shelf.opened == {(90, end[90].line_no): 2}
    end = _at(LONG, 180, sizer)  # other item objects: the same items
    index.rebind(end, cursor=None)
    assert sizer.expansion.opened() == {(20, end[20].line_no): 1, (90, end[90].line_no): 2}


def test_items_never_seen_start_at_the_mean_and_are_estimated_in_slices(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(line_index, "EAGER_ESTIMATES", 0)
    index, sizer, early = _lines(LONG, 60)
    index.build(early, WIDTH)
    end = _at(LONG, 180, sizer)
    index.rebind(end, cursor=None)
    fresh = range(len(early), len(end))
    mean = round(sum(index.heights[:len(early)]) / len(early))  # of the items known
    assert [index.heights[i] for i in fresh] == [mean] * len(fresh)
    assert all(index.measured[i] is PENDING for i in fresh) and index.unsettled
    assert sorted(index.pending) == list(fresh)
    _draw(index, len(end) - 1)  # drawn meanwhile: its exact height stays
    # a slice whose time is up still does 64 (the last items first), and says what is left
    assert index.settle_some(deadline=0.0, clock=lambda: 1.0)
    assert sorted(index.found) == list(fresh)[-64:-1]
    assert not index.settle_some(deadline=float("inf"), clock=lambda: 0.0)
    fixes = index.settled_heights()
    assert fixes == {i: sizer(end[i], WIDTH) for i in fresh[:-1]}
    index.set_heights(fixes)
    assert index.measured[len(end) - 1] == DRAWN
    assert not index.unsettled and not index.found
    _consistent(index)


def test_hidden_items_never_seen_start_at_no_height(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(line_index, "EAGER_ESTIMATES", 0)
    index, sizer, early = _lines(HOOKS, 12)
    index.build(early, WIDTH)
    end = _at(HOOKS, 29, sizer)
    end[-1].hidden = True  # (what the fold does to a row a later one replaces)
    index.rebind(end, cursor=None)
    assert index.heights[-1] == 0 and min(index.heights[len(early):-1]) > 0
    _consistent(index)


@pytest.mark.parametrize("cursor", [None, 36])
def test_a_seek_compares_far_items_later(monkeypatch: pytest.MonkeyPatch,
                                         cursor: int | None) -> None:
    monkeypatch.setattr(line_index, "EAGER_COMPARE", 4)
    index, sizer, end = _lines(LONG, 180)
    index.build(end, WIDTH)
    old = list(index.heights)
    early = _at(LONG, 60, sizer)
    index.rebind(early, cursor=cursor)
    changed = {35: sizer(early[35], WIDTH), 36: sizer(early[36], WIDTH)}
    if cursor is None:  # only the last two items are compared at once: 35 and 36 keep
        assert index.to_compare == [(0, 37)]  # the heights they had, until compared
        assert (index.heights[35], index.keys[35]) == (old[35], end[35].version)
    else:  # and those around the cursor
        assert index.to_compare == [(0, 35)]
        assert (index.heights[35], index.keys[35]) == (changed[35], early[35].version)
    assert index.unsettled
    assert not index.settle_some(deadline=float("inf"), clock=lambda: 0.0)
    fixes = index.settled_heights()
    assert fixes == ({} if cursor is not None else changed)
    index.set_heights(fixes)
    assert index.keys == [item.version for item in early] and not index.unsettled
    assert [index.heights[i] for i in (35, 36)] == [changed[35], changed[36]]
    _consistent(index)


def test_a_rebind_of_the_same_state_changes_nothing() -> None:
    index, sizer, end = _lines(LONG, 180)
    index.build(end, WIDTH)
    _draw(index, 50)
    before = (list(index.heights), list(index.measured), list(index.tree.tree))
    sizer.sized.clear()
    index.rebind(list(end), cursor=None)
    assert (index.heights, index.measured, index.tree.tree) == before and not sizer.sized


def test_items_appended_after_a_seek_back_take_their_place_before_the_shelf() -> None:
    """After a seek back the fold may go on (the view appends what it folds):
    the shelf then starts further on, and what it knew of the appended places
    (the heights, the expanded items) is the appended items' now."""
    index, sizer, end = _lines(LONG, 180)
    index.build(end, WIDTH)
    drawn = {i: _draw(index, i) for i in (45, 60, 100)}
    sizer.expansion.toggle(end[45])
    sizer.expansion.toggle(end[60])
    index.rebind(_at(LONG, 60, sizer), cursor=None)
    assert index.shelf.base == 39
    later = _at(LONG, 80, sizer)
    assert list(index.append_new(later)) == list(range(39, 53))
    assert index.heights[45] == sizer(later[45], WIDTH) and later[45] not in sizer.expansion
    end = _at(LONG, 180, sizer)
    index.rebind(end, cursor=None)
    assert (index.heights[60], index.heights[100]) == (drawn[60], drawn[100])
    assert index.heights[45] == sizer(end[45], WIDTH) != drawn[45]
    assert sizer.expansion.opened() == {(60, end[60].line_no): 1}  # not 45: folded since
    _consistent(index)


def test_a_filter_change_estimates_the_heights_left_at_the_mean(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(line_index, "EAGER_ESTIMATES", 0)
    index, sizer, early = _lines(LONG, 60)
    index.build(early, WIDTH)
    end = _at(LONG, 180, sizer)
    index.rebind(end, cursor=None)
    assert index.pending
    accepts = ViewFilter(hidden=frozenset({"hooks"})).accepts
    index.refilter(accepts)
    fresh = range(len(early), len(end))
    assert [index.heights[i] for i in fresh] == [
        sizer(end[i], WIDTH) if accepts(end[i]) else 0 for i in fresh]
    assert PENDING not in index.measured and not index.pending
    _consistent(index)


def test_a_long_first_layout_estimates_both_ends_now_and_the_middle_in_slices(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A big session's first screen (its start, or its end on a reopen) waits
    only for the ends' estimates; the middle starts at their mean and, once
    settled, every height is what a full estimate gives."""
    monkeypatch.setattr(line_index, "BUILD_ESTIMATES", 10)
    index, sizer, items = _lines(LONG, 400)
    assert len(items) > 40
    index.build(items, WIDTH)
    full = [sizer(item, WIDTH) for item in items]
    ends = [*range(10), *range(len(items) - 10, len(items))]
    assert [index.heights[i] for i in ends] == [full[i] for i in ends]
    middle = range(10, len(items) - 10)
    assert all(index.measured[i] is PENDING for i in middle) and index.unsettled
    assert len({index.heights[i] for i in middle}) == 1  # the ends' mean
    _consistent(index)
    _draw(index, len(items) - 1)  # the first screen: drawn exactly, not estimated again
    while index.settle_some(deadline=0.0, clock=lambda: 1.0):
        pass
    index.set_heights(index.settled_heights())
    assert not index.unsettled
    assert index.heights[:-1] == full[:-1] and index.measured[-1] == DRAWN
    _consistent(index)
