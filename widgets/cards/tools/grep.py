"""The Grep card: what was searched where, then the matching files or lines."""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec
from rich.text import Text

from cctv.reducer.format import plural
from cctv.reducer.state import ToolCall
from cctv.reducer.tools import Tool
from cctv.reducer.queries import structured_result

from ..base import RenderContext, _Body, _count_lines, clean
from ..card import ToolCard, register

if TYPE_CHECKING:
    from cctv.reducer.fold import Session


class GrepResult(msgspec.Struct, gc=False):
    """The structured result of a ``Grep`` call."""

    mode: str = ""
    filenames: list[str] = []
    numFiles: int | None = None
    content: str = ""
    numLines: int | None = None
    numMatches: int | None = None


def _input(call: ToolCall) -> dict:
    return call.input if isinstance(call.input, dict) else {}


def _flags(inp: dict) -> str:
    """``-i -n glob *.py type py`` — the options that change what matched."""
    parts = [key for key in ("-i", "-n", "multiline") if inp.get(key) is True]
    for key in ("glob", "type"):
        if isinstance(inp.get(key), str):
            parts.append(f"{key} {inp[key]}")
    for key in ("-A", "-B", "-C", "head_limit"):
        if isinstance(inp.get(key), int) and not isinstance(inp.get(key), bool):
            parts.append(f"{key} {inp[key]}")
    return " ".join(parts)


def _result(call: ToolCall) -> GrepResult | None:
    result = structured_result(call, GrepResult)
    return result if result is not None and result.mode else None


def _count_line(result: GrepResult) -> str:
    files = result.numFiles if result.numFiles is not None else len(result.filenames)
    if result.mode == "files_with_matches":
        return plural(files, "file", grouped=True)
    lines = result.numLines if result.numLines is not None else _count_lines(result.content)
    return plural(lines, "line", grouped=True)


@register
class GrepCard(ToolCard):
    """Header ``Grep  /pattern/ in path``; body: the options, then what matched."""

    names = frozenset({"Grep"})

    def summary(self, call: ToolCall, tool: Tool) -> tuple[str, str]:
        inp = _input(call)
        pattern, path = inp.get("pattern"), inp.get("path")
        if not isinstance(pattern, str):
            return super().summary(call, tool)
        summary = f"/{pattern}/"
        if isinstance(path, str) and path:
            summary += f" in {path}"
        return call.name, summary

    def body(self, call: ToolCall, tool: Tool, body: _Body, width: int, expanded: bool,
             ctx: RenderContext) -> None:
        p = ctx.palette
        flags = _flags(_input(call))
        result = _result(call) if not call.is_error else None
        if flags or result is not None:
            line = Text(clean(flags), p.muted)
            if result is not None:
                line.append((" · " if flags else "") + _count_line(result), p.muted)
            body.add(line)
        if result is None:
            super().body(call, tool, body, width, expanded, ctx)
        elif result.mode == "files_with_matches":
            for name in result.filenames:
                body.add(name)
        else:
            body.add_output(result.content)

    def rows(self, call: ToolCall, tool: Tool, width: int, expanded: bool,
             session: Session) -> int:
        result = _result(call) if not call.is_error else None
        head = 1 if _flags(_input(call)) or result is not None else 0
        if result is None:
            return head + super().rows(call, tool, width, expanded, session)
        if result.mode == "files_with_matches":
            return head + len(result.filenames)
        return head + _count_lines(result.content)
