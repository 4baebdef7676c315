"""The Bash card: the command, then stdout and stderr (or its background task)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text

from cctv.reducer.state import ToolCall
from cctv.reducer.tools import Bash, Tool
from cctv.reducer.queries import BashResult, bash_result

from ...status_glyphs import BACKGROUND, STATUSES, normalise
from ..base import RenderContext, _Body, _count_lines, _lines, clean
from ..card import ToolCard, register, result_lines

if TYPE_CHECKING:
    from cctv.reducer.fold import Session


def _background(call: ToolCall, bash: BashResult | None) -> tuple[bool, str | None]:
    """Whether the command went to the background, and its task id when known."""
    task_id = call.task_id if call.background else None
    if bash is not None and bash.backgroundTaskId:
        task_id = bash.backgroundTaskId
    return bool(task_id) or (call.background and call.status != "failed"), task_id


@register
class BashCard(ToolCard):
    """``$ command``, then the output; a background command shows its task instead."""

    def claims(self, call: ToolCall, tool: Tool) -> bool:
        return isinstance(tool, Bash)

    def body(self, call: ToolCall, tool: Tool, body: _Body, width: int, expanded: bool,
             ctx: RenderContext) -> None:
        assert isinstance(tool, Bash)
        p = ctx.palette
        for i, line in enumerate(_lines(tool.command) or [""]):
            body.add(Text.assemble(("$ " if i == 0 else "  ", p.muted), clean(line)))
        bash = bash_result(call)
        background, task_id = _background(call, bash)
        if background:
            task = ctx.session.tasks.get(task_id or "")
            status = STATUSES[normalise(task.status if task is not None else "started")].word
            body.add(Text.assemble((f"{BACKGROUND.glyph} background task ", p.secondary),
                                   (clean(task_id or "?"), p.secondary), (f" ({status})", p.muted)))
            return
        if bash is not None:
            body.add_output(bash.stdout)
            body.add_output(bash.stderr, p.error if call.is_error else p.warning)
            if bash.interrupted:
                body.add(f"{STATUSES['interrupted'].glyph} {STATUSES['interrupted'].word}", p.warning)
            if not bash.stdout and not bash.stderr and call.finished and not bash.interrupted:
                body.add("(no output)", p.muted)
        elif call.result is not None:
            result_lines(body, call, p)

    def rows(self, call: ToolCall, tool: Tool, width: int, expanded: bool,
             session: Session) -> int:
        assert isinstance(tool, Bash)
        n = max(_count_lines(tool.command), 1)
        bash = bash_result(call)
        if _background(call, bash)[0]:
            return n + 1
        if bash is not None:
            if not bash.stdout and not bash.stderr and call.finished and not bash.interrupted:
                return n + 1
            return n + _count_lines(bash.stdout) + _count_lines(bash.stderr) + bash.interrupted
        return n + super().rows(call, tool, width, expanded, session)
