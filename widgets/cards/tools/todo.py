"""The TodoWrite card: the list with each entry's state."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.style import Style
from rich.text import Text

from cctv.reducer.state import ToolCall
from cctv.reducer.tools import Tool
from cctv.reducer.queries import todos

from ...status_glyphs import TODO_GLYPHS
from ..base import RenderContext, _Body, clean
from ..card import ToolCard, register, result_lines

if TYPE_CHECKING:
    from cctv.reducer.fold import Session


@register
class TodoCard(ToolCard):
    """One line per todo: ☑ done (muted), ◐ in progress (its active form), ☐ pending."""

    names = frozenset({"TodoWrite"})
    priority = 10  # before the cards that look at the input's shape

    def body(self, call: ToolCall, tool: Tool, body: _Body, width: int, expanded: bool,
             ctx: RenderContext) -> None:
        p = ctx.palette
        for todo in todos(call.input):
            glyph = TODO_GLYPHS.get(todo.status, "☐")
            if todo.status == "completed":
                body.add(Text.assemble((glyph + " ", p.success), (clean(todo.content), p.muted)))
            elif todo.status == "in_progress":
                body.add(Text.assemble((glyph + " ", p.accent),
                                       (clean(todo.activeForm or todo.content),
                                        p.accent + Style(bold=True))))
            else:
                body.add(Text.assemble((glyph + " ", ""), clean(todo.content)))
        if call.is_error:
            result_lines(body, call, p)

    def rows(self, call: ToolCall, tool: Tool, width: int, expanded: bool,
             session: Session) -> int:
        errors = super().rows(call, tool, width, expanded, session) if call.is_error else 0
        return len(todos(call.input)) + errors
