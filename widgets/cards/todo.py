"""The TodoWrite card: the list with each entry's state."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.style import Style
from rich.text import Text

from reducer.state import ToolCall
from reducer.views import result_text, todos

from .base import TODO_GLYPHS, RenderContext, _Body, _count_lines, clean
from .generic import _result_lines

if TYPE_CHECKING:
    from reducer.session import Session


def _todo_body(call: ToolCall, body: _Body, ctx: RenderContext) -> None:
    p = ctx.palette
    for todo in todos(call.input):
        glyph = TODO_GLYPHS.get(todo.status, "☐")
        if todo.status == "completed":
            body.add(Text.assemble((glyph + " ", p.success), (clean(todo.content), p.muted)))
        elif todo.status == "in_progress":
            body.add(Text.assemble((glyph + " ", p.accent),
                                   (clean(todo.activeForm or todo.content), p.accent + Style(bold=True))))
        else:
            body.add(Text.assemble((glyph + " ", ""), clean(todo.content)))
    if call.is_error:
        _result_lines(body, call, p)


def _todo_rows(call: ToolCall, session: Session) -> int:
    return len(todos(call.input)) + (_count_lines(result_text(call)) if call.is_error else 0)

