"""The transcript's search, follow, expansion and navigation state without
Textual, on the items real recordings fold to."""

from __future__ import annotations

import pytest

from cctv.reducer.filters import ViewFilter
from cctv.reducer.item_time import ItemTimes
from cctv.reducer.state import HookItem, Item, ToolItem
from cctv.reducer.queries import is_error_item, is_turn_start, search_text
from cctv.widgets.transcript.expansion import Expansion
from cctv.widgets.transcript.follow_state import FollowState
from cctv.widgets.transcript.line_index import not_hidden
from cctv.widgets.transcript.navigation import (
    first_at_or_after,
    is_call,
    is_error,
    nearest_shown,
    next_index,
    starts_turn,
)
from cctv.widgets.transcript.search_state import SearchState
from conftest import FIXTURES, fold_file, fold_until

LONG = (FIXTURES / "public" / "claude-code-log" / "real_projects" / "-experiments-worktrees"
        / "ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl")
HOOKS = FIXTURES / "captures" / "stream" / "07_hooks.jsonl"
NO_HOOKS = ViewFilter(hidden=frozenset({"hooks"})).accepts


def _items(path=LONG) -> list[Item]:
    return list(fold_file(path).session.main.items)


# --- search ---------------------------------------------------------------------------------


@pytest.mark.parametrize("query", ["Octopus", "worktree", "git "])
@pytest.mark.parametrize("accepts", [not_hidden, NO_HOOKS], ids=["all", "no-hooks"])
def test_the_matches_are_the_shown_items_whose_text_holds_the_query(query, accepts) -> None:
    items = _items()
    search = SearchState()
    search.set(query.upper())
    assert search.active and search.text == query.upper() and search.query == query.casefold()
    search.find(items, accepts)
    naive = [i for i, item in enumerate(items)
             if accepts(item) and query.casefold() in search_text(item).casefold()]
    assert search.matches == naive and search.match_set == set(naive) and naive
    # appended items and changed items join (and leave) in order
    grown = SearchState()
    grown.set(query)
    grown.find(items[:20], accepts)
    grown.add(range(20, len(items)), items, accepts)
    assert grown.matches == naive
    grown.recheck(naive[0], items[naive[0]], lambda item: False)  # now hidden: it leaves
    assert grown.matches == naive[1:] and naive[0] not in grown.match_set
    grown.recheck(naive[0], items[naive[0]], accepts)  # shown again: back in its place
    assert grown.matches == naive


def test_n_and_N_go_round_the_matches() -> None:
    search = SearchState()
    search.set("git ")
    search.find(_items(), not_hidden)
    matches = search.matches
    assert len(matches) >= 3
    assert search.first_from(None) == matches[0]
    assert search.first_from(matches[1]) == matches[1]
    assert search.first_from(matches[1] + 1) == matches[2]
    assert search.first_from(matches[-1] + 1) == matches[0]  # none after: the first
    assert search.next_item(None, 1) == matches[0] and search.next_item(None, -1) == matches[-1]
    assert search.next_item(matches[0], 1) == matches[1]
    assert search.next_item(matches[-1], 1) == matches[0]  # wraps
    assert search.next_item(matches[0], -1) == matches[-1]
    assert search.next_item(matches[1] + 1, -1) == matches[1]
    # inside an item: from the row it is on to the next matching row, none past the last
    search.row = None
    assert search.next_row([2, 5, 9], 1) is None
    search.row = 5
    assert (search.next_row([2, 5, 9], 1), search.next_row([2, 5, 9], -1)) == (9, 2)
    search.row = 9
    assert search.next_row([2, 5, 9], 1) is None
    search.set("")
    assert not search.active and search.row is None


# --- following the end ----------------------------------------------------------------------


def test_only_the_users_scrolls_start_or_stop_following() -> None:
    follow = FollowState()
    assert follow.after_scroll(True, 100, 40, end=100) is False  # scrolled up: stop
    assert follow.after_scroll(False, 40, 100, end=100) is True  # back to the end: follow
    assert follow.after_scroll(False, 40, 60, end=100) is False  # down, not to the end
    assert follow.after_scroll(True, 40, 60, end=100) is True
    assert follow.after_scroll(False, 99.6, 99.6, end=100) is True  # rounded: at the end
    with follow.own_scroll():
        assert follow.after_scroll(True, 100, 40, end=100) is True  # the view's own: nothing
        with follow.own_scroll():
            assert follow.after_scroll(False, 40, 100, end=100) is False
        assert follow.after_scroll(False, 40, 100, end=100) is False  # still its own
    assert follow.after_scroll(True, 100, 40, end=100) is False


# --- expansion ------------------------------------------------------------------------------


def test_expansion_levels_and_reopening_in_another_state() -> None:
    end = fold_until(LONG, 180).main.items
    expansion = Expansion()
    expansion.toggle(end[5])
    expansion.toggle(end[35])
    expansion.more(end[35])
    expansion.more(end[35])
    assert [expansion.level(end[i]) for i in (4, 5, 35)] == [0, 1, 3]
    assert end[5] in expansion and end[4] not in expansion
    opened = expansion.opened()
    assert opened == {(5, end[5].line_no): 1, (35, end[35].line_no): 3}
    expansion.toggle(end[5])
    assert expansion.level(end[5]) == 0 and list(expansion) == [end[35]]
    # another state: other objects at the same places (and one item not there yet)
    early = fold_until(LONG, 30).main.items
    assert len(early) <= 35
    expansion.reopen(early, opened)
    assert list(expansion) == [early[5]] and expansion.level(early[5]) == 1
    expansion.reopen(early, {(5, early[5].line_no + 1): 1})  # another line: not that item
    assert not list(expansion)


# --- navigation -----------------------------------------------------------------------------


def _naive_next(items, start, direction, accepts, wanted):
    i = start + direction
    while 0 <= i < len(items):
        if accepts(items[i]) and wanted(i):
            return i
        i += direction
    return None


@pytest.mark.parametrize("accepts", [not_hidden, NO_HOOKS], ids=["all", "no-hooks"])
def test_jumps_stop_where_the_user_looks_for_them(accepts) -> None:
    items = _items()
    shown = [i for i, item in enumerate(items) if accepts(item)]

    def turn(i: int) -> bool:
        previous = max((j for j in shown if j < i), default=None)
        return is_turn_start(items[i], items[previous] if previous is not None else None)

    wanted = {
        starts_turn: turn,
        is_error: lambda i: is_error_item(items[i]),
        is_call: lambda i: isinstance(items[i], ToolItem),
        None: lambda i: True,
    }
    stops = 0
    for stop, naive in wanted.items():
        for start in range(-1, len(items) + 1):
            for direction in (1, -1):
                found = next_index(items, start, direction, accepts, stop)
                assert found == _naive_next(items, start, direction, accepts, naive)
                stops += found is not None
    assert stops
    hooks = [i for i, item in enumerate(items) if isinstance(item, HookItem)]
    assert nearest_shown(items, hooks[0], NO_HOOKS) == next(
        i for i in range(hooks[0], len(items)) if NO_HOOKS(items[i]))
    assert nearest_shown(items, len(items) - 1, lambda item: item is items[3]) == 3
    assert nearest_shown(items, 0, lambda item: False) is None


def test_the_first_item_at_a_time_is_found_by_bisection() -> None:
    feed = fold_file(LONG)
    items = list(feed.session.main.items)
    time_of = ItemTimes(feed).of
    times = [time_of(item) for item in items]
    known = [t for t in times if t is not None]
    assert len(known) > 10
    for when in [known[0] - 1, *known, (known[3] + known[4]) / 2, known[-1] + 1]:
        naive = next((i for i, t in enumerate(times) if t is not None and t >= when), len(items))
        found = first_at_or_after(items, when, time_of)
        # items with no time before the first one that late are passed over
        assert found <= naive and all(times[i] is None for i in range(found, naive))
