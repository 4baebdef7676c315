"""How each transcript item is drawn: item state in, Strips out.

The renderers are plain functions of ``(item, width, expanded, context)``; they
read the folded state and never parse anything (structured tool results come
through :mod:`reducer.queries`). :class:`~widgets.transcript.TranscriptView`
caches what they return per ``(item, item.version, width, expanded, theme)``.

Two costs are kept apart:

* :func:`render_item` builds the Strips. Markdown and syntax highlighting happen
  here, so the view calls it only for items in or near the viewport.
* :func:`estimate_height` guesses the height from string lengths alone, cheaply
  enough to run over 100k items. For collapsed cards, chips and one-liners the
  guess is exact (their bodies are cropped to one row per logical line, never
  wrapped); for Markdown and wrapped text it is corrected once rendered.

Colours come from a :class:`Palette` of Rich styles that the view resolves from
its component classes, which use theme variables, so every style follows the
dark or light theme.

One module per family: :mod:`.text` (prompts, replies, thinking), :mod:`.tool`
(the tool card frame) with a module per tool kind (:mod:`.bash`, :mod:`.edit`,
:mod:`.read`, :mod:`.write`, :mod:`.todo`, :mod:`.agent`, :mod:`.generic`), and
:mod:`.events` (compactions, hooks, notices, footers, problems).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, NamedTuple

from rich.text import Text
from textual.strip import Strip

from cctv.reducer.fold import SUBAGENT_TOOLS
from cctv.reducer.state import (
    CompactionItem,
    HookItem,
    Item,
    NoticeItem,
    ProblemItem,
    PromptItem,
    StopSummaryItem,
    TextItem,
    ThinkingItem,
    ToolItem,
    TurnFooterItem,
)

from .base import (
    EXPAND_LINES,
    FOLD_LINES,
    Palette,
    RenderContext,
    _crop,
)
from .events import (
    _compaction,
    _compaction_h,
    _footer,
    _footer_h,
    _hook,
    _hook_h,
    _notice,
    _notice_h,
    _problem,
    _problem_h,
    _stop_summary,
    _stop_summary_h,
)
from .text import _markdown, _markdown_h, _prompt, _prompt_h, _thinking, _thinking_h
from .card import call_task
from .tool import _tool, _tool_h

if TYPE_CHECKING:
    from cctv.reducer.fold import Session

__all__ = [
    "Palette", "RenderContext", "render_item", "estimate_height", "margin_top", "live_key",
    "FOLD_LINES", "EXPAND_LINES", "plain_rows",
]


def margin_top(item: Item) -> int:
    """Blank rows above an item: blocks get one, chips and one-liners stack."""
    if isinstance(item, (HookItem, NoticeItem, ProblemItem, StopSummaryItem)):
        return 0
    return 1


def live_key(item: Item, session: Session) -> tuple:
    """The part of an item's look that lives outside the item (and its version):
    a sub-agent card shows its sub-agent's and task's progress; a background
    Bash card shows its task's status."""
    if not isinstance(item, ToolItem):
        return ()
    call = item.call
    task = call_task(call, session)
    task_key = (task.status, task.total_tokens, task.tool_uses, task.last_tool,
                task.summary) if task is not None else None
    if call.subagent or call.name in SUBAGENT_TOOLS:
        agent = session.agents.get(call.subagent) if call.subagent else None
        agent_key = (agent.status, agent.tool_calls, agent.last_tool, agent.output_tokens,
                     len(agent.items)) if agent is not None else None
        return (agent_key, task_key)
    return (task_key,)


def render_item(item: Item, width: int, expanded: bool | int, ctx: RenderContext) -> list[Strip]:
    """The rows of ``item`` at ``width`` cells (margin excluded); ``expanded`` is
    ``False`` or how many pages of a long body to show."""
    width = max(width, 8)
    kind = ITEM_KINDS.get(type(item))
    if kind is None:
        return [_crop(Text(f"{item.kind}", ctx.palette.muted), width, ctx.console)]
    return kind.draw(item, width, expanded, ctx)


def estimate_height(item: Item, width: int, expanded: bool | int, session: Session) -> int:
    """A cheap guess at ``len(render_item(...))`` (margin excluded)."""
    width = max(width, 8)
    kind = ITEM_KINDS.get(type(item))
    return kind.rows(item, width, expanded, session) if kind is not None else 1


class ItemKind(NamedTuple):
    """How one item type is drawn and how many rows that takes, cheaply (kept side
    by side in its family's module; tool calls dispatch further to their card)."""

    draw: Callable[[Any, int, bool | int, RenderContext], list[Strip]]
    rows: Callable[[Any, int, bool | int, Session], int]


ITEM_KINDS: dict[type, ItemKind] = {
    PromptItem: ItemKind(_prompt, _prompt_h),
    TextItem: ItemKind(_markdown, _markdown_h),
    ThinkingItem: ItemKind(_thinking, _thinking_h),
    ToolItem: ItemKind(_tool, _tool_h),
    CompactionItem: ItemKind(_compaction, _compaction_h),
    HookItem: ItemKind(_hook, _hook_h),
    StopSummaryItem: ItemKind(_stop_summary, _stop_summary_h),
    NoticeItem: ItemKind(_notice, _notice_h),
    TurnFooterItem: ItemKind(_footer, _footer_h),
    ProblemItem: ItemKind(_problem, _problem_h),
}


def plain_rows(strips: Iterable[Strip]) -> list[str]:
    """The text of rendered rows (for tests and search previews)."""
    return [strip.text for strip in strips]
