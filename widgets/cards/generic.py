"""Any other tool: its input as JSON, then its result text."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.style import Style

from reducer.state import ToolCall
from reducer.tools import Raw
from reducer.views import input_json, result_text

from .base import BODY_INDENT, Palette, RenderContext, _Body, _count_lines

if TYPE_CHECKING:
    from reducer.session import Session


def _result_lines(body: _Body, call: ToolCall, p: Palette, *, style: Style | str = "") -> None:
    text = result_text(call)
    body.add_output(text, p.error if call.is_error else style)



def _input_shown(tool: Raw) -> bool:
    """Whether a Raw tool's input needs its own lines: not when it is empty or a
    single string argument the header already shows."""
    inp = tool.input
    if inp in (None, {}, []):
        return False
    if isinstance(inp, dict) and len(inp) == 1:
        value = next(iter(inp.values()))
        return not (isinstance(value, str) and "\n" not in value.strip()
                    and len(value.strip()) <= 80)
    return True


def _raw_body(call: ToolCall, tool: Raw, body: _Body, width: int, expanded: bool,
              ctx: RenderContext) -> None:
    """Input as JSON (one cropped line while collapsed, pretty when expanded), then the result."""
    p = ctx.palette
    if _input_shown(tool):
        compact = input_json(tool.input, 0)
        if not expanded or len(compact) <= width - BODY_INDENT:
            body.add(compact, p.muted)
        else:
            body.add_output(input_json(tool.input, 2), p.muted)
    if call.result is not None:
        _result_lines(body, call, p)


def _raw_rows(call: ToolCall, tool: Raw, width: int, expanded: bool, session: Session) -> int:
    rows = 0
    if _input_shown(tool):
        compact = input_json(tool.input, 0)
        if not expanded or len(compact) <= width - BODY_INDENT:
            rows += 1
        else:
            rows += _count_lines(input_json(tool.input, 2))
    if call.result is not None:
        rows += _count_lines(result_text(call))
    return rows

