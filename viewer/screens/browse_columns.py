"""The browser's columns: what each shows and sorts by, and which fit a width.

Columns come in priority order (the order they are drawn in): the live state
and the title, then what people browse for — last activity, cost, model,
prompts, tools — and last what the preview shows anyway (project, branch, size,
start). :func:`fit` keeps as many as the width holds from the top of that
order, the title taking what is left (down to :data:`TITLE_MIN`); a column the
list is sorted by is kept, dropping others in its stead. No Textual here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import time

from cctv.reducer.format import clip, compact_count, format_cost, format_duration, human_bytes, tilde, title_text
from cctv.reducer.live_state import HORIZON_S, LiveState
from cctv.widgets.home import home

from ..index import SessionRow
from ..index.rows import activity_order

__all__ = ["COLUMNS", "BY_KEY", "Column", "Fitted", "fit", "TITLE_MIN", "TITLE_MAX", "STATE_WIDTH",
           "short_project", "when", "live_state", "state_cell"]

TITLE_MIN = 24
"""The title's narrowest: below it, other columns go."""
TITLE_MAX = 72
"""The title's widest: past it, the room goes unused (a wide terminal)."""
CELL_PADDING = 2
"""Cells a column takes beside its width (the table's padding, one each side)."""
SCROLLBAR = 2
"""Cells the table's vertical scrollbar takes."""
STATE_WIDTH = 30
"""The widest the state column grows (it is one cell wide while no row is live)."""


def when(stamp: str | None) -> str:
    return stamp.replace("T", " ")[:16] if stamp else ""


def short_project(project: str) -> str:
    return tilde(project, home())


def cost_cell(r: SessionRow) -> str:
    """The session's cost (``~``: estimated from the tokens), else its tokens."""
    if r.cost_usd is not None:
        return ("" if r.cost_source == "recorded" else "~") + format_cost(r.cost_usd)
    return f"{compact_count(r.tokens_in + r.output_tokens)} tok"


def live_state(r: SessionRow, now: float) -> LiveState | None:
    """A row's live state, when it is live (written within the horizon and not ended)."""
    if now - r.mtime >= HORIZON_S:
        return None
    state = r.state(now)
    return state if state is not None and state.kind != "ended" else None


def state_cell(r: SessionRow, now: float) -> str:
    """``◆ needs you · 2m``, ``◐ working · Bash: npm test · 45s``; ``" "`` when not live."""
    state = live_state(r, now)
    return clip(f"{state.glyph} {state.label(now)}", STATE_WIDTH, one_line=True) if state else " "


def _state_order(r: SessionRow) -> tuple[int, float]:
    """Sorted by state: the live ones, attention first (a reversed sort), then the rest by time."""
    state = live_state(r, time.time())
    return (-state.rank[0], -state.rank[1]) if state is not None else (-99, r.mtime)


@dataclass(frozen=True, slots=True)
class Column:
    """One column of the list: its header, what it shows, how it sorts."""

    key: str
    label: str
    cell: Callable[[SessionRow, float], str]
    sort: Callable[[SessionRow], Any]
    width: int
    """In cells (the title's and the state's are :func:`fit`'s): the table measures no cell."""


COLUMNS: tuple[Column, ...] = (
    Column("live", "", state_cell, _state_order, 1),
    Column("title", "Title", lambda r, now: " ".join(title_text(r.title)[:400].split()),
           lambda r: title_text(r.title).lower(), TITLE_MIN),
    Column("last", "Last activity", lambda r, now: when(r.last_activity), activity_order, 16),
    Column("cost", "Cost/tokens", lambda r, now: cost_cell(r),
           lambda r: (r.cost_usd is not None, r.cost_usd or r.tokens_in + r.output_tokens), 11),
    Column("model", "Model", lambda r, now: (r.model or "").removeprefix("claude-"),
           lambda r: r.model or "", 17),
    Column("prompts", "Prompts", lambda r, now: str(r.prompts), lambda r: r.prompts, 7),
    Column("tools", "Tools", lambda r, now: str(r.tool_calls), lambda r: r.tool_calls, 6),
    Column("duration", "Duration", lambda r, now: format_duration(r.duration_s),
           lambda r: r.duration_s or 0.0, 8),
    Column("agents", "Agents", lambda r, now: str(r.subagents) if r.subagents else "",
           lambda r: r.subagents, 6),
    Column("project", "Project", lambda r, now: clip(short_project(r.project), 28, tail=True),
           lambda r: r.project.lower(), 28),
    Column("branch", "Branch", lambda r, now: clip(r.git_branch or "", 16, one_line=True),
           lambda r: r.git_branch or "", 16),
    Column("size", "Size", lambda r, now: human_bytes(r.bytes), lambda r: r.bytes, 10),
    Column("started", "Started", lambda r, now: when(r.started), lambda r: r.started or "", 16),
)
BY_KEY = {c.key: c for c in COLUMNS}


@dataclass(frozen=True, slots=True)
class Fitted:
    """The columns a width shows (in order, with their widths) and the ones it hides."""

    shown: tuple[tuple[Column, int], ...]
    hidden: tuple[Column, ...]

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(c.key for c, _ in self.shown)


def fit(width: int, sort_key: str | None = None, state_width: int = 1) -> Fitted:
    """The columns a list ``width`` cells wide shows: the live state
    (``state_width`` cells: its longest text) and the title always, then each
    next one in priority order while the title keeps :data:`TITLE_MIN` cells;
    the ``sort_key`` column in any case (the lowest others giving way, then the
    state's words, down to its glyph). The title takes the rest, up to
    :data:`TITLE_MAX`."""
    base = width - SCROLLBAR - TITLE_MIN - 2 * CELL_PADDING
    state_width = max(1, min(state_width, base))
    room = base - state_width
    fixed = [c for c in COLUMNS[2:]]
    kept: list[Column] = []
    for column in fixed:
        if column.width + CELL_PADDING > room:
            break
        kept.append(column)
        room -= column.width + CELL_PADDING
    sort = BY_KEY.get(sort_key or "")
    if sort is not None and sort in fixed and sort not in kept:
        room -= sort.width + CELL_PADDING
        while kept and room < 0:
            room += kept.pop().width + CELL_PADDING
        kept.append(sort)
        kept.sort(key=COLUMNS.index)
        if room < 0:  # the state's words give way to the sorted column
            state_width, room = max(1, state_width + room), 0
    title = TITLE_MIN + min(max(room, 0), TITLE_MAX - TITLE_MIN)
    shown = ((COLUMNS[0], state_width), (COLUMNS[1], title), *((c, c.width) for c in kept))
    return Fitted(shown, tuple(c for c in fixed if c not in kept))
