"""What of an item the session index makes searchable, and under which role.

Every text a reader sees in a transcript is searchable: prompts, replies,
thinking, a tool's input and its result, a hook's output, notices, a
compaction's summary. Each text is cut to its first ``limit`` characters
(a giant tool output by its first part) and keeps its whole length, so a
hit can say how much of it was searched.

A text carries the line of the row that carried it (a tool result the line of
its ``tool_result`` row, a hook's output the line of its response, a
compaction's summary the line of the summary row), and is given only once it
is *settled*: it will not change with any later row (a reply still streaming,
a hook still running, a call without its result are not). So a read of a
file that grew can take exactly the texts of the rows past where the last
read stopped (:mod:`viewer.index.extract`). Pure: no I/O.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from .fold import block_text
from .roles import Role
from .state import (
    MAIN,
    CompactionItem,
    HookItem,
    Item,
    NoticeItem,
    PromptItem,
    StopSummaryItem,
    TextItem,
    ThinkingItem,
    ToolItem,
)

__all__ = ["Searchable", "searchable", "flat_strings"]


class Searchable(NamedTuple):
    """One searchable text of an item."""

    role: Role
    line: int
    """The line (of the item's source file) of the row that carried the text."""
    text: str
    """The text's first ``limit`` characters."""
    chars: int
    """The whole text's length in characters."""


def flat_strings(value: Any, out: list[str], budget: int) -> int:
    """Append the strings inside a decoded JSON value (keys left out, numbers
    as text) to ``out``, up to ``budget`` characters; what is left of it."""
    if budget <= 0:
        return budget
    if isinstance(value, str):
        out.append(value[:budget])
        return budget - len(value)
    if isinstance(value, dict):
        for v in value.values():
            budget = flat_strings(v, out, budget)
    elif isinstance(value, (list, tuple)):
        for v in value:
            budget = flat_strings(v, out, budget)
    elif value is not None and not isinstance(value, bool):
        out.append(str(value))
        budget -= len(out[-1])
    return budget


def _text(role: Role, line: int, text: str, limit: int) -> list[Searchable]:
    head = text[:limit]
    if not head or head.isspace():
        return []
    return [Searchable(role, line, head, len(text))]


def _joined(parts: list[str]) -> str:
    return "\n".join(p for p in parts if p)


def _tool(item: ToolItem, limit: int) -> tuple[list[Searchable], bool]:
    call = item.call
    if call is None:
        return [], True
    parts = [call.name]
    flat_strings(call.input, parts, limit)
    out = _text("tool_use", call.line_no, " ".join(parts), limit)
    if call.result is None or call.result_line_no is None:
        return out, False  # its result is still to come
    return out + _text("tool_result", call.result_line_no, block_text(call.result), limit), True


def _hook(item: HookItem, limit: int) -> tuple[list[Searchable], bool]:
    hook = item.hook
    if hook is None or hook.end_line is None:
        return [], hook is None  # running: its output is still to come
    output = hook.output if hook.output != hook.stdout else ""
    return _text("hook", hook.end_line,
                 _joined([hook.label, output, hook.stdout, hook.stderr]), limit), True


def searchable(item: Item, limit: int) -> tuple[list[Searchable], bool]:
    """The settled texts of ``item``, and whether all of its texts are settled
    (``False``: a later row may add one, to be asked again)."""
    if isinstance(item, PromptItem):
        if item.agent != MAIN and item.uuid is None:
            # the prompt a sub-agent's task started with: its own row takes it over (its
            # text is the Agent call's input, searchable there meanwhile)
            return [], False
        return _text("user", item.line_no, item.text, limit), True
    if isinstance(item, (TextItem, ThinkingItem)):
        if item.streaming:
            return [], False
        role: Role = "assistant" if isinstance(item, TextItem) else "thinking"
        return _text(role, item.line_no, item.text, limit), True
    if isinstance(item, ToolItem):
        return _tool(item, limit)
    if isinstance(item, HookItem):
        return _hook(item, limit)
    if isinstance(item, StopSummaryItem):
        commands = [str(i.get("command", "")) for i in item.infos if isinstance(i, dict)]
        text = _joined(["stop hooks", *commands, *map(str, item.errors), item.stop_reason or ""])
        return _text("hook", item.line_no, text, limit), True
    if isinstance(item, NoticeItem):
        return _text("notice", item.line_no, _joined([item.text, item.detail or ""]), limit), True
    if isinstance(item, CompactionItem):
        if item.summary is None:
            return [], False
        return _text("compaction", item.summary_line or item.line_no, item.summary, limit), True
    return [], True
