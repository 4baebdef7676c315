"""``$`` in a session: what it cost and who spent it — the session's cost and
where it comes from, its context turn by turn (a sparkline, compactions
marked under it), and the tree of its agents with their own and subtree
costs, tokens, tool calls and time."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Sparkline, Static, Tree

from cctv.reducer import pricing
from cctv.reducer.context import ContextPoint, context_series, context_window
from cctv.reducer.costs import AgentFigures, Cost, agent_figures, cost_of, cost_text
from cctv.reducer.fold import Session
from cctv.reducer.format import compact_count, format_duration, plural
from cctv.reducer.state import MAIN
from cctv.widgets.safe_text import visible

__all__ = ["SpendScreen", "compaction_marks"]

SOURCES = {
    "recorded": "recorded by the CLI",
    "estimated": "~ estimated from the tokens (no cost recorded)",
    "mixed": "~ recorded by the CLI, plus an estimate of what came after",
}


def compaction_marks(points: list[ContextPoint], width: int) -> str:
    """A row of ``width`` cells with ``▲`` under each point a compaction came
    before, placed as the sparkline spreads the points over its width."""
    cells = [" "] * width
    n = len(points)
    for i, p in enumerate(points):
        if p.compacted and n and width:
            cells[min(width - 1, i * width // n)] = "▲"
    return "".join(cells)


def _agent_label(a: AgentFigures) -> Text:
    """A node of the agent tree (a Tree's labels are Rich text)."""
    name = "main" if a.agent_id == MAIN else (a.agent_type or "agent")
    own = cost_text(Cost(a.cost_usd, a.cost_source))
    parts: list[str | tuple[str, str]] = [(visible(name, oneline=True), "bold")]
    if a.agent_id != MAIN and a.description:
        parts += [" ", (f"“{visible(a.description, oneline=True)[:60]}”", "dim")]
    parts += ["  ", (own, "green" if a.cost_usd is not None else "dim")]
    tree = cost_text(Cost(a.subtree_cost_usd, "estimated"))
    if a.subtree_cost_usd is not None and tree != own:
        parts += [("  with its agents ", "dim"), tree]
    parts += [("  · ", "dim"), plural(a.tool_calls, "tool call"), ("  · in ", "dim"),
              compact_count(a.input_tokens + a.cache_read_tokens + a.cache_write_tokens),
              (" out ", "dim"), compact_count(a.output_tokens)]
    if a.duration_s is not None:
        parts += [("  · ", "dim"), format_duration(a.duration_s)]
    return Text.assemble(*parts)


class SpendScreen(ModalScreen[None]):
    """The session's cost, context and agent tree.

    | Key(s) | Description |
    | :- | :- |
    | escape, q, $ | Close |
    """

    BINDINGS = [
        Binding("escape", "dismiss", "Close", id="spend.close"),
        Binding("q,dollar_sign", "dismiss", "Close", show=False),
    ]

    CSS_PATH = "spend.tcss"

    def __init__(self, session: Session) -> None:
        super().__init__()
        pricing.load()  # (read behind the first screen already, most often)
        self.session = session
        self.cost = cost_of(session)
        self.window = context_window(session)
        self.points = context_series(session, self.window)
        self.agents = agent_figures(session)

    def compose(self) -> ComposeResult:
        with Vertical(id="spend-box") as box:
            box.border_title = "Cost, context and agents"
            yield Static(self._cost_line(), id="spend-cost")
            yield Static(self._context_line(), id="spend-context-label")
            yield Sparkline([p.tokens for p in self.points] or [0], id="spend-context")
            yield Static("", id="spend-compactions")
            with VerticalScroll(id="spend-scroll"):
                yield self._tree()

    def on_mount(self) -> None:
        self.query_one(Tree).focus()

    def on_resize(self) -> None:
        spark = self.query_one("#spend-context", Sparkline)
        self.query_one("#spend-compactions", Static).update(
            compaction_marks(self.points, spark.size.width))

    def _cost_line(self) -> Content:
        cost = self.cost
        line = [("cost ", "$text-muted"), (cost_text(cost), "bold $text-success")]
        if cost.source is not None:
            line += ["  ", (SOURCES[cost.source], "$text-muted")]
        if cost.reason:
            line += ["  ", (visible(cost.reason, oneline=True), "$text-warning")]
        return Content.assemble(*line)

    def _context_line(self) -> Content:
        points = self.points
        if not points:
            return Content.styled("context: no request yet", "$text-muted")
        peak = max(points, key=lambda p: p.tokens)
        compactions = sum(p.compacted for p in points)
        window = f" of {compact_count(self.window)}" if self.window else ""
        share = f" ({peak.share:.0%})" if peak.share is not None else ""
        return Content.assemble(
            ("context per turn  ", "$text-muted"),
            f"last {compact_count(points[-1].tokens)} · peak {compact_count(peak.tokens)}{window}{share}",
            ("  ▲ ", "$text-warning"), plural(compactions, "compaction"))

    def _tree(self) -> Tree[str]:
        tree: Tree[str] = Tree(_agent_label(self.agents[0]), data=MAIN, id="spend-agents")
        nodes = {MAIN: tree.root}
        pending = list(self.agents[1:])
        while pending:  # parents first, whatever order the agents started in
            rest = []
            for a in pending:
                parent = nodes.get(a.parent_agent_id or MAIN)
                if parent is None and a.parent_agent_id not in {b.agent_id for b in pending}:
                    parent = tree.root  # a parent not in the session: under the main loop
                if parent is None:
                    rest.append(a)
                    continue
                nodes[a.agent_id] = parent.add(_agent_label(a), data=a.agent_id, expand=True)
            if len(rest) == len(pending):
                break
            pending = rest
        tree.root.expand_all()
        return tree
