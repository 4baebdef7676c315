"""The transcript's search: the query, the items that match, where ``n`` / ``N`` go.

No Textual, no Rich. An item matches when the view shows it and its text
contains the query, case-insensitively (:func:`reducer.queries.contains_folded`:
a giant text is casefolded a window at a time, never copied whole). The rows
of an item that match are found in what it was drawn as, by the view
(:func:`widgets.search.matching_rows`).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Sequence

from cctv.reducer.state import Item
from cctv.reducer.queries import contains_folded, search_parts

__all__ = ["SearchState"]


class SearchState:
    """What is searched for, the indices of the items that match it (in order),
    and the row of the cursor's item that ``n`` / ``N`` stopped on."""

    __slots__ = ("text", "query", "matches", "match_set", "row")

    def __init__(self) -> None:
        self.text = ""
        """The query as typed (what the matching words are highlighted by)."""
        self.query = ""
        """The query casefolded (what items are matched by)."""
        self.matches: list[int] = []
        self.match_set: set[int] = set()
        self.row: int | None = None

    @property
    def active(self) -> bool:
        return bool(self.query)

    def set(self, text: str) -> None:
        """Search for ``text`` from now on (the matches are found by :meth:`find`)."""
        self.text = text
        self.query = text.casefold()
        self.row = None

    def clear_matches(self) -> None:
        self.matches, self.match_set = [], set()

    def matches_item(self, item: Item, accepts: Callable[[Item], bool]) -> bool:
        # No cache of the texts: it would double the memory a big session takes.
        return accepts(item) and contains_folded(search_parts(item), self.query)

    def find(self, items: Sequence[Item], accepts: Callable[[Item], bool]) -> None:
        """The matches among ``items`` (all of them, again)."""
        matches = [i for i, item in enumerate(items) if self.matches_item(item, accepts)]
        self.matches, self.match_set = matches, set(matches)

    def add(self, indices: Iterable[int], items: Sequence[Item],
            accepts: Callable[[Item], bool]) -> None:
        """Items appended at ``indices`` (past every match): the ones that match join."""
        for i in indices:
            if self.matches_item(items[i], accepts):
                self.matches.append(i)
                self.match_set.add(i)

    def recheck(self, index: int, item: Item, accepts: Callable[[Item], bool]) -> None:
        """Item ``index`` changed: it joins or leaves the matches."""
        hit = self.matches_item(item, accepts)
        if hit and index not in self.match_set:
            self.match_set.add(index)
            self.matches.append(index)
            self.matches.sort()
        elif not hit and index in self.match_set:
            self.match_set.discard(index)
            self.matches.remove(index)

    def first_from(self, cursor: int | None) -> int | None:
        """The first match at or after ``cursor`` (the first of all when none is)."""
        matches = self.matches
        if not matches:
            return None
        at = bisect.bisect_left(matches, cursor if cursor is not None else 0)
        return matches[at] if at < len(matches) else matches[0]

    def next_item(self, cursor: int | None, direction: int) -> int:
        """The next (``direction`` 1) or previous (-1) match from ``cursor``,
        wrapping around; there must be a match."""
        matches = self.matches
        if direction > 0:
            i = bisect.bisect_right(matches, -1 if cursor is None else cursor)
            return matches[i] if i < len(matches) else matches[0]
        i = bisect.bisect_left(matches, cursor) - 1 if cursor is not None else len(matches) - 1
        return matches[i] if i >= 0 else matches[-1]

    def next_row(self, rows: Sequence[int], direction: int) -> int | None:
        """Of the matching ``rows`` of the cursor's item, the next one after
        :attr:`row` in ``direction``; None at the last (or first) one."""
        here = self.row
        if here is None:
            return None
        if direction > 0:
            return next((r for r in rows if r > here), None)
        return next((r for r in reversed(rows) if r < here), None)
