"""The Edit and MultiEdit card: a line diff of each replacement."""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING

from rich.text import Text

from cctv.reducer.state import ToolCall
from cctv.reducer.tools import Edit, MultiEdit, Tool, edit_hunks

from ..base import Palette, RenderContext, _Body, clean
from ..card import ToolCard, register, result_lines

if TYPE_CHECKING:
    from cctv.reducer.fold import Session

DIFF_LIMIT = 4_000_000
"""Above this many line pairs an edit is shown as its changed block (common lines
trimmed at both ends) instead of a full diff, which would take seconds."""


TRIM_LIMIT = 64
"""Up to this many lines the estimate leaves out the lines an edit keeps at either
end (exact for a one-block edit); a bigger edit is counted whole, an upper bound."""


def _trim(a: list[str], b: list[str]) -> tuple[int, int]:
    """How many lines ``a`` and ``b`` share at their start and (after that) at their end."""
    head = 0
    limit = min(len(a), len(b))
    while head < limit and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < limit - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    return head, tail


def _opcodes(a: list[str], b: list[str]) -> list[tuple[str, int, int, int, int]]:
    if len(a) * len(b) <= DIFF_LIMIT:
        return difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
    head, tail = _trim(a, b)
    ops = [("equal", 0, head, 0, head), ("replace", head, len(a) - tail, head, len(b) - tail),
           ("equal", len(a) - tail, len(a), len(b) - tail, len(b))]
    return [op for op in ops if op[1] < op[2] or op[3] < op[4]]


def _diff(old: str, new: str, body: _Body, p: Palette) -> None:
    a, b = old.split("\n"), new.split("\n")
    for op, i1, i2, j1, j2 in _opcodes(a, b):
        if op == "equal":
            for line in a[i1:i2]:
                body.add(Text.assemble(("  ", p.muted), (clean(line), p.muted)))
            continue
        for line in a[i1:i2]:
            body.add(Text("- " + clean(line), p.diff_del))
        for line in b[j1:j2]:
            body.add(Text("+ " + clean(line), p.diff_add))


@register
class EditCard(ToolCard):
    """Each replacement as ``-``/``+`` lines with the unchanged lines between."""

    def claims(self, call: ToolCall, tool: Tool) -> bool:
        return isinstance(tool, (Edit, MultiEdit))

    def body(self, call: ToolCall, tool: Tool, body: _Body, width: int, expanded: bool,
             ctx: RenderContext) -> None:
        p = ctx.palette
        for n, (old, new) in enumerate(edit_hunks(tool)):
            if n:
                body.add("⋯", p.muted)
            _diff(old, new, body, p)
        if call.is_error or call.status == "failed":
            result_lines(body, call, p)

    def rows(self, call: ToolCall, tool: Tool, width: int, expanded: bool,
             session: Session) -> int:
        """Lines of both sides less the lines they share at either end: exact for an
        edit that changes one block, an upper bound otherwise (no diff is run)."""
        hunks = edit_hunks(tool)
        rows = len(hunks) - 1 if hunks else 0
        for old, new in hunks:
            lines = old.count("\n") + new.count("\n") + 2
            if lines > TRIM_LIMIT:  # folded it shows its first rows anyway
                rows += lines
                continue
            a, b = old.split("\n"), new.split("\n")
            head, tail = _trim(a, b)
            rows += lines - head - tail
        if call.is_error or call.status == "failed":
            rows += super().rows(call, tool, width, expanded, session)
        return rows
