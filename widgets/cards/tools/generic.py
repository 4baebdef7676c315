"""Any other tool: its input as JSON, then its result text; and slash commands."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cctv.reducer.state import ToolCall
from cctv.reducer.tools import Command, Raw, Tool, tool_summary
from cctv.reducer.queries import input_json

from ..base import BODY_INDENT, RenderContext, _Body
from ..card import ToolCard, register, result_lines

if TYPE_CHECKING:
    from cctv.reducer.fold import Session


def _input_shown(tool: Tool) -> bool:
    """Whether a tool's input needs its own lines: not when it is empty or a
    single string argument the header already shows."""
    inp = tool.input if isinstance(tool, Raw) else None
    if inp in (None, {}, []):
        return False
    if isinstance(inp, dict) and len(inp) == 1:
        value = next(iter(inp.values()))
        return not (isinstance(value, str) and "\n" not in value.strip()
                    and len(value.strip()) <= 80)
    return True


@register
class GenericCard(ToolCard):
    """The input as JSON (one cropped line while collapsed, pretty when expanded and
    wider than the card), then the result. Claims every call no other card claims."""

    priority = -100

    def claims(self, call: ToolCall, tool: Tool) -> bool:
        return True

    def body(self, call: ToolCall, tool: Tool, body: _Body, width: int, expanded: bool,
             ctx: RenderContext) -> None:
        p = ctx.palette
        if _input_shown(tool):
            assert isinstance(tool, Raw)
            compact = input_json(tool.input, 0)
            if not expanded or len(compact) <= width - BODY_INDENT:
                body.add(compact, p.muted)
            else:
                body.add_output(input_json(tool.input, 2), p.muted)
        super().body(call, tool, body, width, expanded, ctx)

    def rows(self, call: ToolCall, tool: Tool, width: int, expanded: bool,
             session: Session) -> int:
        rows = 0
        if _input_shown(tool):
            assert isinstance(tool, Raw)
            compact = input_json(tool.input, 0)
            if not expanded or len(compact) <= width - BODY_INDENT:
                rows += 1
            else:
                rows += input_json(tool.input, 2).rstrip("\n").count("\n") + 1
        return rows + super().rows(call, tool, width, expanded, session)


@register
class CommandCard(ToolCard):
    """A slash command run at the harness: ``/compact`` in the header, its output muted."""

    def claims(self, call: ToolCall, tool: Tool) -> bool:
        return isinstance(tool, Command)

    def summary(self, call: ToolCall, tool: Tool) -> tuple[str, str]:
        return tool_summary(tool), ""

    def body(self, call: ToolCall, tool: Tool, body: _Body, width: int, expanded: bool,
             ctx: RenderContext) -> None:
        if call.result is not None:
            result_lines(body, call, ctx.palette, style=ctx.palette.muted)
