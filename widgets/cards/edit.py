"""The Edit and MultiEdit card: a line diff of each replacement."""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING

from rich.text import Text

from reducer.state import ToolCall
from reducer.tools import Edit, MultiEdit, edit_hunks
from reducer.views import result_text

from .base import Palette, RenderContext, _Body, _count_lines, clean
from .generic import _result_lines

if TYPE_CHECKING:
    from reducer.session import Session


def _diff(old: str, new: str, body: _Body, p: Palette) -> None:
    a, b = old.split("\n"), new.split("\n")
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            for line in a[i1:i2]:
                body.add(Text.assemble(("  ", p.muted), (clean(line), p.muted)))
            continue
        for line in a[i1:i2]:
            body.add(Text("- " + clean(line), p.diff_del))
        for line in b[j1:j2]:
            body.add(Text("+ " + clean(line), p.diff_add))


def _edit_body(call: ToolCall, tool: Edit | MultiEdit, body: _Body, ctx: RenderContext) -> None:
    p = ctx.palette
    for n, (old, new) in enumerate(edit_hunks(tool)):
        if n:
            body.add("⋯", p.muted)
        _diff(old, new, body, p)
    if call.is_error or call.status == "failed":
        _result_lines(body, call, p)


def _edit_rows(call: ToolCall, tool: Edit | MultiEdit, session: Session) -> int:
    hunks = edit_hunks(tool)
    rows = len(hunks) - 1 if hunks else 0
    for old, new in hunks:
        a, b = old.split("\n"), new.split("\n")
        matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
        common = sum(block.size for block in matcher.get_matching_blocks())
        rows += len(a) + len(b) - common
    if call.is_error or call.status == "failed":
        rows += _count_lines(result_text(call))
    return rows

