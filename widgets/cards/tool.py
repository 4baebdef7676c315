"""The frame every tool card shares: the header (bullet, name, summary, status),
the body the call's :class:`~widgets.cards.card.ToolCard` fills, the denial line,
and the fold. The cards themselves live in :mod:`widgets.cards.tools`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.style import Style
from rich.text import Text
from textual.strip import Strip

from reducer.state import ToolCall, ToolItem
from reducer.views import canonical_tool

from . import tools as _tools  # noqa: F401  (registers every card)
from .base import (
    EXPAND_ROWS,
    STATUS_GLYPHS,
    Palette,
    RenderContext,
    _Body,
    _crop,
    _folded_height,
    _layout_body,
    clean,
    fmt_duration,
)
from .card import card_for

if TYPE_CHECKING:
    from reducer.session import Session


def _status(call: ToolCall, p: Palette) -> tuple[Text, Style]:
    """The right-hand status of a card and the colour of its bullet."""
    glyph = STATUS_GLYPHS.get(call.status, "?")
    status = call.status
    if call.awaiting_permission and not call.finished:
        return Text("⋯ awaiting permission", p.warning), p.warning
    if status == "running":
        text = Text(f"{glyph} running", p.accent)
        if call.elapsed is not None:
            text.append(f" {fmt_duration(call.elapsed)}", p.accent)
        if call.heartbeats:
            text.append(f" · {call.heartbeats} heartbeat{'s' if call.heartbeats != 1 else ''}",
                        p.muted)
        return text, p.accent
    took = call.duration if call.duration is not None else call.elapsed
    if status == "done":
        text = Text(glyph, p.success)
        if took is not None:
            text.append(f" {fmt_duration(took)}", p.muted)
        return text, p.success
    if status == "failed":
        text = Text(f"{glyph} failed", p.error)
        if took is not None:
            text.append(f" {fmt_duration(took)}", p.muted)
        return text, p.error
    if status == "denied":
        return Text(f"{glyph} denied", p.warning), p.warning
    if status == "interrupted":
        return Text(f"{glyph} interrupted", p.warning), p.warning
    return Text(f"{glyph} pending", p.muted), p.muted


def _header(call: ToolCall, name: str, summary: str, width: int, ctx: RenderContext) -> Strip:
    p = ctx.palette
    status, bullet = _status(call, p)
    if call.background and call.status in ("running", "pending"):
        # still running as a background task; once it ends the card shows how it ended
        status = Text("→ background", p.secondary)
    left = Text.assemble(("● ", bullet), (name, Style(bold=True)))
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
        body.add(f"⊘ {call.denied_reason or 'permission denied'}", p.warning)
    rows += _layout_body(body, width, expanded, card.fold, ctx)
    return rows


def _tool_h(item: ToolItem, width: int, expanded: bool, session: Session) -> int:
    call = item.call
    tool = canonical_tool(call)
    card = card_for(call, tool)
    n = card.rows(call, tool, width, expanded, session) + (call.status == "denied")
    if expanded:  # logical lines, at most a page: the view corrects it once drawn
        return 1 + min(n, EXPAND_ROWS * int(expanded) + 1)
    return 1 + _folded_height(n, card.fold)
