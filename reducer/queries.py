"""Queries over folded state, for the widgets and the export that show it.

The fold keeps a tool's structured result (``ToolCall.result_payload``) as a
``msgspec.Raw``; the helpers here decode the few shapes a card shows into typed
Structs, so no widget ever parses JSON. Everything here is pure: no I/O, no
textual, no rich.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import msgspec

from .giant import memory_reader, string_pieces
from .images import ImageInfo, image_info, images_in
from .fold import block_text
from .tools import Tool, tool_from_use, tool_summary
from .state import (
    Agent,
    CompactionItem,
    HookItem,
    Item,
    NoticeItem,
    ProblemItem,
    PromptItem,
    StopSummaryItem,
    TextItem,
    ThinkingItem,
    ToolCall,
    ToolItem,
    TurnFooterItem,
)

__all__ = [
    "BashResult", "ReadFile", "ReadResult", "Todo", "bash_result", "read_result", "result_text",
    "todos", "search_text", "search_parts", "contains_folded", "full_text", "item_images", "canonical_tool", "structured_result", "is_error_item", "is_turn_start", "input_json",
    "launching_card",
]


class BashResult(msgspec.Struct, gc=False):
    """The structured result of a ``Bash`` call (``tool_use_result``)."""

    stdout: str = ""
    stderr: str = ""
    interrupted: bool = False
    isImage: bool = False
    noOutputExpected: bool | None = None
    returnCodeInterpretation: str | None = None
    backgroundTaskId: str | None = None


class ReadFile(msgspec.Struct, gc=False):
    filePath: str = ""
    content: str = ""
    numLines: int | None = None
    startLine: int | None = None
    totalLines: int | None = None


class ReadResult(msgspec.Struct, gc=False):
    """The structured result of a ``Read`` call."""

    type: str = ""
    file: ReadFile | None = None


class Todo(msgspec.Struct, gc=False):
    """One entry of a ``TodoWrite`` list."""

    content: str = ""
    status: str = "pending"
    activeForm: str | None = None


_BASH = msgspec.json.Decoder(BashResult)
_READ = msgspec.json.Decoder(ReadResult)


def _decode(decoder: msgspec.json.Decoder, payload: Any) -> Any:
    if not payload:
        return None
    try:
        return decoder.decode(payload)
    except (msgspec.DecodeError, TypeError):  # a string (an error text), a list, …
        return None


def bash_result(call: ToolCall) -> BashResult | None:
    """stdout/stderr of a Bash call, when its structured result is an object."""
    return _decode(_BASH, call.result_payload)


_DECODERS: dict[type, msgspec.json.Decoder] = {}


def structured_result(call: ToolCall, shape: type[msgspec.Struct]) -> Any:
    """A call's structured result decoded as ``shape`` (a Struct a card declares for
    its tool), or ``None`` when there is none or it has another shape."""
    decoder = _DECODERS.get(shape)
    if decoder is None:
        decoder = _DECODERS[shape] = msgspec.json.Decoder(shape)
    return _decode(decoder, call.result_payload)


def read_result(call: ToolCall) -> ReadResult | None:
    """The file window a Read call returned, when structured."""
    result = _decode(_READ, call.result_payload)
    return result if result is not None and result.file is not None else None


def canonical_tool(call: ToolCall) -> Tool:
    """The typed tool of a call, built from its name and input the first time it is
    asked for and kept on the call (its input never changes once folded)."""
    tool = call.tool
    if tool is None:
        tool = call.tool = tool_from_use(call.name, call.input)
    return tool


def result_text(call: ToolCall) -> str:
    """Plain text of a call's ``tool_result`` content."""
    return block_text(call.result)


def todos(input: Any) -> list[Todo]:
    """The todo list of a ``TodoWrite`` input (``[]`` if it has another shape)."""
    if not isinstance(input, dict):
        return []
    try:
        return msgspec.convert(input.get("todos") or [], list[Todo])
    except msgspec.ValidationError:
        return []


def input_json(input: Any, indent: int = 2) -> str:
    """A tool input (already decoded state) encoded back as JSON: compact when
    ``indent`` is 0, else pretty."""
    try:
        raw = msgspec.json.encode(input)
    except (TypeError, msgspec.EncodeError):
        return repr(input)
    return msgspec.json.format(raw, indent=indent).decode() if indent else raw.decode()


# --- whole-item views ------------------------------------------------------------------


def _strings(value: Any, out: list[str]) -> None:
    """Every string inside a decoded JSON value (keys of objects left out)."""
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, dict):
        for v in value.values():
            _strings(v, out)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _strings(v, out)
    elif value is not None and not isinstance(value, bool):
        out.append(str(value))


def _bash_twin() -> Any:
    """BashResult with ``stdout`` and ``stderr`` left undecoded (``msgspec.Raw``)."""
    fields = [(f.name, msgspec.Raw if f.name in ("stdout", "stderr") else f.type,
               msgspec.Raw() if f.name in ("stdout", "stderr") else f.default)
              for f in msgspec.structs.fields(BashResult)]
    return msgspec.defstruct("_BashTwin", fields, gc=False)


_BASH_TWIN = msgspec.json.Decoder(_bash_twin())
_LAZY_PAYLOAD = 1 << 20
"""A Bash payload this big is searched a piece at a time, not decoded whole."""


def _bash_pieces(payload: Any) -> list[Iterable[str]] | None:
    """stdout and stderr of a big Bash payload as pieces of text decoded on
    demand, or None where :func:`bash_result` would be None too."""
    try:
        twin = _BASH_TWIN.decode(payload)
    except (msgspec.DecodeError, TypeError):
        return None
    out: list[Iterable[str]] = []
    for raw in (twin.stdout, twin.stderr):
        if not len(raw):
            continue  # absent: ""
        view = memoryview(raw)
        if view[0] != 0x22:
            return None  # not a string: BashResult would not decode
        if len(view) > 2:
            out.append(_Pieces(view))
    return out


class _Pieces:
    """A JSON string's text, decoded a piece at a time each time it is read
    (a bad escape ends it: the whole decode would have failed)."""

    def __init__(self, view: memoryview) -> None:
        self.view = view

    def __iter__(self) -> Iterator[str]:
        try:
            yield from string_pieces(memory_reader(self.view), 1, len(self.view) - 1,
                                     SEARCH_WINDOW)
        except (msgspec.DecodeError, ValueError):
            return


def _tool_parts(call: ToolCall) -> list[str | Iterable[str]]:
    parts: list[str | Iterable[str]] = [call.name]
    _strings(call.input, parts)  # type: ignore[arg-type]
    payload = call.result_payload if call.name == "Bash" else None
    lazy = _bash_pieces(payload) if payload is not None and len(payload) > _LAZY_PAYLOAD else None
    bash = bash_result(call) if lazy is None and call.name == "Bash" else None
    if lazy is not None:
        parts += lazy
    elif bash is not None:
        parts += (bash.stdout, bash.stderr)
    else:
        parts.append(result_text(call))
    if call.denied_reason:
        parts.append(call.denied_reason)
    return [p for p in parts if p]


def search_parts(item: Item) -> list[str | Iterable[str]]:
    """Everything a reader sees in an item, as the strings that make it up (a
    giant Bash output as an iterable of pieces decoded on demand):
    :func:`search_text` joins them with newlines; a search reads them as they
    are, so a giant output is never copied whole."""
    if isinstance(item, (PromptItem, TextItem, ThinkingItem)):
        return [item.text]
    if isinstance(item, ToolItem):
        return _tool_parts(item.call)
    if isinstance(item, HookItem):
        h = item.hook
        return [h.name, h.event, h.output, h.stdout, h.stderr]
    if isinstance(item, NoticeItem):
        return [item.category, item.text, item.detail or ""]
    if isinstance(item, ProblemItem):
        return [f"line {item.line_no}: {item.kind_key} {item.reason}"]
    if isinstance(item, CompactionItem):
        return [f"compacted {item.trigger or ''} {item.error or ''}", item.summary or ""]
    if isinstance(item, StopSummaryItem):
        cmds = "\n".join(str(i.get("command", "")) for i in item.infos if isinstance(i, dict))
        return [f"stop hooks\n{cmds}\n{' '.join(map(str, item.errors))}\n{item.stop_reason or ''}"]
    if isinstance(item, TurnFooterItem):
        t = item.turn_ref
        return [f"turn {t.number} {t.subtype or ''} {' '.join(t.errors)}"]
    return []


def search_text(item: Item) -> str:
    """Everything a reader sees in an item, as one plain string."""
    return "\n".join(p if isinstance(p, str) else "".join(p) for p in search_parts(item))


SEARCH_WINDOW = 1 << 18
"""Characters of an item's text casefolded at a time by :func:`contains_folded`."""


def contains_folded(parts: Iterable[str | Iterable[str]], folded: str,
                    window: int = SEARCH_WINDOW) -> bool:
    """Whether ``folded`` (a casefolded query) is in ``search_text``'s join of
    ``parts``, casefolded; found by casefolding a window at a time (one
    window's copy, not the text's). Windows overlap by the query's length: a
    char folds to one char or more, so a match spans at most that many chars."""
    if not folded:
        return True
    keep = len(folded)
    carry = ""
    for n, part in enumerate(parts):
        if n:
            carry += "\n"
        for piece in (part,) if isinstance(part, str) else part:
            for at in range(0, max(len(piece), 1), window):
                text = carry + piece[at:at + window]
                if folded in text.casefold():
                    return True
                carry = text[-keep:]
    return False


def _full_tool_text(call: ToolCall) -> str:
    parts = [tool_summary(canonical_tool(call)), f"status: {call.status}"]
    if call.input not in (None, {}, []):
        parts += ["", "input:", input_json(call.input, 2)]
    bash = bash_result(call) if call.name == "Bash" else None
    if bash is not None:
        if bash.stdout:
            parts += ["", "stdout:", bash.stdout]
        if bash.stderr:
            parts += ["", "stderr:", bash.stderr]
    elif call.result is not None:
        parts += ["", "error:" if call.is_error else "result:", result_text(call)]
    if call.denied_reason:
        parts += ["", f"denied: {call.denied_reason}"]
    return "\n".join(parts)


def item_images(item: Item) -> list[ImageInfo]:
    """The images of a prompt or of a tool call's result, with what their headers say."""
    if isinstance(item, PromptItem):
        return [info for info in map(image_info, item.images) if info is not None]
    if isinstance(item, ToolItem):
        return images_in(item.call.result)
    return []


def full_text(item: Item) -> str:
    """All the text of an item, nothing cut, for reading outside the app (a pager):
    a tool call's summary, input and whole output; a reply or prompt as written."""
    if isinstance(item, ToolItem):
        return _full_tool_text(item.call)
    if isinstance(item, TurnFooterItem):
        t = item.turn_ref
        parts = [f"turn {t.number}: {t.subtype or ('error' if t.is_error else 'done')}",
                 *t.errors]
        if t.result_text:
            parts += ["", t.result_text]
        return "\n".join(parts)
    return search_text(item)


def is_error_item(item: Item) -> bool:
    """Whether ``e``/``E`` should stop at this item: a failed, denied or
    interrupted call, a problem row, an error notice, a failed hook or compaction,
    a turn that ended in error."""
    if isinstance(item, ToolItem):
        return item.call.status in ("failed", "denied", "interrupted")
    if isinstance(item, ProblemItem):
        return True
    if isinstance(item, NoticeItem):
        return item.level == "error"
    if isinstance(item, HookItem):
        return item.hook.status == "failed"
    if isinstance(item, CompactionItem):
        return item.failed
    if isinstance(item, StopSummaryItem):
        return bool(item.errors)
    if isinstance(item, TurnFooterItem):
        return item.turn_ref.is_error
    return False


def launching_card(agents: Mapping[str, Agent], agent_id: str, within: str) -> int | None:
    """The index, in agent ``within``'s items, of the tool call that started
    ``agent_id`` or the sub-agent of ``within`` it descends from; ``None`` when
    ``agent_id`` does not descend from ``within`` or the call is not there."""
    agent = agents.get(agent_id)
    for _ in range(len(agents)):  # (a chain of parents longer than that loops)
        if agent is None or agent.parent == within:
            break
        agent = agents.get(agent.parent) if agent.parent is not None else None
    else:
        return None
    if agent is None:
        return None
    owner = agents.get(within)
    for index, item in enumerate(owner.items if owner is not None else ()):
        if isinstance(item, ToolItem) and item.call.subagent == agent.id:
            return index
    return None


def is_turn_start(item: Item, previous: Item | None) -> bool:
    """Whether a turn begins at ``item``: a prompt, or (for sessions whose prompts
    were not echoed, like ``claude -p``) the first item of a new turn number."""
    if isinstance(item, PromptItem):
        return True
    if item.turn is None:
        return False
    return previous is None or previous.turn != item.turn
