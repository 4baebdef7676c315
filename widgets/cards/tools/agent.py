"""The card of a call that started a sub-agent (Task / Agent)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.style import Style
from rich.text import Text

from cctv.reducer.costs import AgentMemo, Cost, cost_text
from cctv.reducer.facts import call_task, task_duration
from cctv.reducer.fold import SUBAGENT_TOOLS
from cctv.reducer.state import ToolCall
from cctv.reducer.tools import Raw, Tool
from cctv.reducer.notes import agent_reply
from cctv.reducer.format import exact_count, format_duration, plural

from ...status_glyphs import BACKGROUND, STATUSES
from ..base import RenderContext, _Body, clean
from ..card import ToolCard, register, shown_result

if TYPE_CHECKING:
    from cctv.reducer.fold import Session


_AGENTS = AgentMemo()
"""Each sub-agent's own and subtree cost, worked out once per change of the session's requests."""


def _answer(call: ToolCall, session: Session) -> tuple[str, bool]:
    """What the sub-agent handed back, without the CLI's frame ("" while there is
    none), and whether the call only launched it in the background."""
    task = call_task(session, call)
    reply = agent_reply(shown_result(call)) if call.result is not None and call.finished \
        else None
    if reply is not None and reply.answer:
        return reply.answer, False
    summary = (task.summary if task is not None else None) or ""
    return summary.strip("\n"), reply is not None and reply.launched


def _answer_lines(call: ToolCall, session: Session, expanded: bool | int) -> list[str]:
    """The answer lines the card shows: the first while folded, all when expanded."""
    answer, launched = _answer(call, session)
    if launched and not answer:
        return []
    lines = [ln for ln in answer.split("\n")] if answer else []
    if not expanded:
        first = next((ln.strip() for ln in lines if ln.strip()), "")
        return [first] if first else []
    return lines


def _agent_body(call: ToolCall, body: _Body, expanded: bool | int, ctx: RenderContext) -> None:
    p, session = ctx.palette, ctx.session
    inp = call.input if isinstance(call.input, dict) else {}
    agent = session.agents.get(call.subagent) if call.subagent else None
    task = call_task(session, call)
    kind = (agent.subagent_type if agent else None) or inp.get("subagent_type") \
        or (task.subagent_type if task else None) or "agent"
    desc = (agent.description if agent else "") or str(inp.get("description") or "")
    body.add(Text.assemble((clean(str(kind)), p.secondary), (" · " + clean(desc) if desc else "", "")))
    status = task.status if task is not None else agent.status if agent is not None \
        else call.status
    look = STATUSES[status]
    line = Text(f"{look.glyph} {look.word}", getattr(p, look.role))
    tools = (task.tool_uses if task is not None and task.tool_uses is not None else None)
    if tools is None and agent is not None:
        tools = agent.tool_calls
    if tools is not None:
        line.append(f" · {plural(tools, 'tool')}", p.muted)
    last = (agent.last_tool if agent is not None else None) or (task.last_tool if task else None)
    if last:
        line.append(" · last ", p.muted)
        line.append(clean(last))
    if agent is not None and agent.output_tokens and agent.total_tokens is None:
        # (on the wire a sub-agent's frames carry placeholder usage: its task's is the truth)
        line.append(f" · {exact_count(agent.output_tokens)} tok out", p.muted)
    if task is not None and task.total_tokens:
        line.append(f" · {exact_count(task.total_tokens)} tok total", p.muted)
    spent = _AGENTS.figures(session) if call.subagent else None
    figures = spent.get(call.subagent or "") if spent is not None else None
    if figures is not None and figures.cost_usd is not None:
        own = cost_text(Cost(figures.cost_usd, figures.cost_source))
        line.append(f" · {own}", p.muted)
        tree = cost_text(Cost(figures.subtree_cost_usd, "estimated"))
        if tree != own:
            line.append(f" (with its agents {tree})", p.muted)
    took = task_duration(task, call, None) if task is not None else None
    if took:
        line.append(f" · {format_duration(took)}", p.muted)
    body.add(line)
    answer, launched = _answer(call, session)
    if launched and not answer:
        body.add(f"{BACKGROUND.glyph} launched in the background", p.secondary)
    style = p.error if call.is_error else ""
    for i, line in enumerate(_answer_lines(call, session, expanded)):
        body.add(Text.assemble(("↳ " if i == 0 else "  ", p.muted), (clean(line), style)))
    if call.subagent:
        body.add("enter: open sub-agent", p.muted + Style(italic=True))


@register
class AgentCard(ToolCard):
    """A sub-agent card: what it is, how far it got, its answer, where to look."""

    fold = None
    priority = 20  # a call that started a sub-agent is drawn as one, whatever its name

    def claims(self, call: ToolCall, tool: Tool) -> bool:
        return call.name in SUBAGENT_TOOLS or bool(call.subagent)

    def summary(self, call: ToolCall, tool: Tool) -> tuple[str, str]:
        name, summary = super().summary(call, tool)
        if isinstance(tool, Raw) and call.name in SUBAGENT_TOOLS and isinstance(call.input, dict):
            summary = str(call.input.get("description") or summary)
        return name, summary

    def body(self, call: ToolCall, tool: Tool, body: _Body, width: int, expanded: bool,
             ctx: RenderContext) -> None:
        _agent_body(call, body, expanded, ctx)

    def rows(self, call: ToolCall, tool: Tool, width: int, expanded: bool,
             session: Session) -> int:
        answer = _answer_lines(call, session, expanded)
        launched = not answer and _answer(call, session)[1]
        return 2 + len(answer) + launched + bool(call.subagent)
