"""The WebFetch card: the URL, the question asked of the page, the answer."""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec
from rich.text import Text

from cctv.reducer.format import human_bytes
from cctv.reducer.state import ToolCall
from cctv.reducer.tools import Tool
from cctv.reducer.queries import structured_result

from cctv.reducer.format import format_duration

from ..base import RenderContext, _Body, _count_lines, clean
from ..card import ToolCard, register

if TYPE_CHECKING:
    from cctv.reducer.fold import Session


class FetchResult(msgspec.Struct, gc=False):
    """The structured result of a ``WebFetch`` call."""

    url: str = ""
    code: int | None = None
    codeText: str = ""
    bytes: int | None = None
    durationMs: float | None = None
    result: str = ""


def _input(call: ToolCall) -> dict:
    return call.input if isinstance(call.input, dict) else {}


def _result(call: ToolCall) -> FetchResult | None:
    result = structured_result(call, FetchResult)
    return result if result is not None and (result.code is not None or result.result) else None


@register
class WebFetchCard(ToolCard):
    """Header ``WebFetch  https://…``; body: ``? prompt``, ``200 OK · 430 KB · 1.2s``, answer."""

    names = frozenset({"WebFetch"})

    def summary(self, call: ToolCall, tool: Tool) -> tuple[str, str]:
        url = _input(call).get("url")
        return (call.name, url) if isinstance(url, str) else super().summary(call, tool)

    def body(self, call: ToolCall, tool: Tool, body: _Body, width: int, expanded: bool,
             ctx: RenderContext) -> None:
        p = ctx.palette
        prompt = _input(call).get("prompt")
        if isinstance(prompt, str) and prompt.strip():
            body.add(Text.assemble(("? ", p.muted), (clean(" ".join(prompt.split())), p.muted)))
        result = _result(call)
        if result is None:
            super().body(call, tool, body, width, expanded, ctx)
            return
        parts = []
        if result.code is not None:
            parts.append(f"{result.code} {result.codeText}".strip())
        if result.bytes is not None:
            parts.append(human_bytes(result.bytes))
        if result.durationMs is not None:
            parts.append(format_duration(result.durationMs / 1000))
        ok = result.code is None or result.code < 400
        body.add(" · ".join(parts), p.muted if ok else p.error)
        body.add_output(result.result)

    def rows(self, call: ToolCall, tool: Tool, width: int, expanded: bool,
             session: Session) -> int:
        prompt = _input(call).get("prompt")
        rows = 1 if isinstance(prompt, str) and prompt.strip() else 0
        result = _result(call)
        if result is None:
            return rows + super().rows(call, tool, width, expanded, session)
        return rows + 1 + _count_lines(result.result)
