"""The Write card: the new file's content, highlighted as its name says."""

from __future__ import annotations

import os
from functools import lru_cache
from typing import TYPE_CHECKING

from rich.style import Style
from rich.syntax import Syntax
from rich.text import Text

from cctv.reducer.state import ToolCall
from cctv.reducer.tools import Tool, Write

from ..base import EXPAND_LINES, FOLD_LINES, Palette, RenderContext, _Body, _count_lines, _no_bg, clean
from ..card import ToolCard, register, result_lines

if TYPE_CHECKING:
    from cctv.reducer.fold import Session


@lru_cache(maxsize=1)
def _lexers_by_name() -> dict[str, str]:
    """File name patterns (``*.py``, ``Makefile``) → a Pygments lexer alias, from
    Pygments' own table: no lexer module is imported and no plugin looked up."""
    from pygments.lexers import get_all_lexers

    table: dict[str, str] = {}
    for _name, aliases, patterns, _mimes in get_all_lexers(plugins=False):
        if not aliases:
            continue
        for pattern in patterns:
            table.setdefault(pattern.lower(), aliases[0])
    return table


@lru_cache(maxsize=512)
def _lexer(path: str) -> str:
    """The lexer alias for a file, by its name alone (``text`` when unknown)."""
    name = os.path.basename(path).lower()
    table = _lexers_by_name()
    if name in table:
        return table[name]
    _, ext = os.path.splitext(name)
    return table.get("*" + ext, "text") if ext else "text"


def _highlighted(lines: list[str], path: str, p: Palette) -> list[Text]:
    """``lines`` of a file, highlighted as its extension says, on no background."""
    syntax = Syntax("", _lexer(path), theme=p.code_theme)
    text = syntax.highlight(clean("\n".join(lines)))
    text.style = ""
    text.spans = [type(span)(span.start, span.end, _no_bg(span.style))
                  if isinstance(span.style, Style) else span for span in text.spans]
    out = text.split("\n", allow_blank=True)[: len(lines)]
    return out + [Text("") for _ in range(len(lines) - len(out))]


@register
class WriteCard(ToolCard):
    """The new content, highlighted (only the lines on show are highlighted)."""

    def claims(self, call: ToolCall, tool: Tool) -> bool:
        return isinstance(tool, Write)

    def body(self, call: ToolCall, tool: Tool, body: _Body, width: int, expanded: bool,
             ctx: RenderContext) -> None:
        assert isinstance(tool, Write)
        content = tool.content.rstrip("\n")
        if content:
            lines = content.split("\n")
            limit = EXPAND_LINES if expanded else FOLD_LINES
            shown = lines if len(lines) <= limit + 1 else lines[:limit]
            body.extend(_highlighted(shown, tool.file_path, ctx.palette))
            body.extend(("", "") for _ in range(len(lines) - len(shown)))
        if call.is_error:
            result_lines(body, call, ctx.palette)

    def rows(self, call: ToolCall, tool: Tool, width: int, expanded: bool,
             session: Session) -> int:
        assert isinstance(tool, Write)
        n = _count_lines(tool.content)
        return n + (super().rows(call, tool, width, expanded, session) if call.is_error else 0)
