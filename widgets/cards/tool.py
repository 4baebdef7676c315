"""The frame of a tool card: its status, its header line, and the dispatch to
the body of each tool family (:mod:`.bash`, :mod:`.edit`, …)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.style import Style
from rich.text import Text
from textual.strip import Strip

from reducer.session import SUBAGENT_TOOLS
from reducer.state import ToolCall, ToolItem
from reducer.tools import Bash, Command, Edit, MultiEdit, Raw, Read, Write, tool_from_use, tool_summary
from reducer.views import result_text

from .agent import _agent_body, _agent_rows
from .base import (
    FOLD_LINES,
    READ_FOLD_LINES,
    STATUS_GLYPHS,
    Palette,
    RenderContext,
    _Body,
    _count_lines,
    _crop,
    _folded_height,
    _layout_body,
    clean,
    fmt_duration,
)
from .bash import _bash_body, _bash_rows
from .edit import _edit_body, _edit_rows
from .generic import _raw_body, _raw_rows, _result_lines
from .read import _read_body, _read_rows
from .todo import _todo_body, _todo_rows
from .write import _write_body, _write_rows

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
    if status == "done":
        text = Text(glyph, p.success)
        if call.elapsed is not None:
            text.append(f" {fmt_duration(call.elapsed)}", p.muted)
        return text, p.success
    if status == "failed":
        text = Text(f"{glyph} failed", p.error)
        if call.elapsed is not None:
            text.append(f" {fmt_duration(call.elapsed)}", p.muted)
        return text, p.error
    if status == "denied":
        return Text(f"{glyph} denied", p.warning), p.warning
    if status == "interrupted":
        return Text(f"{glyph} interrupted", p.warning), p.warning
    return Text(f"{glyph} pending", p.muted), p.muted


def _header_summary(call: ToolCall, tool: object) -> tuple[str, str]:
    """(name, summary) for the header line."""
    summary = tool_summary(tool)  # type: ignore[arg-type]
    if isinstance(tool, Command):
        return summary, ""
    name = call.name
    for sep in (": ", " "):
        if summary.startswith(name + sep):
            return name, summary[len(name) + len(sep):]
    return name, "" if summary == name else summary


def _header(call: ToolCall, tool: object, width: int, ctx: RenderContext) -> Strip:
    p = ctx.palette
    status, bullet = _status(call, p)
    if call.background and call.status in ("running", "pending"):
        # still running as a background task; once it ends the card shows how it ended
        status = Text("→ background", p.secondary)
    name, summary = _header_summary(call, tool)
    left = Text.assemble(("● ", bullet), (name, Style(bold=True)))
    if isinstance(tool, Raw) and call.name in SUBAGENT_TOOLS and isinstance(call.input, dict):
        summary = str(call.input.get("description") or summary)
    if summary:
        left.append("  ")
        left.append(clean(summary))
    room = width - status.cell_len - 2
    if left.cell_len > room:
        left.truncate(max(room, 4), overflow="ellipsis")
    gap = max(width - left.cell_len - status.cell_len, 1)
    return _crop(Text.assemble(left, " " * gap, status), width, ctx.console)


def _tool_parts(call: ToolCall) -> tuple[object, str]:
    """The canonical tool and which body draws it."""
    tool = tool_from_use(call.name, call.input)
    if call.name in SUBAGENT_TOOLS or call.subagent:
        return tool, "agent"
    if call.name == "TodoWrite":
        return tool, "todo"
    match tool:
        case Bash():
            return tool, "bash"
        case Edit() | MultiEdit():
            return tool, "edit"
        case Read():
            return tool, "read"
        case Write():
            return tool, "write"
        case Command():
            return tool, "command"
    return tool, "raw"


def _tool(item: ToolItem, width: int, expanded: bool, ctx: RenderContext) -> list[Strip]:
    call = item.call
    tool, kind = _tool_parts(call)
    p = ctx.palette
    rows = [_header(call, tool, width, ctx)]
    body = _Body()
    fold: int | None = FOLD_LINES
    if kind == "bash":
        _bash_body(call, tool, body, ctx)  # type: ignore[arg-type]
    elif kind == "edit":
        _edit_body(call, tool, body, ctx)  # type: ignore[arg-type]
    elif kind == "read":
        _read_body(call, tool, body, ctx)  # type: ignore[arg-type]
        fold = READ_FOLD_LINES
    elif kind == "write":
        _write_body(call, tool, body, expanded, ctx)  # type: ignore[arg-type]
    elif kind == "todo":
        _todo_body(call, body, ctx)
    elif kind == "agent":
        _agent_body(call, body, ctx)
        fold = None
    elif kind == "command":
        if call.result is not None:
            _result_lines(body, call, p, style=p.muted)
    else:
        _raw_body(call, tool, body, width, expanded, ctx)  # type: ignore[arg-type]
    if call.status == "denied":
        body.add(f"⊘ {call.denied_reason or 'permission denied'}", p.warning)
    rows += _layout_body(body.lines, width, expanded, fold, ctx)
    return rows


def _tool_h(item: ToolItem, width: int, expanded: bool, session: Session) -> int:
    call = item.call
    tool, kind = _tool_parts(call)
    fold: int | None = FOLD_LINES
    if kind == "bash":
        n = _bash_rows(call, tool, session)  # type: ignore[arg-type]
    elif kind == "edit":
        n = _edit_rows(call, tool, session)  # type: ignore[arg-type]
    elif kind == "read":
        n = _read_rows(call, tool, session)  # type: ignore[arg-type]
        fold = READ_FOLD_LINES
    elif kind == "write":
        n = _write_rows(call, tool, session)  # type: ignore[arg-type]
    elif kind == "todo":
        n = _todo_rows(call, session)
    elif kind == "agent":
        n = _agent_rows(call, session)
        fold = None
    elif kind == "command":
        n = _count_lines(result_text(call)) if call.result is not None else 0
    else:
        n = _raw_rows(call, tool, width, expanded, session)  # type: ignore[arg-type]
    n += call.status == "denied"
    return 1 + (n if expanded else _folded_height(n, fold))

