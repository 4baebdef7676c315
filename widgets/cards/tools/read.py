"""The Read card: the line window that was read, numbered."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text

from cctv.reducer.state import ToolCall
from cctv.reducer.tools import Read, Tool
from cctv.reducer.queries import read_result

from ..base import READ_FOLD_LINES, RenderContext, _Body, _count_lines, _lines, clean
from ..card import ToolCard, register, result_lines, shown_result

if TYPE_CHECKING:
    from cctv.reducer.fold import Session


@register
class ReadCard(ToolCard):
    """``lines 10–60 of 200``, then the numbered lines."""

    fold = READ_FOLD_LINES

    def claims(self, call: ToolCall, tool: Tool) -> bool:
        return isinstance(tool, Read)

    def body(self, call: ToolCall, tool: Tool, body: _Body, width: int, expanded: bool,
             ctx: RenderContext) -> None:
        p = ctx.palette
        read = read_result(call)
        if read is not None and read.file is not None:
            f = read.file
            start = f.startLine or 1
            num = f.numLines if f.numLines is not None else _count_lines(f.content)
            span = Text(f"lines {start}–{start + max(num, 1) - 1}", p.muted)
            if f.totalLines is not None:
                span.append(f" of {f.totalLines}", p.muted)
            body.add(span)
            for i, line in enumerate(_lines(f.content)):
                body.add(Text.assemble((f"{start + i:>4} ", p.muted), clean(line)))
            return
        if call.result is not None and not call.is_error:
            for line in _lines(shown_result(call)):
                number, tab, rest = line.partition("\t")
                if tab and number.strip().isdigit():  # the CLI's `cat -n` form
                    body.add(Text.assemble((f"{number.strip():>4} ", p.muted), clean(rest)))
                else:
                    body.add(line)
        elif call.result is not None:
            result_lines(body, call, p)

    def rows(self, call: ToolCall, tool: Tool, width: int, expanded: bool,
             session: Session) -> int:
        read = read_result(call)
        if read is not None and read.file is not None:
            return 1 + _count_lines(read.file.content)
        return super().rows(call, tool, width, expanded, session)
