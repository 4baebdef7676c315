"""What a tool card is: one object per tool kind, holding its header summary, its
body and its row count in one place, and the registry that picks the card of a call.

A card module (one per tool family, under :mod:`widgets.cards.tools`) defines a
:class:`ToolCard` subclass and decorates it with :func:`register`; nothing else
needs to know about it. :func:`card_for` asks the registered cards, highest
``priority`` first, which one :meth:`~ToolCard.claims` the call; the generic JSON
card claims everything and comes last.

``rows`` is an estimate, not a second renderer: it must be cheap (string lengths
and line counts, no diff, no highlighting, no JSON parsing beyond the cached
views) and is corrected by the view once the card is drawn. For a collapsed card
it should be exact whenever that is cheap, since most cards are never drawn.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from rich.style import Style

from cctv.reducer.state import ToolCall
from cctv.reducer.tools import Tool, tool_parts, tool_summary
from cctv.reducer.images import images_in
from cctv.reducer.queries import result_text

from ..status_glyphs import STATUSES
from .base import FOLD_LINES, Palette, RenderContext, _Body, _count_lines, image_lines

if TYPE_CHECKING:
    from cctv.reducer.fold import Session

__all__ = ["ToolCard", "register", "card_for", "result_lines", "CARDS",
           "shown_result", "denial"]


class ToolCard:
    """How one kind of tool call is drawn. Subclasses override what differs."""

    names: ClassVar[frozenset[str]] = frozenset()
    """Tool names this card draws (the default :meth:`claims` looks only at these)."""
    priority: ClassVar[int] = 0
    """Cards with a higher priority are asked first."""
    fold: ClassVar[int | None] = FOLD_LINES
    """Body lines shown while collapsed (``None``: never folded)."""

    def claims(self, call: ToolCall, tool: Tool) -> bool:
        """Whether this card draws ``call`` (whose canonical tool is ``tool``)."""
        return call.name in self.names

    def summary(self, call: ToolCall, tool: Tool) -> tuple[str, str]:
        """``(name, summary)`` for the header line: the bold name and what follows it."""
        name, detail = tool_parts(tool)
        if name == call.name:
            return name, detail
        return call.name, tool_summary(tool)  # a command's call: the whole summary follows

    def body(self, call: ToolCall, tool: Tool, body: _Body, width: int, expanded: bool,
             ctx: RenderContext) -> None:
        """Add the body's logical lines to ``body`` (the frame folds and wraps them)."""
        if call.result is not None:
            result_lines(body, call, ctx.palette)

    def rows(self, call: ToolCall, tool: Tool, width: int, expanded: bool,
             session: Session) -> int:
        """How many logical lines :meth:`body` adds, cheaply (see the module docstring)."""
        return result_rows(call) if call.result is not None else 0


CARDS: list[ToolCard] = []
"""The registered cards, highest priority first."""


def register(cls: type[ToolCard]) -> type[ToolCard]:
    """Class decorator: add a card to the registry."""
    CARDS.append(cls())
    CARDS.sort(key=lambda card: -card.priority)
    return cls


def card_for(call: ToolCall, tool: Tool) -> ToolCard:
    """The card that draws ``call``."""
    for card in CARDS:
        if card.claims(call, tool):
            return card
    raise LookupError(f"no card claims {call.name!r}")  # the generic card claims all


def result_lines(body: _Body, call: ToolCall, p: Palette, *, style: Style | str = "") -> None:
    """The call's result text as body lines (in the error colour when it failed),
    then a line for each image in it."""
    body.add_output(shown_result(call), p.error if call.is_error else style)
    if isinstance(call.result, list):
        image_lines(body, images_in(call.result), p)


def result_rows(call: ToolCall) -> int:
    """The lines :func:`result_lines` adds."""
    images = len(images_in(call.result)) if isinstance(call.result, list) else 0
    return _count_lines(shown_result(call)) + images


def shown_result(call: ToolCall) -> str:
    """The result text a card draws: none for a denied call, whose denial line says it."""
    return "" if call.status == "denied" else result_text(call)


def denial(call: ToolCall) -> str:
    """A denied call's one line (or lines): the glyph, then the reason given with the
    denial and the result text, each once."""
    reason = (call.denied_reason or "").strip()
    result = result_text(call).strip() if call.result is not None else ""
    parts = [x for x in (reason if reason != "denied" else "", result) if x]
    if len(parts) == 2 and (parts[0] in parts[1] or parts[1] in parts[0]):
        parts = [max(parts, key=len)]
    return f"{STATUSES['denied'].glyph} " + (" · ".join(parts) or "permission denied")

