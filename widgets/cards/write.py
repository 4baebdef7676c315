"""The Write card: the new file's content, highlighted as its name says."""

from __future__ import annotations

import os
from functools import lru_cache
from typing import TYPE_CHECKING

from rich.style import Style
from rich.syntax import Syntax
from rich.text import Text

from reducer.state import ToolCall
from reducer.tools import Write
from reducer.views import result_text

from .base import FOLD_LINES, Palette, RenderContext, _Body, _count_lines, _no_bg, clean
from .generic import _result_lines

if TYPE_CHECKING:
    from reducer.session import Session


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


def _write_body(call: ToolCall, tool: Write, body: _Body, expanded: bool,
                ctx: RenderContext) -> None:
    content = tool.content.rstrip("\n")
    if content:
        lines = content.split("\n")
        # folded, only the rows on show are highlighted; the rest are only counted
        shown = lines if expanded or len(lines) <= FOLD_LINES + 1 else lines[:FOLD_LINES]
        body.lines.extend(_highlighted(shown, tool.file_path, ctx.palette))
        body.lines.extend(("", "") for _ in range(len(lines) - len(shown)))
    if call.is_error:
        _result_lines(body, call, ctx.palette)


def _write_rows(call: ToolCall, tool: Write, session: Session) -> int:
    n = _count_lines(tool.content)
    return n + (_count_lines(result_text(call)) if call.is_error else 0)

