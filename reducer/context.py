"""How full the model's context was, turn by turn: each turn's context size
(what its last request sent: input, cache reads and cache writes) and its
share of the model's window, with the compactions between them.

Pure: no I/O. The window comes from the CLI (``modelUsage``'s
``contextWindow``) or, failing that, from the price table's model facts
(:func:`reducer.pricing.context_window`, which reads the table).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from . import pricing
from .state import MAIN

if TYPE_CHECKING:
    from .fold import Session

__all__ = ["ContextPoint", "context_series", "context_window", "spark"]


class ContextPoint(NamedTuple):
    """One main-loop turn's context."""

    turn: int
    """The turn (``Turn.index``)."""
    tokens: int
    """What its last request sent: input, cache reads and cache writes."""
    share: float | None
    """``tokens`` over the model's window (``None``: the window is unknown)."""
    compacted: bool
    """A compaction came since the point before (the context was summarised)."""


def context_window(session: Session) -> int | None:
    """The session's model's context window in tokens, ``None`` if unknown."""
    if session.context_window:
        return session.context_window
    return pricing.context_window(session.model) if session.model else None


def context_series(session: Session, window: int | None) -> list[ContextPoint]:
    """A point per main-loop turn that made a request, in order."""
    last: dict[int, int] = {}
    compacted: set[int] = set()
    for r in session.requests.values():
        if r.agent == MAIN and r.turn >= 0:
            last[r.turn] = r.tokens.total_input
            if r.after_compaction:
                compacted.add(r.turn)
    return [ContextPoint(turn, tokens, tokens / window if window else None, turn in compacted)
            for turn, tokens in last.items()]


_BARS = "▁▂▃▄▅▆▇█"


def spark(values: list[int], marks: list[bool], width: int) -> tuple[str, str]:
    """``values`` as a line of at most ``width`` bars (several values to a bar,
    its highest, when there are more), and the line under it with ``▲`` under
    each bar holding a marked value (a turn after a compaction)."""
    if not values or width <= 0:
        return "", ""
    per = -(-len(values) // width)  # values to a bar
    bars = [max(values[i:i + per]) for i in range(0, len(values), per)]
    under = ["▲" if any(marks[i:i + per]) else " " for i in range(0, len(values), per)]
    high = max(bars) or 1
    line = "".join(_BARS[round(v / high * (len(_BARS) - 1))] for v in bars)
    return line, "".join(under).rstrip()
