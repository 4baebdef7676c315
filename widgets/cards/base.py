"""The pieces every card is made of: the palette, the render context, number
formatting, text cleaning, Strip helpers and the body layout with its fold."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.console import Console, RenderableType
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.strip import Strip

if TYPE_CHECKING:
    from reducer.session import Session

FOLD_LINES = 8
"""Body lines a collapsed card shows before "… N more lines"."""
READ_FOLD_LINES = 4
PROMPT_FOLD_LINES = 12
EXPAND_LINES = 5000
"""An expanded body draws at most this many lines (a pasted log can have millions)."""
BODY_INDENT = 2

STATUS_GLYPHS = {
    "pending": "○", "running": "◐", "done": "✓", "failed": "✗", "denied": "⊘",
    "interrupted": "⏸",
}
TODO_GLYPHS = {"pending": "☐", "in_progress": "◐", "completed": "☑"}


@dataclass(frozen=True)
class Palette:
    """Rich styles for the roles a transcript uses; resolved from theme variables."""

    muted: Style = Style(dim=True)
    accent: Style = Style(color="blue")
    secondary: Style = Style(color="magenta")
    primary: Style = Style(color="blue")
    error: Style = Style(color="red")
    warning: Style = Style(color="yellow")
    success: Style = Style(color="green")
    band: Style = Style(bgcolor="grey23")
    """The prompt band: background (and text colour) of a human prompt."""
    band_label: Style = Style(bold=True)
    diff_add: Style = Style(color="green")
    diff_del: Style = Style(color="red")
    dark: bool = True

    @property
    def code_theme(self) -> str:
        return "monokai" if self.dark else "default"


@dataclass
class RenderContext:
    """What renderers need besides the item: the session (for sub-agent and task
    state), a console to render Rich renderables with, and the palette."""

    session: Session
    console: Console
    palette: Palette


# --- formatting ---------------------------------------------------------------------------


def fmt_tokens(n: int | float | None) -> str:
    """``1234`` → ``1,234``."""
    return f"{int(n or 0):,}"


def fmt_count(n: int | float | None) -> str:
    """Compact counts: ``980``, ``2.4k``, ``1.2M``."""
    n = int(n or 0)
    if n < 1000:
        return str(n)
    if n < 1_000_000:
        return f"{n / 1000:.1f}k".replace(".0k", "k")
    return f"{n / 1_000_000:.1f}M".replace(".0M", "M")


def fmt_duration(seconds: float | None) -> str:
    """``0.4s``, ``12.4s``, ``1m30s``, ``2h05m``."""
    if seconds is None:
        return ""
    if seconds < 60:
        return f"{seconds:.1f}s"
    total = int(seconds)
    if total < 3600:
        return f"{total // 60}m{total % 60:02d}s"
    return f"{total // 3600}h{total % 3600 // 60:02d}m"


_CONTROL = {c: "\N{REPLACEMENT CHARACTER}" for c in [*range(0x20), *range(0x7F, 0xA0)]
            if c not in (0x09, 0x0A)}
_CONTROL[0x0D] = None  # type: ignore[assignment]


def clean(text: str) -> str:
    """Text safe to draw: tabs expanded, carriage returns dropped, other control
    characters shown as �."""
    if not text:
        return ""
    if "\t" in text:
        text = text.expandtabs(4)
    return text.translate(_CONTROL)


def _text(value: str, style: Style | str = "") -> Text:
    if "\x1b" in value:  # terminal colours in a command's output
        text = Text.from_ansi(value.replace("\r", ""), style=style)
        text.plain = clean(text.plain)  # any escape left over is not an escape any more
        return text
    return Text(clean(value), style=style)


def _lines(value: str) -> list[str]:
    """Logical lines of an output: no trailing empty line, ``[]`` for nothing."""
    value = value.rstrip("\n")
    return value.split("\n") if value else []


def _count_lines(value: str) -> int:
    value = value.rstrip("\n")
    return value.count("\n") + 1 if value else 0


def _no_bg(style: Style) -> Style:
    return Style(color=style.color, bold=style.bold, italic=style.italic,
                 underline=style.underline, strike=style.strike)


# --- strips -------------------------------------------------------------------------------


def _strip(text: Text, console: Console) -> Strip:
    """One line of ``text`` as a Strip; the Text's own style goes under its spans
    (``Text.render`` leaves it out)."""
    strip = Strip(list(text.render(console)), text.cell_len)
    base = text.style
    if base:
        strip = strip.apply_style(base if isinstance(base, Style) else console.get_style(base))
    return strip


def _crop(text: Text, width: int, console: Console) -> Strip:
    """One row: ``text`` (a single line) cut at ``width`` with an ellipsis."""
    if text.cell_len > width:
        text = text.copy()
        text.truncate(width, overflow="ellipsis")
    return _strip(text, console)


def _wrap(text: Text, width: int, console: Console) -> list[Strip]:
    """``text`` word-wrapped (long words folded) at ``width``."""
    if not text.plain:
        return [Strip.blank(0)]
    return [_strip(line, console) for line in text.wrap(console, max(width, 1), overflow="fold")]


def _indent(strip: Strip, n: int, style: Style | None = None) -> Strip:
    if n <= 0:
        return strip
    return Strip.join([Strip([Segment(" " * n, style)], n), strip])


def _render(renderable: RenderableType, width: int, console: Console) -> list[Strip]:
    options = console.options.update(width=max(width, 1), height=None, highlight=False)
    return [Strip(line).simplify() for line in console.render_lines(renderable, options, pad=False)]


def _rule(label: Text, width: int, style: Style, console: Console) -> Strip:
    """``──── label ────`` centred on ``width``."""
    label = label.copy()
    room = width - 2
    if label.cell_len > room - 8:
        label.truncate(max(room - 8, 1), overflow="ellipsis")
    left = max((width - label.cell_len - 2) // 2, 1)
    right = max(width - label.cell_len - 2 - left, 1)
    row = Text.assemble(("─" * left + " ", style), label, (" " + "─" * right, style))
    return _crop(row, width, console)


class _Body:
    """Logical lines of a card body: each drawn on one cropped row when folded,
    wrapped when expanded. Output lines stay plain strings until shown, so a
    folded card over a megabyte of output costs what its eight rows cost."""

    __slots__ = ("lines",)

    def __init__(self) -> None:
        self.lines: list[Text | tuple[str, Style | str]] = []

    def add(self, value: str | Text, style: Style | str = "") -> None:
        if isinstance(value, Text):
            self.lines.append(value)
        else:
            self.lines.append(_text(value, style))

    def add_output(self, value: str, style: Style | str = "") -> None:
        value = value.rstrip("\n")
        if value:
            self.lines.extend((line, style) for line in value.split("\n"))


def _line_text(line: Text | tuple[str, Style | str], limit: int | None) -> Text:
    """A body line as Text; a plain line longer than ``limit`` characters is cut
    first (it is cropped to fewer cells than that anyway)."""
    if isinstance(line, Text):
        return line
    value, style = line
    if limit is not None and len(value) > limit:
        value = value[: limit * 4] if "\x1b" in value else value[:limit]
    return _text(value, style)


def _layout_body(body: list[Text | tuple[str, Style | str]], width: int, expanded: bool,
                 fold: int | None, ctx: RenderContext, indent: int = BODY_INDENT) -> list[Strip]:
    console = ctx.console
    inner = max(width - indent, 1)
    out: list[Strip] = []
    # one hidden line would take the hint's own row: show it instead
    if expanded:
        shown = body if len(body) <= EXPAND_LINES else body[:EXPAND_LINES]
    else:
        shown = body if fold is None or len(body) <= fold + 1 else body[:fold]
    for line in shown:
        if expanded:
            out.extend(_indent(s, indent) for s in _wrap(_line_text(line, None), inner, console))
        else:
            out.append(_indent(_crop(_line_text(line, inner * 2 + 2), inner, console), indent))
    if len(shown) < len(body):
        more = len(body) - len(shown)
        how = "r: the raw frame has them all" if expanded else "enter to expand"
        hint = Text(f"… {more:,} more line{'s' if more != 1 else ''} ({how})", ctx.palette.muted)
        out.append(_indent(_crop(hint, inner, console), indent))
    return out


def _folded_height(n: int, fold: int | None) -> int:
    if fold is None or n <= fold + 1:
        return n
    return fold + 1



def _wrapped_rows(value: str, width: int) -> int:
    """Rows ``value`` takes when wrapped at ``width`` (exact for ASCII without long words)."""
    if not value:
        return 1
    rows = 0
    for line in value.split("\n"):
        n = len(line)
        rows += 1 if n <= width else -(-n // width)
    return rows



MARKDOWN_LIMIT = 64 * 1024
"""Longer replies show their first part as Markdown; ``enter`` shows it all as plain text."""
PLAIN_LIMIT = 1024 * 1024
"""Even expanded, a reply is drawn up to this many characters (the raw view has the rest)."""


def _head(text: str, limit: int) -> str:
    """``text`` cut at the last line break before ``limit`` characters."""
    cut = text.rfind("\n", 0, limit)
    return text[: cut if cut > limit // 2 else limit]


def _head_lines(text: str, count: int) -> str:
    """The first ``count`` lines of ``text``."""
    end = -1
    for _ in range(count):
        end = text.find("\n", end + 1)
        if end < 0:
            return text
    return text[:end]

