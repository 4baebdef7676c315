"""Search highlighting: the matching words inside a drawn row.

The transcript finds matching *items* with :func:`reducer.queries.contains_folded`;
these helpers find the matches inside the rows an item was drawn as, so the
words themselves are highlighted and ``n`` / ``N`` can step from one matching
row to the next inside a long item. Matching is case-insensitive on the text
of one row (a match broken across a wrapped row is not highlighted).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip

__all__ = ["match_spans", "matching_rows", "highlight_matches"]


@lru_cache(maxsize=16)
def _pattern(query: str) -> re.Pattern[str]:
    return re.compile(re.escape(query), re.IGNORECASE)


def match_spans(text: str, query: str) -> list[tuple[int, int]]:
    """``(start, end)`` character spans of ``query`` in ``text``, case-insensitive,
    not overlapping."""
    if not query:
        return []
    return [m.span() for m in _pattern(query).finditer(text)]


def matching_rows(strips: Sequence[Strip], query: str) -> list[int]:
    """Indexes of the rows whose text contains ``query``."""
    if not query:
        return []
    pattern = _pattern(query)
    return [i for i, strip in enumerate(strips) if pattern.search(strip.text)]


def _cells(text: str, index: int) -> int:
    """Cell offset of character ``index`` of ``text``."""
    prefix = text[:index]
    return len(prefix) if prefix.isascii() else cell_len(prefix)


def highlight_matches(strip: Strip, query: str, style: Style) -> Strip:
    """``strip`` with every occurrence of ``query`` drawn in ``style`` (laid over
    the row's own colours)."""
    text = strip.text
    spans = match_spans(text, query)
    if not spans:
        return strip
    length = strip.cell_length
    cuts: list[int] = []
    for start, end in spans:
        cuts += (_cells(text, start), _cells(text, end))
    cuts.append(length)
    pieces = strip.divide(cuts)
    out: list[Strip] = []
    for n, piece in enumerate(pieces):
        if n % 2 == 1 and n < len(cuts) - 1:  # the pieces between a start and an end cut
            piece = Strip(list(Segment.apply_style(list(piece), post_style=style)),
                          piece.cell_length)
        out.append(piece)
    return Strip.join(out)
