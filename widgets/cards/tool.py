"""The frame every tool card shares: the header (bullet, name, summary, status),
the body the call's :class:`~widgets.cards.card.ToolCard` fills, the denial line,
and the fold. The cards themselves live in :mod:`widgets.cards.tools`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.style import Style
from rich.text import Text
from textual.strip import Strip

from cctv.reducer.state import ToolCall, ToolItem
from cctv.reducer.facts import call_duration
from cctv.reducer.format import format_duration, plural
from cctv.reducer.queries import canonical_tool

from ..status_glyphs import BACKGROUND, STATUSES

from . import tools as _tools  # noqa: F401  (registers every card)
from .base import (
    EXPAND_ROWS,
    Palette,
    RenderContext,
    _Body,
    _count_lines,
    _crop,
    _folded_height,
    _layout_body,
    clean,
)
from .card import card_for, denial

if TYPE_CHECKING:
    from cctv.reducer.fold import Session


def _status(call: ToolCall, p: Palette) -> tuple[Text, Style]:
    """The right-hand status of a card and the colour of its bullet."""
    if call.awaiting_permission and not call.finished:
        return Text("⋯ awaiting permission", p.warning), p.warning
    key = call.status
    st, style = STATUSES[key], getattr(p, STATUSES[key].role)
    # a finished call says only its glyph and time; every other status says its word
    text = Text(st.glyph if key == "done" else f"{st.glyph} {st.word}", style)
    took = call_duration(call)
    if took is not None and key in ("running", "done", "failed"):
        text.append(f" {format_duration(took)}", style if key == "running" else p.muted)
    if key == "running" and call.heartbeats:
        text.append(f" · {plural(call.heartbeats, 'heartbeat')}",
                    p.muted)
    return text, style


def _header(call: ToolCall, name: str, summary: str, width: int, ctx: RenderContext) -> Strip:
    p = ctx.palette
    status, bullet = _status(call, p)
    if call.background and call.status in ("running", "pending"):
        # still running as a background task; once it ends the card shows how it ended
        status = Text(f"{BACKGROUND.glyph} {BACKGROUND.word}", p.secondary)
    left = Text.assemble(("● ", bullet), (clean(name), Style(bold=True)))
    if summary:
        left.append("  ")
        left.append(clean(summary))
    room = width - status.cell_len - 2
    if left.cell_len > room:
        left.truncate(max(room, 4), overflow="ellipsis")
    gap = max(width - left.cell_len - status.cell_len, 1)
    return _crop(Text.assemble(left, " " * gap, status), width, ctx.console)


def _tool(item: ToolItem, width: int, expanded: bool | int, ctx: RenderContext) -> list[Strip]:
    call = item.call
    tool = canonical_tool(call)
    card = card_for(call, tool)
    p = ctx.palette
    name, summary = card.summary(call, tool)
    rows = [_header(call, name, summary, width, ctx)]
    body = _Body()
    card.body(call, tool, body, width, expanded, ctx)
    if call.status == "denied":
        body.add_output(denial(call), p.warning)
    rows += _layout_body(body, width, expanded, card.fold, ctx)
    return rows


def _tool_h(item: ToolItem, width: int, expanded: bool, session: Session) -> int:
    call = item.call
    tool = canonical_tool(call)
    card = card_for(call, tool)
    n = card.rows(call, tool, width, expanded, session)
    if call.status == "denied":
        n += _count_lines(denial(call))
    if expanded:  # logical lines, at most a page: the view corrects it once drawn
        return 1 + min(n, EXPAND_ROWS * int(expanded) + 1)
    return 1 + _folded_height(n, card.fold)
