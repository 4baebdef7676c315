"""The pieces every card is made of: the palette, the render context, text
cleaning (through :mod:`widgets.safe_text`), Strip helpers and the body layout with its fold."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import islice
from typing import TYPE_CHECKING

from rich.cells import chop_cells
from rich.console import Console, RenderableType
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.strip import Strip

from cctv.reducer.format import human_bytes, plural
from cctv.reducer.images import ImageInfo, describe

from ..safe_text import from_ansi, safe_text, visible

if TYPE_CHECKING:
    from cctv.reducer.fold import Session

FOLD_LINES = 8
"""Body lines a collapsed card shows before "… N more lines"."""
READ_FOLD_LINES = 4
PROMPT_FOLD_LINES = 12
EXPAND_ROWS = 1000
"""Rows an expanded body draws per page (``m`` adds a page): a pasted log can have
millions of lines, a single line 50 MB. A page is some twenty screens; each row
drawn is kept (a Strip, ~3 KB), so a page of 2,000 was 6 MB, a third of a 13 MB
prompt again."""
EXPAND_LINES = EXPAND_ROWS
LONG_LINE = 4096
"""Lines longer than this many characters are hard-wrapped at the width, from
their head alone, instead of word-wrapped whole."""
BODY_INDENT = 2

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


# --- text ---------------------------------------------------------------------------------
# Every string from state is made safe by :mod:`widgets.safe_text`: ``clean`` for
# strings, and ``_crop`` / ``_wrap`` (where every Text of a card becomes rows) for
# whatever a renderer built. Numbers and durations come from :mod:`reducer.format`.

clean = visible
"""Text safe to draw: tabs expanded, controls shown as visible stand-ins (``␛``)."""


def _text(value: str, style: Style | str = "") -> Text:
    if "\x1b" in value:  # terminal colours in a command's output
        return from_ansi(value, style=style)
    return Text(clean(value), style=style)


def _lines(value: str) -> list[str]:
    """Logical lines of an output: no trailing empty line, ``[]`` for nothing."""
    value = value.rstrip("\n")
    return value.split("\n") if value else []


_COUNTED: dict[tuple[int, int, str, str], int] = {}
"""Line counts of the big texts last drawn (a card counts its text each time it
is measured and drawn: 15 ms for 50 MB). Keyed by identity, length and both
ends, without holding the text."""
_COUNT_BIG = 1 << 20


def _count_newlines(value: str, end: int) -> int:
    """``value.count("\\n", 0, end)``, remembered for a big ``value``."""
    if end < _COUNT_BIG:
        return value.count("\n", 0, end)
    key = (id(value), end, value[:32], value[end - 32:end])
    count = _COUNTED.get(key)
    if count is None:
        if len(_COUNTED) >= 16:
            _COUNTED.clear()
        count = _COUNTED[key] = value.count("\n", 0, end)
    return count


def _count_lines(value: str) -> int:
    """``len(_lines(value))`` without splitting or copying."""
    end = _content_end(value)
    return _count_newlines(value, end) + 1 if end else 0


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
    text = safe_text(text)
    if text.cell_len > width:
        text = text.copy()
        text.truncate(width, overflow="ellipsis")
    return _strip(text, console)


def _wrap(text: Text, width: int, console: Console) -> list[Strip]:
    """``text`` word-wrapped (long words folded) at ``width``."""
    text = safe_text(text)
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


Line = Text | tuple[str, Style | str]
"""One logical body line: drawn Text, or a plain string and its style (made Text
only when shown)."""


class _Run:
    """Many output lines kept as the one string they came in, split only as far
    as they are shown (a 50 MB output is never split into a million strings)."""

    __slots__ = ("text", "style", "end", "count")

    def __init__(self, text: str, style: Style | str, end: int, count: int) -> None:
        self.text, self.style, self.end, self.count = text, style, end, count

    def lines(self) -> Iterator[tuple[str, Style | str]]:
        text, style, end, pos = self.text, self.style, self.end, 0
        while pos <= end:
            cut = text.find("\n", pos, end)
            if cut < 0:
                cut = end
            # a CRLF line break is a line break: its CR is not shown as ␍
            yield text[pos:cut - 1 if cut > pos and text[cut - 1] == "\r" else cut], style
            pos = cut + 1


class _Body:
    """Logical lines of a card body: each drawn on one cropped row when folded,
    wrapped when expanded. Output stays one plain string until shown, so a
    folded card over a megabyte of output costs what its eight rows cost, and an
    expanded one what its first page costs."""

    __slots__ = ("parts", "count", "chars")

    def __init__(self, lines: Iterable[Line] = ()) -> None:
        self.parts: list[Line | _Run] = []
        self.count = 0
        """Logical lines."""
        self.chars = 0
        """Characters of all lines, line breaks included."""
        self.extend(lines)

    def __len__(self) -> int:
        return self.count

    def add(self, value: str | Text, style: Style | str = "") -> None:
        """One line (a string is made Text now: keep it short)."""
        self.extend((value if isinstance(value, Text) else _text(value, style),))

    def extend(self, lines: Iterable[Line]) -> None:
        for line in lines:
            self.parts.append(line)
            self.count += 1
            self.chars += (len(line.plain) if isinstance(line, Text) else len(line[0])) + 1

    def add_output(self, value: str, style: Style | str = "") -> None:
        """Every line of an output (trailing line breaks dropped), split lazily."""
        end = _content_end(value)
        if not end:
            return
        count = _count_newlines(value, end) + 1
        self.parts.append(_Run(value, style, end, count) if count > 1
                          else (value[:end].removesuffix("\r"), style))
        self.count += count
        self.chars += end + 1

    def lines(self) -> Iterator[Line]:
        for part in self.parts:
            if isinstance(part, _Run):
                yield from part.lines()
            else:
                yield part


def image_lines(body: _Body, images: Iterable[ImageInfo], p: Palette) -> None:
    """One line per image: ``▣ image/png · 1.2 MiB · 3000×2000 (v: view)``."""
    for info in images:
        body.add(Text.assemble(("▣ ", p.secondary), (describe(info), ""),
                               (" (v: view)", p.muted)))


def _content_end(value: str) -> int:
    """Length of ``value`` without its trailing line breaks (no copy is made)."""
    end = len(value)
    while end and value[end - 1] == "\n":
        end -= 1
    return end


def _line_text(line: Line, limit: int | None) -> Text:
    """A body line as Text; a plain line longer than ``limit`` characters is cut
    first (it is cropped to fewer cells than that anyway)."""
    if isinstance(line, Text):
        return line
    value, style = line
    if limit is not None and len(value) > limit:
        value = value[: limit * 4] if "\x1b" in value else value[:limit]
    return _text(value, style)


def _plain_rows(value: str, style: Style | None, width: int, rows: int,
                indent: int) -> list[Strip] | None:
    """The rows of a plain ASCII line without escapes, hard-wrapped at ``width``,
    as one Segment each; ``None`` when the line needs Rich (wide characters,
    terminal colours, word wrapping)."""
    head = value[: rows * width]
    if "\x1b" in head or "\t" in head or not head.isascii():
        return None
    head = clean(head)
    if len(value) <= width or len(value) > LONG_LINE:
        pad = Segment(" " * indent) if indent else None
        out = []
        for at in range(0, max(len(head), 1), width):
            chunk = head[at: at + width]
            segments = [Segment(chunk, style)] if pad is None else [pad, Segment(chunk, style)]
            out.append(Strip(segments, indent + len(chunk)))
        return out[:rows]
    return None


def _line_rows(line: Line, width: int, rows: int, console: Console,
               indent: int) -> tuple[list[Strip], int]:
    """At most ``rows`` rows of ``line`` wrapped at ``width`` and indented, and how
    many of its characters they hold (-1 when they do not hold it all). A line
    longer than :data:`LONG_LINE` is hard-wrapped at the width from its head
    alone: a 50 MB word costs what its rows cost."""
    size = len(line.plain) if isinstance(line, Text) else len(line[0])
    if not isinstance(line, Text):
        value, style = line
        style_obj = console.get_style(style) if isinstance(style, str) and style else \
            (style or None)
        fast = _plain_rows(value, style_obj, width, rows, indent)  # type: ignore[arg-type]
        if fast is not None:
            return fast, size if len(fast) * width >= size else -1
    if size <= LONG_LINE:
        strips = _wrap(_line_text(line, None), width, console)
        return [_indent(s, indent) for s in strips[:rows]], size if len(strips) <= rows else -1
    if isinstance(line, Text):
        text = line[: rows * width]
    else:
        value, style = line
        head = value[: rows * width * 4] if "\x1b" in value[: rows * width * 4] else \
            value[: rows * width]
        text = _text(head, style)
    cuts, at = [], 0
    for piece in chop_cells(text.plain, width)[:-1]:
        at += len(piece)
        cuts.append(at)
    pieces = text.divide(cuts)[:rows]
    shown = sum(len(piece.plain) for piece in pieces)
    return [_indent(_strip(piece, console), indent) for piece in pieces], \
        shown if shown >= size else -1


def _layout_body(body: _Body | list[Line], width: int, expanded: bool | int,
                 fold: int | None, ctx: RenderContext, indent: int = BODY_INDENT) -> list[Strip]:
    """The rows of a body: while folded, one cropped row per line up to ``fold``
    lines; expanded, wrapped, up to ``expanded`` pages of :data:`EXPAND_ROWS` rows.
    Whatever is left is one hint row saying how much."""
    if not isinstance(body, _Body):
        body = _Body(body)
    console = ctx.console
    inner = max(width - indent, 1)
    out: list[Strip] = []
    lines = body.lines()
    if not expanded:
        # one hidden line would take the hint's own row: show it instead
        shown = body.count if fold is None or body.count <= fold + 1 else fold
        for line in islice(lines, shown):
            out.append(_indent(_crop(_line_text(line, inner * 2 + 2), inner, console), indent))
        if shown < body.count:
            more = body.count - shown
            hint = Text(f"… {plural(more, 'more line', grouped=True)} (enter to expand)",
                        ctx.palette.muted)
            out.append(_indent(_crop(hint, inner, console), indent))
        return out
    budget = EXPAND_ROWS * int(expanded)
    done_lines = done_chars = 0
    cut_line = False
    for line in lines:
        rows, used = _line_rows(line, inner, budget - len(out), console, indent)
        out.extend(rows)
        if used < 0:  # the line did not fit in what is left of the page
            cut_line = True
            done_chars += sum(len(s.text) for s in rows)
            break
        done_lines += 1
        done_chars += used + 1
        if len(out) >= budget:
            break
    if done_lines < body.count:
        more_lines = body.count - done_lines - cut_line
        left = human_bytes(max(body.chars - done_chars - 1, 0))
        what = (f"{plural(more_lines, 'more line', grouped=True)} · {left}"
                if more_lines else f"{left} more")
        hint = Text(f"… {what} (m: more · o: pager)", ctx.palette.muted)
        out.append(_indent(_crop(hint, inner, console), indent))
    return out


def _folded_height(n: int, fold: int | None) -> int:
    if fold is None or n <= fold + 1:
        return n
    return fold + 1



def _wrapped_rows(value: str, width: int, limit: int | None = None,
                  end: int | None = None) -> int:
    """Rows ``value[:end]`` takes when wrapped at ``width`` (exact for ASCII without
    long words); counting stops at ``limit`` rows."""
    end = len(value) if end is None else end
    if not end:
        return 1
    rows = pos = 0
    while True:
        cut = value.find("\n", pos, end)
        n = (end if cut < 0 else cut) - pos
        rows += 1 if n <= width else -(-n // width)
        if cut < 0 or (limit is not None and rows >= limit):
            return rows if limit is None else min(rows, limit)
        pos = cut + 1


def _expanded_rows(value: str, width: int, expanded: bool | int) -> int:
    """The estimate for a body of ``value`` laid out by :func:`_layout_body` when
    expanded: its wrapped rows, at most its pages, and the hint row."""
    budget = EXPAND_ROWS * int(expanded)
    rows = _wrapped_rows(value, width, budget + 1, _content_end(value))
    return rows if rows <= budget else budget + 1


MARKDOWN_LIMIT = 64 * 1024
"""Longer replies show their first part as Markdown; ``enter`` shows it all as plain text."""


def _head(text: str, limit: int) -> str:
    """``text`` cut at the last line break before ``limit`` characters."""
    cut = text.rfind("\n", 0, limit)
    return text[: cut if cut > limit // 2 else limit]
