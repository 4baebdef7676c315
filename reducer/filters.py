"""Which transcript items a view shows: filters by kind, errors only, one tool.

A :class:`ViewFilter` is an immutable value: the transcript view, the status
bar and the Markdown export all read the same one, so what is hidden on screen
is what is left out of an exported view. Pure: no Textual, no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from .state import (
    HookItem,
    Item,
    NoticeItem,
    StopSummaryItem,
    ThinkingItem,
    ToolItem,
    TurnFooterItem,
)
from .queries import is_error_item

__all__ = ["KINDS", "ViewFilter", "PRESETS", "PRESET_SHORT_NAMES", "next_preset", "parse_hide"]

KINDS: dict[str, str] = {
    "hooks": "hook runs and stop-hook summaries",
    "harness": "harness notices (local command output, injected context, interrupts)",
    "notices": "other one-line notices (retries, rate limits, system messages)",
    "thinking": "thinking blocks",
    "footers": "turn footers",
}
"""The kinds a filter can hide, with what each covers (for the palette and ``--hide``)."""


def item_kind(item: Item) -> str | None:
    """The filterable kind of ``item`` (a :data:`KINDS` key), ``None`` if it has none."""
    if isinstance(item, (HookItem, StopSummaryItem)):
        return "hooks"
    if isinstance(item, NoticeItem):
        return "harness" if item.category == "harness" else "notices"
    if isinstance(item, ThinkingItem):
        return "thinking"
    if isinstance(item, TurnFooterItem):
        return "footers"
    return None


@dataclass(frozen=True, slots=True)
class ViewFilter:
    """What to leave out of a transcript.

    ``hidden`` kinds are left out; with ``only_errors`` only the items ``e``
    stops at remain; with ``only_tool`` only the calls of that tool. Items the
    fold itself hid (``item.hidden``) stay hidden whatever the filter says."""

    hidden: frozenset[str] = frozenset()
    only_errors: bool = False
    only_tool: str | None = None

    @property
    def active(self) -> bool:
        return bool(self.hidden or self.only_errors or self.only_tool)

    def accepts(self, item: Item) -> bool:
        """Whether the view shows ``item``."""
        if item.hidden:
            return False
        if self.only_tool is not None:
            if not (isinstance(item, ToolItem) and item.call.name == self.only_tool):
                return False
        if self.only_errors and not is_error_item(item):
            return False
        if self.hidden:
            kind = item_kind(item)
            if kind is not None and kind in self.hidden:
                return False
        return True

    def toggle_kind(self, kind: str) -> ViewFilter:
        """This filter with ``kind`` hidden if it was shown, shown if it was hidden."""
        if kind not in KINDS:
            raise ValueError(f"unknown kind {kind!r} (one of {', '.join(KINDS)})")
        return replace(self, hidden=self.hidden ^ {kind})

    def toggle_errors(self) -> ViewFilter:
        return replace(self, only_errors=not self.only_errors)

    def with_tool(self, name: str | None) -> ViewFilter:
        """Only the calls of tool ``name`` (``None``: every item again)."""
        return replace(self, only_tool=name)

    @property
    def narrowed(self) -> bool:
        """Only some items are shown (one tool's calls, or errors): :meth:`describe` starts ``only``."""
        return bool(self.only_tool or self.only_errors)

    def describe(self) -> str:
        """A few words for the status bar: ``"only errors · hiding hooks, thinking"``;
        ``""`` when nothing is filtered."""
        parts: list[str] = []
        if self.only_tool:
            parts.append(f"only {self.only_tool}")
        if self.only_errors:
            parts.append("only errors")
        if self.hidden:
            parts.append("hiding " + ", ".join(k for k in KINDS if k in self.hidden))
        return " · ".join(parts)

    def left_nothing(self, where: str) -> str:
        """What a view this filter leaves empty says, ``where`` naming what it
        shows (``"this session"``): ``"No errors in this session."``."""
        hiding = ", ".join(k for k in KINDS if k in self.hidden)
        if self.only_tool and self.only_errors:
            return f"No {self.only_tool} call in {where} failed."
        if self.only_tool:
            return f"No {self.only_tool} calls in {where}."
        if self.only_errors:
            return f"No errors in {where}" + (f" outside the hidden {hiding}." if hiding else ".")
        return f"Everything in {where} is hidden ({hiding})."


PRESETS: tuple[tuple[str, ViewFilter], ...] = (
    ("everything", ViewFilter()),
    ("quiet: no hooks, harness notices or thinking",
     ViewFilter(hidden=frozenset({"hooks", "harness", "thinking"}))),
    ("only errors", ViewFilter(only_errors=True)),
)
"""The filters ``f`` cycles through, in order, with their names."""
PRESET_SHORT_NAMES: tuple[str, ...] = tuple(name.partition(":")[0] for name, _ in PRESETS)
"""Each preset's name up to its colon: ``everything``, ``quiet``, ``only errors``."""


def next_preset(current: ViewFilter) -> tuple[str, ViewFilter]:
    """The preset after ``current`` (the first one when ``current`` is not a preset
    but something is filtered: ``f`` then clears it)."""
    for i, (_name, preset) in enumerate(PRESETS):
        if preset == current:
            return PRESETS[(i + 1) % len(PRESETS)]
    return PRESETS[0] if current.active else PRESETS[1]


def parse_hide(spec: str) -> frozenset[str]:
    """``"hooks,thinking"`` → the kinds; raises ``ValueError`` naming an unknown one."""
    kinds = frozenset(k.strip() for k in spec.split(",") if k.strip())
    unknown = sorted(kinds - KINDS.keys())
    if unknown:
        raise ValueError(f"unknown kind {', '.join(unknown)} (one of {', '.join(KINDS)})")
    return kinds
