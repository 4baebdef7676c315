"""The help screen: every key, grouped, and what the glyphs mean.

The legend is :data:`widgets.status_glyphs.LEGEND`, the table every view draws
its statuses from, so what help says a glyph means is what it means.
"""

from __future__ import annotations

from collections.abc import Iterable

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from cctv.reducer.format import WORDS
from cctv.widgets.key_footer import KeyFooter
from cctv.widgets.safe_text import content
from cctv.widgets.status_glyphs import LEGEND

__all__ = ["HelpScreen", "LEGEND"]


def _keys_table(rows: list[tuple[str, str, str]]) -> Content:
    groups: dict[str, list[tuple[str, str]]] = {}
    for key, description, group in rows:
        groups.setdefault(group or "General", []).append((key, description))
    key_w = min(18, max((len(k) for k, _d, _g in rows), default=4) + 2)
    lines: list[Content] = []
    for group, items in groups.items():
        if lines:
            lines.append(Content(""))
        lines.append(content(group, "bold $text-primary"))
        for key, description in items:
            lines.append(Content.assemble(
                "  ", (key.ljust(key_w), "bold $text-accent"), content(description)))
    if not lines:
        lines.append(Content.styled("(no bindings)", "italic $text-muted"))
    return Content("\n").join(lines)


def _legend() -> Content:
    lines = [Content.styled("What you're looking at", "bold $text-primary")]
    for glyph, meaning, style in LEGEND:
        lines.append(Content.assemble("  ", (glyph, style), "  ", meaning))
    lines.append(Content.assemble(
        ("  status bar  ", "$text-muted"),
        f"activity · model · {WORDS['turns']}s · cost · {WORDS['in']} / {WORDS['out']} tokens"
        " · context · filter · follow · source"))
    lines.append(Content.styled(
        f"  {WORDS['in']}: every input token the model read, {WORDS['uncached']}, {WORDS['cache read']}"
        f" and {WORDS['cache write']} (cctv summary says each)", "$text-muted"))
    lines.append(Content.assemble(
        ("  ~$1.45  ", "$text-success"),
        "a cost estimated from the tokens (no cost recorded; $1.45: the CLI's own figure;"
        " – unknown: no price for the model)"))
    return Content("\n").join(lines)


class HelpScreen(ModalScreen[None]):
    """Key bindings as ``(key, description, group)`` rows, grouped in the order
    given, then the glyph legend.

    | Key(s) | Description |
    | :- | :- |
    | escape, q, ? | Close |
    """

    BINDINGS = [
        Binding("escape", "dismiss", "Close", id="help.close"),
        Binding("q", "dismiss", "Close", show=False),
        Binding("question_mark", "dismiss", "Close", show=False, key_display="?"),
    ]

    CSS_PATH = "help.tcss"

    def __init__(self, rows: Iterable[tuple[str, str, str]], title: str = "cctv — keys") -> None:
        super().__init__()
        self.rows: list[tuple[str, str, str]] = [tuple(r) for r in rows]  # type: ignore[misc]
        self.title_text = title

    @staticmethod
    def rows_from_bindings(bindings: Iterable[Binding], group: str = "General"
                           ) -> list[tuple[str, str, str]]:
        """``(key, description, group)`` rows from Binding objects (those with a
        description), the group taken from ``Binding.group`` when set."""
        rows: list[tuple[str, str, str]] = []
        for b in bindings:
            if not b.description:
                continue
            key = b.key_display or b.key
            g = b.group.description if b.group is not None else group
            rows.append((key, b.description, g))
        return rows

    def compose(self) -> ComposeResult:
        with Vertical(id="help-box") as box:
            box.border_title = content(self.title_text)
            with VerticalScroll(id="help-scroll"):
                yield Static(_keys_table(self.rows), id="help-keys")
                yield Static(_legend(), id="help-legend")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.query_one("#help-scroll").focus()
