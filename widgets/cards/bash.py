"""The Bash card: the command, then stdout and stderr (or its background task)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text

from reducer.state import ToolCall
from reducer.tools import Bash
from reducer.views import bash_result, result_text

from .base import RenderContext, _Body, _count_lines, _lines, clean
from .generic import _result_lines

if TYPE_CHECKING:
    from reducer.session import Session


def _bash_body(call: ToolCall, tool: Bash, body: _Body, ctx: RenderContext) -> None:
    p = ctx.palette
    for i, line in enumerate(_lines(tool.command) or [""]):
        body.add(Text.assemble(("$ " if i == 0 else "  ", p.muted), clean(line)))
    bash = bash_result(call)
    task_id = call.task_id if call.background else None
    if bash is not None and bash.backgroundTaskId:
        task_id = bash.backgroundTaskId
    if task_id or (call.background and call.status != "failed"):
        task = ctx.session.tasks.get(task_id or "")
        status = task.status if task is not None else "started"
        body.add(Text.assemble(("→ background task ", p.secondary), (task_id or "?", p.secondary),
                               (f" ({status})", p.muted)))
        return
    if bash is not None:
        body.add_output(bash.stdout)
        body.add_output(bash.stderr, p.error if call.is_error else p.warning)
        if bash.interrupted:
            body.add("⏸ interrupted", p.warning)
        if not bash.stdout and not bash.stderr and call.finished and not bash.interrupted:
            body.add("(no output)", p.muted)
    elif call.result is not None:
        _result_lines(body, call, p)


def _bash_rows(call: ToolCall, tool: Bash, session: Session) -> int:
    n = max(_count_lines(tool.command), 1)
    if call.background or (call.task_id and call.background):
        return n + 1
    bash = bash_result(call)
    if bash is not None:
        if bash.backgroundTaskId:
            return n + 1
        out = _count_lines(bash.stdout) + _count_lines(bash.stderr) + bash.interrupted
        if not bash.stdout and not bash.stderr and call.finished and not bash.interrupted:
            out = 1
        return n + out
    if call.result is not None:
        return n + _count_lines(result_text(call))
    return n

