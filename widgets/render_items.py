"""How each transcript item is drawn: item state in, Strips out.

The renderers are plain functions of ``(item, width, expanded, context)``; they
read the folded state and never parse anything (structured tool results come
through :mod:`reducer.views`). :class:`~widgets.transcript.TranscriptView`
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
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from rich.console import Console, RenderableType
from rich.segment import Segment
from rich.style import Style
from rich.syntax import Syntax
from rich.text import Text
from textual.strip import Strip

from reducer.session import SUBAGENT_TOOLS
from reducer.state import (
    MAIN,
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
from reducer.tools import (
    Bash,
    Command,
    Edit,
    MultiEdit,
    Raw,
    Read,
    Write,
    edit_hunks,
    tool_from_use,
    tool_summary,
)
from reducer.format import compact_count, exact_count, format_duration
from reducer.views import bash_result, input_json, read_result, result_text, todos

from .reply_markdown import reply_markdown
from .safe_text import from_ansi, safe_text, visible
from .status_glyphs import (BACKGROUND, HOOK, NOTICE_GLYPHS, PROBLEM, STATUSES, THINKING, TODO_GLYPHS, UNKNOWN,
                            normalise)

if TYPE_CHECKING:
    from reducer.session import Session

__all__ = [
    "Palette", "RenderContext", "render_item", "estimate_height", "margin_top", "live_key",
    "FOLD_LINES",
]

FOLD_LINES = 8
"""Body lines a collapsed card shows before "… N more lines"."""
READ_FOLD_LINES = 4
PROMPT_FOLD_LINES = 12
EXPAND_LINES = 5000
"""An expanded body draws at most this many lines (a pasted log can have millions)."""
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
# whatever a renderer built.

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


# --- items --------------------------------------------------------------------------------


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
    task = session.tasks.get(call.task_id) if call.task_id else None
    task_key = (task.status, task.total_tokens, task.tool_uses, task.last_tool,
                task.summary) if task is not None else None
    if call.subagent or call.name in SUBAGENT_TOOLS:
        agent = session.agents.get(call.subagent) if call.subagent else None
        agent_key = (agent.status, agent.tool_calls, agent.last_tool, agent.output_tokens,
                     len(agent.items)) if agent is not None else None
        return (agent_key, task_key)
    return (task_key,)


def render_item(item: Item, width: int, expanded: bool, ctx: RenderContext) -> list[Strip]:
    """The rows of ``item`` at ``width`` cells (margin excluded)."""
    width = max(width, 8)
    renderer = _RENDERERS.get(type(item))
    if renderer is None:
        return [_crop(Text(f"{item.kind}", ctx.palette.muted), width, ctx.console)]
    return renderer(item, width, expanded, ctx)


def estimate_height(item: Item, width: int, expanded: bool, session: Session) -> int:
    """A cheap guess at ``len(render_item(...))`` (margin excluded)."""
    width = max(width, 8)
    estimator = _ESTIMATORS.get(type(item))
    return estimator(item, width, expanded, session) if estimator is not None else 1


def _wrapped_rows(value: str, width: int) -> int:
    """Rows ``value`` takes when wrapped at ``width`` (exact for ASCII without long words)."""
    if not value:
        return 1
    rows = 0
    for line in value.split("\n"):
        n = len(line)
        rows += 1 if n <= width else -(-n // width)
    return rows


# prompt ---------------------------------------------------------------------------------

def _prompt(item: PromptItem, width: int, expanded: bool, ctx: RenderContext) -> list[Strip]:
    p, console = ctx.palette, ctx.console
    who = "you" if item.agent == MAIN else "prompt"
    label = Text.assemble(("▌ ", p.band_label), (who, p.band_label))
    if item.turn is not None:
        label.append(f" · turn {item.turn + 1}", p.muted)
    if item.images:
        label.append(f" · {item.images} image{'s' if item.images != 1 else ''}", p.muted)
    rows = [_crop(label, width, console)]
    body: list[Text | tuple[str, Style | str]] = [(line, "") for line in _lines(item.text)]
    rows += _layout_body(body or [Text("")], width, expanded, PROMPT_FOLD_LINES, ctx)
    return [row.extend_cell_length(width, p.band).apply_style(p.band) for row in rows]


def _prompt_h(item: PromptItem, width: int, expanded: bool, session: Session) -> int:
    n = max(_count_lines(item.text), 1)
    if expanded:
        if n > EXPAND_LINES:
            return 2 + _wrapped_rows(_head_lines(item.text, EXPAND_LINES), width - BODY_INDENT)
        return 1 + _wrapped_rows(item.text.rstrip("\n"), width - BODY_INDENT)
    return 1 + _folded_height(n, PROMPT_FOLD_LINES)


# assistant text ----------------------------------------------------------------------------

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


def _huge_text(item: TextItem, width: int, expanded: bool, ctx: RenderContext) -> list[Strip]:
    """A reply too long to lay out as Markdown at every redraw."""
    text = item.text
    if expanded:
        shown = _head(text, PLAIN_LIMIT)
        rows = _layout_body([_text(line) for line in _lines(shown)], width, True, None, ctx, 0)
        what = "r: the raw frame has it all" if len(shown) < len(text) else "enter: fold"
    else:
        shown = _head(text, MARKDOWN_LIMIT)
        theme = ctx.palette.code_theme
        rows = _render(reply_markdown(shown, theme), width, ctx.console)
        what = "enter: show all as plain text"
    hidden = len(text) - len(shown)
    if hidden > 0:
        hint = Text(f"… {hidden:,} more characters ({what})", ctx.palette.muted)
        rows.append(_crop(hint, width, ctx.console))
    return rows


def _markdown(item: TextItem, width: int, expanded: bool, ctx: RenderContext) -> list[Strip]:
    if len(item.text) > MARKDOWN_LIMIT:
        return _huge_text(item, width, expanded, ctx)
    source = item.text + (" ▍" if item.streaming else "")
    if not source.strip():
        return [Strip.blank(0)]
    theme = ctx.palette.code_theme
    strips = _render(reply_markdown(source, theme), width, ctx.console)
    while len(strips) > 1 and not strips[-1].text.strip():
        strips.pop()
    return strips or [Strip.blank(0)]


def _markdown_h(item: TextItem, width: int, expanded: bool, session: Session) -> int:
    text = item.text
    if len(text) < width and "\n" not in text:
        return 1
    if len(text) > MARKDOWN_LIMIT:
        shown = _head(text, PLAIN_LIMIT if expanded else MARKDOWN_LIMIT)
        return _wrapped_rows(shown.strip("\n"), width) + (len(shown) < len(text))
    return _wrapped_rows(text.strip("\n"), width)


# thinking --------------------------------------------------------------------------------

def _thinking_label(item: ThinkingItem, p: Palette) -> Text:
    label = Text(f"{THINKING} thinking", p.muted + Style(italic=True))
    if item.redacted:
        label.append(" (redacted)", p.muted)
    if item.streaming:
        label.append("…", p.muted)
    if item.tokens:
        label.append(f" · {exact_count(item.tokens)} tok", p.muted)
    elif item.text:
        label.append(f" · ~{exact_count(max(len(item.text) // 4, 1))} tok", p.muted)
    return label


def _thinking(item: ThinkingItem, width: int, expanded: bool, ctx: RenderContext) -> list[Strip]:
    p, console = ctx.palette, ctx.console
    rows = [_crop(_thinking_label(item, p), width, console)]
    if expanded and item.text:
        if len(item.text) <= MARKDOWN_LIMIT:
            body = _text(item.text.strip("\n"), p.muted + Style(italic=True))
            rows += [_indent(s, BODY_INDENT) for s in _wrap(body, width - BODY_INDENT, console)]
        else:  # a huge block: its lines, capped like any expanded body
            style = p.muted + Style(italic=True)
            text = _head(item.text.strip("\n"), PLAIN_LIMIT)
            rows += _layout_body([(line, style) for line in _lines(text)], width, True, None, ctx)
    return rows


def _thinking_h(item: ThinkingItem, width: int, expanded: bool, session: Session) -> int:
    if expanded and item.text:
        return 1 + _wrapped_rows(_head(item.text.strip("\n"), PLAIN_LIMIT), width - BODY_INDENT)
    return 1


# tool cards --------------------------------------------------------------------------------

def _status_style(key: str, p: Palette) -> Style:
    """The colour of a normalised status (see :mod:`widgets.status_glyphs`)."""
    return getattr(p, STATUSES[key].role)


def _status(call: ToolCall, p: Palette) -> tuple[Text, Style]:
    """The right-hand status of a card and the colour of its bullet."""
    if call.awaiting_permission and not call.finished:
        return Text("⋯ awaiting permission", p.warning), p.warning
    key = normalise(call.status, "pending")
    st, style = STATUSES[key], _status_style(key, p)
    # a finished call says only its glyph and time; every other status says its word
    text = Text(st.glyph if key == "done" else f"{st.glyph} {st.word}", style)
    if call.elapsed is not None and key in ("running", "done", "failed"):
        text.append(f" {format_duration(call.elapsed)}", style if key == "running" else p.muted)
    if key == "running" and call.heartbeats:
        text.append(f" · {call.heartbeats} heartbeat{'s' if call.heartbeats != 1 else ''}",
                    p.muted)
    return text, style


def _header_summary(call: ToolCall, tool: object) -> tuple[str, str]:
    """(name, summary) for the header line."""
    summary = tool_summary(tool)  # type: ignore[arg-type]
    if isinstance(tool, Command):
        return summary, ""
    name = call.name
    for sep in (": ", " "):
        if summary.startswith(name + sep):
            return name, summary[len(name) + len(sep):]
    return name, "" if summary == name else summary


def _header(call: ToolCall, tool: object, width: int, ctx: RenderContext) -> Strip:
    p = ctx.palette
    status, bullet = _status(call, p)
    if call.background and call.status in ("running", "pending"):
        # still running as a background task; once it ends the card shows how it ended
        status = Text(f"{BACKGROUND.glyph} {BACKGROUND.word}", p.secondary)
    name, summary = _header_summary(call, tool)
    left = Text.assemble(("● ", bullet), (clean(name), Style(bold=True)))
    if isinstance(tool, Raw) and call.name in SUBAGENT_TOOLS and isinstance(call.input, dict):
        summary = str(call.input.get("description") or summary)
    if summary:
        left.append("  ")
        left.append(clean(summary))
    room = width - status.cell_len - 2
    if left.cell_len > room:
        left.truncate(max(room, 4), overflow="ellipsis")
    gap = max(width - left.cell_len - status.cell_len, 1)
    return _crop(Text.assemble(left, " " * gap, status), width, ctx.console)


def _shown_result(call: ToolCall) -> str:
    """The result text a card draws: none for a denied call, whose denial line says it."""
    return "" if call.status == "denied" else result_text(call)


def _denial(call: ToolCall) -> str:
    """A denied call's one line (or lines): the glyph, then the reason given with the
    denial and the result text, each once."""
    reason = (call.denied_reason or "").strip()
    result = result_text(call).strip() if call.result is not None else ""
    parts = [x for x in (reason if reason != "denied" else "", result) if x]
    if len(parts) == 2 and (parts[0] in parts[1] or parts[1] in parts[0]):
        parts = [max(parts, key=len)]
    return f"{STATUSES['denied'].glyph} " + (" · ".join(parts) or "permission denied")


def _result_lines(body: _Body, call: ToolCall, p: Palette, *, style: Style | str = "") -> None:
    text = _shown_result(call)
    body.add_output(text, p.error if call.is_error else style)


def _bash_body(call: ToolCall, tool: Bash, body: _Body, ctx: RenderContext) -> None:
    p = ctx.palette
    for i, line in enumerate(_lines(tool.command) or [""]):
        body.add(Text.assemble(("$ " if i == 0 else "  ", p.muted), clean(line)))
    bash = bash_result(call)
    task_id = call.task_id if call.background else None
    if bash is not None and bash.backgroundTaskId:
        task_id = bash.backgroundTaskId
    if task_id or (call.background and call.status != "failed"):
        task = ctx.session.tasks.get(task_id or "")
        status = STATUSES[normalise(task.status if task is not None else "started")].word
        body.add(Text.assemble((f"{BACKGROUND.glyph} background task ", p.secondary),
                               (clean(task_id or "?"), p.secondary),
                               (f" ({status})", p.muted)))
        return
    if bash is not None:
        body.add_output(bash.stdout)
        body.add_output(bash.stderr, p.error if call.is_error else p.warning)
        if bash.interrupted:
            body.add(f"{STATUSES['interrupted'].glyph} {STATUSES['interrupted'].word}", p.warning)
        if not bash.stdout and not bash.stderr and call.finished and not bash.interrupted:
            body.add("(no output)", p.muted)
    elif call.result is not None:
        _result_lines(body, call, p)


def _bash_rows(call: ToolCall, tool: Bash, session: Session) -> int:
    n = max(_count_lines(tool.command), 1)
    if call.background or (call.task_id and call.background):
        return n + 1
    bash = bash_result(call)
    if bash is not None:
        if bash.backgroundTaskId:
            return n + 1
        out = _count_lines(bash.stdout) + _count_lines(bash.stderr) + bash.interrupted
        if not bash.stdout and not bash.stderr and call.finished and not bash.interrupted:
            out = 1
        return n + out
    if call.result is not None:
        return n + _count_lines(_shown_result(call))
    return n


def _diff(old: str, new: str, body: _Body, p: Palette) -> None:
    a, b = old.split("\n"), new.split("\n")
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            for line in a[i1:i2]:
                body.add(Text.assemble(("  ", p.muted), (clean(line), p.muted)))
            continue
        for line in a[i1:i2]:
            body.add(Text("- " + clean(line), p.diff_del))
        for line in b[j1:j2]:
            body.add(Text("+ " + clean(line), p.diff_add))


def _edit_body(call: ToolCall, tool: Edit | MultiEdit, body: _Body, ctx: RenderContext) -> None:
    p = ctx.palette
    for n, (old, new) in enumerate(edit_hunks(tool)):
        if n:
            body.add("⋯", p.muted)
        _diff(old, new, body, p)
    if call.is_error or call.status == "failed":
        _result_lines(body, call, p)


def _edit_rows(call: ToolCall, tool: Edit | MultiEdit, session: Session) -> int:
    hunks = edit_hunks(tool)
    rows = len(hunks) - 1 if hunks else 0
    for old, new in hunks:
        a, b = old.split("\n"), new.split("\n")
        matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
        common = sum(block.size for block in matcher.get_matching_blocks())
        rows += len(a) + len(b) - common
    if call.is_error or call.status == "failed":
        rows += _count_lines(_shown_result(call))
    return rows


def _read_body(call: ToolCall, tool: Read, body: _Body, ctx: RenderContext) -> None:
    p = ctx.palette
    read = read_result(call)
    if read is not None and read.file is not None:
        f = read.file
        start = f.startLine or 1
        num = f.numLines if f.numLines is not None else _count_lines(f.content)
        span = Text(f"lines {start}–{start + max(num, 1) - 1}", p.muted)
        if f.totalLines is not None:
            span.append(f" of {f.totalLines}", p.muted)
        body.add(span)
        for i, line in enumerate(_lines(f.content)):
            body.add(Text.assemble((f"{start + i:>4} ", p.muted), clean(line)))
        return
    if call.result is not None and not call.is_error:
        for line in _lines(_shown_result(call)):
            number, tab, rest = line.partition("\t")
            if tab and number.strip().isdigit():  # the CLI's `cat -n` form
                body.add(Text.assemble((f"{number.strip():>4} ", p.muted), clean(rest)))
            else:
                body.add(line)
    elif call.result is not None:
        _result_lines(body, call, p)


def _read_rows(call: ToolCall, tool: Read, session: Session) -> int:
    read = read_result(call)
    if read is not None and read.file is not None:
        return 1 + _count_lines(read.file.content)
    return _count_lines(_shown_result(call)) if call.result is not None else 0


@lru_cache(maxsize=1)
def _lexers_by_name() -> dict[str, str]:
    """File name patterns (``*.py``, ``Makefile``) → a Pygments lexer alias, from
    Pygments' own table: no lexer module is imported and no plugin looked up."""
    from pygments.lexers import get_all_lexers

    table: dict[str, str] = {}
    for _name, aliases, patterns, _mimes in get_all_lexers(plugins=False):
        if not aliases:
            continue
        for pattern in patterns:
            table.setdefault(pattern.lower(), aliases[0])
    return table


@lru_cache(maxsize=512)
def _lexer(path: str) -> str:
    """The lexer alias for a file, by its name alone (``text`` when unknown)."""
    name = os.path.basename(path).lower()
    table = _lexers_by_name()
    if name in table:
        return table[name]
    _, ext = os.path.splitext(name)
    return table.get("*" + ext, "text") if ext else "text"


def _highlighted(lines: list[str], path: str, p: Palette) -> list[Text]:
    """``lines`` of a file, highlighted as its extension says, on no background."""
    syntax = Syntax("", _lexer(path), theme=p.code_theme)
    text = syntax.highlight(clean("\n".join(lines)))
    text.style = ""
    text.spans = [type(span)(span.start, span.end, _no_bg(span.style))
                  if isinstance(span.style, Style) else span for span in text.spans]
    out = text.split("\n", allow_blank=True)[: len(lines)]
    return out + [Text("") for _ in range(len(lines) - len(out))]


def _write_body(call: ToolCall, tool: Write, body: _Body, expanded: bool,
                ctx: RenderContext) -> None:
    content = tool.content.rstrip("\n")
    if content:
        lines = content.split("\n")
        # folded, only the rows on show are highlighted; the rest are only counted
        shown = lines if expanded or len(lines) <= FOLD_LINES + 1 else lines[:FOLD_LINES]
        body.lines.extend(_highlighted(shown, tool.file_path, ctx.palette))
        body.lines.extend(("", "") for _ in range(len(lines) - len(shown)))
    if call.is_error:
        _result_lines(body, call, ctx.palette)


def _write_rows(call: ToolCall, tool: Write, session: Session) -> int:
    n = _count_lines(tool.content)
    return n + (_count_lines(_shown_result(call)) if call.is_error else 0)


def _todo_body(call: ToolCall, body: _Body, ctx: RenderContext) -> None:
    p = ctx.palette
    for todo in todos(call.input):
        glyph = TODO_GLYPHS.get(todo.status, "☐")
        if todo.status == "completed":
            body.add(Text.assemble((glyph + " ", p.success), (clean(todo.content), p.muted)))
        elif todo.status == "in_progress":
            body.add(Text.assemble((glyph + " ", p.accent),
                                   (clean(todo.activeForm or todo.content), p.accent + Style(bold=True))))
        else:
            body.add(Text.assemble((glyph + " ", ""), clean(todo.content)))
    if call.is_error:
        _result_lines(body, call, p)


def _todo_rows(call: ToolCall, session: Session) -> int:
    return len(todos(call.input)) + (_count_lines(_shown_result(call)) if call.is_error else 0)


def _agent_body(call: ToolCall, body: _Body, ctx: RenderContext) -> None:
    """A sub-agent card: what it is, how far it got, where to look."""
    p, session = ctx.palette, ctx.session
    inp = call.input if isinstance(call.input, dict) else {}
    agent = session.agents.get(call.subagent) if call.subagent else None
    task = session.tasks.get(call.task_id) if call.task_id else None
    kind = (agent.subagent_type if agent else None) or inp.get("subagent_type") \
        or (task.subagent_type if task else None) or "agent"
    desc = (agent.description if agent else "") or str(inp.get("description") or "")
    body.add(Text.assemble((clean(str(kind)), p.secondary), (" · " + clean(desc) if desc else "", "")))
    status = (task.status if task is not None else None) or (agent.status if agent else None) \
        or call.status
    key = normalise(status, "pending")
    line = Text(f"{STATUSES[key].glyph} {STATUSES[key].word}", _status_style(key, p))
    tools = (task.tool_uses if task is not None and task.tool_uses is not None else None)
    if tools is None and agent is not None:
        tools = agent.tool_calls
    if tools is not None:
        line.append(f" · {tools} tool{'s' if tools != 1 else ''}", p.muted)
    last = (agent.last_tool if agent is not None else None) or (task.last_tool if task else None)
    if last:
        line.append(" · last ", p.muted)
        line.append(clean(last))
    if agent is not None and agent.output_tokens:
        line.append(f" · {exact_count(agent.output_tokens)} tok out", p.muted)
    if task is not None and task.total_tokens:
        line.append(f" · {exact_count(task.total_tokens)} tok total", p.muted)
    if task is not None and task.duration_ms:
        line.append(f" · {format_duration(task.duration_ms / 1000)}", p.muted)
    elif call.elapsed is not None and status == "running":
        line.append(f" · {format_duration(call.elapsed)}", p.muted)
    body.add(line)
    summary = (task.summary if task is not None else None) or ""
    if not summary and call.result is not None and call.finished:
        summary = _shown_result(call)
    if summary:
        first = next((ln for ln in _lines(summary) if ln.strip() and not ln.lstrip().startswith("<")),
                     "")
        if first:
            body.add(Text.assemble(("↳ ", p.muted), (clean(first.strip()), p.error if call.is_error else "")))
    if call.subagent:
        body.add("enter: open sub-agent", p.muted + Style(italic=True))


def _agent_rows(call: ToolCall, session: Session) -> int:
    task = session.tasks.get(call.task_id) if call.task_id else None
    summary = (task.summary if task is not None else None) or ""
    if not summary and call.result is not None and call.finished:
        summary = _shown_result(call)
    has_summary = bool(summary) and any(ln.strip() and not ln.lstrip().startswith("<")
                                        for ln in _lines(summary))
    return 2 + has_summary + bool(call.subagent)


def _input_shown(tool: Raw) -> bool:
    """Whether a Raw tool's input needs its own lines: not when it is empty or a
    single string argument the header already shows."""
    inp = tool.input
    if inp in (None, {}, []):
        return False
    if isinstance(inp, dict) and len(inp) == 1:
        value = next(iter(inp.values()))
        return not (isinstance(value, str) and "\n" not in value.strip()
                    and len(value.strip()) <= 80)
    return True


def _raw_body(call: ToolCall, tool: Raw, body: _Body, width: int, expanded: bool,
              ctx: RenderContext) -> None:
    """Input as JSON (one cropped line while collapsed, pretty when expanded), then the result."""
    p = ctx.palette
    if _input_shown(tool):
        compact = input_json(tool.input, 0)
        if not expanded or len(compact) <= width - BODY_INDENT:
            body.add(compact, p.muted)
        else:
            body.add_output(input_json(tool.input, 2), p.muted)
    if call.result is not None:
        _result_lines(body, call, p)


def _raw_rows(call: ToolCall, tool: Raw, width: int, expanded: bool, session: Session) -> int:
    rows = 0
    if _input_shown(tool):
        compact = input_json(tool.input, 0)
        if not expanded or len(compact) <= width - BODY_INDENT:
            rows += 1
        else:
            rows += _count_lines(input_json(tool.input, 2))
    if call.result is not None:
        rows += _count_lines(_shown_result(call))
    return rows


def _tool_parts(call: ToolCall) -> tuple[object, str]:
    """The canonical tool and which body draws it."""
    tool = tool_from_use(call.name, call.input)
    if call.name in SUBAGENT_TOOLS or call.subagent:
        return tool, "agent"
    if call.name == "TodoWrite":
        return tool, "todo"
    match tool:
        case Bash():
            return tool, "bash"
        case Edit() | MultiEdit():
            return tool, "edit"
        case Read():
            return tool, "read"
        case Write():
            return tool, "write"
        case Command():
            return tool, "command"
    return tool, "raw"


def _tool(item: ToolItem, width: int, expanded: bool, ctx: RenderContext) -> list[Strip]:
    call = item.call
    tool, kind = _tool_parts(call)
    p = ctx.palette
    rows = [_header(call, tool, width, ctx)]
    body = _Body()
    fold: int | None = FOLD_LINES
    if kind == "bash":
        _bash_body(call, tool, body, ctx)  # type: ignore[arg-type]
    elif kind == "edit":
        _edit_body(call, tool, body, ctx)  # type: ignore[arg-type]
    elif kind == "read":
        _read_body(call, tool, body, ctx)  # type: ignore[arg-type]
        fold = READ_FOLD_LINES
    elif kind == "write":
        _write_body(call, tool, body, expanded, ctx)  # type: ignore[arg-type]
    elif kind == "todo":
        _todo_body(call, body, ctx)
    elif kind == "agent":
        _agent_body(call, body, ctx)
        fold = None
    elif kind == "command":
        if call.result is not None:
            _result_lines(body, call, p, style=p.muted)
    else:
        _raw_body(call, tool, body, width, expanded, ctx)  # type: ignore[arg-type]
    if call.status == "denied":
        body.add_output(_denial(call), p.warning)
    rows += _layout_body(body.lines, width, expanded, fold, ctx)
    return rows


def _tool_h(item: ToolItem, width: int, expanded: bool, session: Session) -> int:
    call = item.call
    tool, kind = _tool_parts(call)
    fold: int | None = FOLD_LINES
    if kind == "bash":
        n = _bash_rows(call, tool, session)  # type: ignore[arg-type]
    elif kind == "edit":
        n = _edit_rows(call, tool, session)  # type: ignore[arg-type]
    elif kind == "read":
        n = _read_rows(call, tool, session)  # type: ignore[arg-type]
        fold = READ_FOLD_LINES
    elif kind == "write":
        n = _write_rows(call, tool, session)  # type: ignore[arg-type]
    elif kind == "todo":
        n = _todo_rows(call, session)
    elif kind == "agent":
        n = _agent_rows(call, session)
        fold = None
    elif kind == "command":
        n = _count_lines(_shown_result(call)) if call.result is not None else 0
    else:
        n = _raw_rows(call, tool, width, expanded, session)  # type: ignore[arg-type]
    if call.status == "denied":
        n += _count_lines(_denial(call))
    return 1 + (n if expanded else _folded_height(n, fold))


# compaction, hooks, notices, footers, problems --------------------------------------------------

def _compaction_label(item: CompactionItem) -> str:
    if item.failed:
        return f"compaction failed: {item.error}" if item.error else "compaction failed"
    label = "compacted"
    if item.trigger:
        label += f" ({item.trigger})"
    if item.pre_tokens is not None:
        label += f" {exact_count(item.pre_tokens)}"
        if item.post_tokens is not None:
            label += f" → {exact_count(item.post_tokens)}"
        label += " tokens"
    if item.duration_ms is not None:
        label += f" · {format_duration(item.duration_ms / 1000)}"
    return label


def _compaction(item: CompactionItem, width: int, expanded: bool, ctx: RenderContext) -> list[Strip]:
    p, console = ctx.palette, ctx.console
    style = p.error if item.failed else p.secondary
    rows = [_rule(Text(clean(_compaction_label(item)), style), width, style, console)]
    if expanded and item.summary:
        text = _text(item.summary.strip("\n"), p.muted)
        rows += [_indent(s, BODY_INDENT) for s in _wrap(text, width - BODY_INDENT, console)]
    return rows


def _compaction_h(item: CompactionItem, width: int, expanded: bool, session: Session) -> int:
    if expanded and item.summary:
        return 1 + _wrapped_rows(item.summary.strip("\n"), width - BODY_INDENT)
    return 1


def _hook_body(item: HookItem) -> list[tuple[str, str]]:
    h = item.hook
    parts: list[tuple[str, str]] = []
    if h.stdout.strip():
        parts.append((h.stdout, ""))
    if h.stderr.strip():
        parts.append((h.stderr, "stderr"))
    if h.output.strip() and h.output.strip() not in (h.stdout.strip(), h.stderr.strip(),
                                                     (h.stdout + h.stderr).strip()):
        parts.append((h.output, ""))
    return parts


def _hook(item: HookItem, width: int, expanded: bool, ctx: RenderContext) -> list[Strip]:
    p, console, h = ctx.palette, ctx.console, item.hook
    key = normalise(h.status)
    glyph, colour = STATUSES[key].glyph, _status_style(key, p)
    chip = Text.assemble((f"{HOOK} ", p.muted), (clean(h.name), p.error if key == "failed" else ""),
                         " ", (glyph, colour))
    if key == "running":
        chip.append(f" {STATUSES[key].word}", colour)
        if h.progress:
            chip.append(f" · {h.progress} update{'s' if h.progress != 1 else ''}", p.muted)
    elif h.exit_code is not None:
        chip.append(f" exit {h.exit_code}", p.error if h.exit_code else p.muted)
    elif key != "done":
        chip.append(f" {STATUSES[key].word}", colour)
    body = _hook_body(item)
    if body and not expanded:
        first = next(ln for text, _ in body for ln in _lines(text) if ln.strip())
        chip.append("  " + clean(first.strip()), p.muted)
    rows = [_crop(chip, width, console)]
    if expanded:
        lines = _Body()
        for text, role in body:
            lines.add_output(text, (p.error if h.status == "error" else p.warning) if role else "")
        rows += _layout_body(lines.lines, width, True, None, ctx)
    return rows


def _hook_h(item: HookItem, width: int, expanded: bool, session: Session) -> int:
    if not expanded:
        return 1
    return 1 + sum(_wrapped_rows(text.rstrip("\n"), width - BODY_INDENT) for text, _ in _hook_body(item))


def _stop_summary(item: StopSummaryItem, width: int, expanded: bool,
                  ctx: RenderContext) -> list[Strip]:
    p, console = ctx.palette, ctx.console
    line = Text(f"↳ stop hooks · {item.count} ran", p.muted)
    if item.errors:
        line.append(f" · {len(item.errors)} error{'s' if len(item.errors) != 1 else ''}", p.error)
    if item.prevented:
        line.append(" · prevented continuation", p.warning)
    if item.stop_reason:
        line.append(f" · {clean(item.stop_reason)}", p.muted)
    rows = [_crop(line, width, console)]
    if expanded:
        body = _Body()
        for info in item.infos:
            if not isinstance(info, dict):
                continue
            cmd = Text(clean(str(info.get("command") or "?")))
            if info.get("durationMs") is not None:
                cmd.append(f"  {format_duration(float(info['durationMs']) / 1000)}", p.muted)
            body.add(cmd)
        for err in item.errors:
            body.add_output(str(err), p.error)
        rows += _layout_body(body.lines, width, True, None, ctx)
    return rows


def _stop_summary_h(item: StopSummaryItem, width: int, expanded: bool, session: Session) -> int:
    if not expanded:
        return 1
    rows = 0
    for info in item.infos:
        if isinstance(info, dict):
            cmd = str(info.get("command") or "?")
            extra = 8 if info.get("durationMs") is not None else 0
            rows += _wrapped_rows(cmd + " " * extra, width - BODY_INDENT)
    for err in item.errors:
        rows += _wrapped_rows(str(err).rstrip("\n"), width - BODY_INDENT)
    return 1 + rows


def _level_style(level: str, p: Palette) -> Style:
    return {"error": p.error, "warning": p.warning}.get(level, p.muted)


def _notice(item: NoticeItem, width: int, expanded: bool, ctx: RenderContext) -> list[Strip]:
    p, console = ctx.palette, ctx.console
    style = _level_style(item.level, p)
    glyph = NOTICE_GLYPHS.get(item.level, NOTICE_GLYPHS["info"])
    lines = _lines(item.text) or [""]
    head = Text.assemble((f"{glyph} ", style), (f"[{item.category}] ", p.muted),
                         (clean(lines[0]), style))
    if not expanded:
        if len(lines) > 1 or item.detail:
            head.append(" …", p.muted)
        return [_crop(head, width, console)]
    rows = _wrap(head, width, console)
    rest = "\n".join(lines[1:])
    if item.detail:
        rest = f"{rest}\n{item.detail}" if rest else item.detail
    if rest:
        rows += [_indent(s, BODY_INDENT) for s in _wrap(_text(rest, style), width - BODY_INDENT, console)]
    return rows


def _notice_h(item: NoticeItem, width: int, expanded: bool, session: Session) -> int:
    if not expanded:
        return 1
    lines = _lines(item.text) or [""]
    head = 4 + len(item.category) + len(lines[0])
    rows = 1 if head <= width else -(-head // width)
    rest = "\n".join(lines[1:])
    if item.detail:
        rest = f"{rest}\n{item.detail}" if rest else item.detail
    if rest:
        rows += _wrapped_rows(rest, width - BODY_INDENT)
    return rows


def _footer_label(item: TurnFooterItem) -> tuple[str, str]:
    t = item.turn_ref
    parts = [f"turn {t.index + 1}"]
    if t.duration_ms is not None:
        dur = format_duration(t.duration_ms / 1000)
        if t.duration_api_ms:
            dur += f" (api {format_duration(t.duration_api_ms / 1000)})"
        parts.append(dur)
    if t.cost_usd is not None:
        parts.append(f"${t.cost_usd:.4f}")
    u = t.usage
    tokens_in = u.input_tokens + u.cache_creation_input_tokens + u.cache_read_input_tokens
    if tokens_in or u.output_tokens:
        parts.append(f"in {compact_count(tokens_in)} out {compact_count(u.output_tokens)}")
    if t.tool_calls:
        parts.append(f"{t.tool_calls} tool{'s' if t.tool_calls != 1 else ''}")
    problem = ""
    if t.is_error or (t.subtype and t.subtype != "success"):
        problem = f"{PROBLEM} {clean(t.subtype or 'error')}"
    elif t.terminal_reason and t.terminal_reason not in ("completed",):
        problem = f"{PROBLEM} {clean(t.terminal_reason)}"
    return " · ".join(parts), problem


def _footer(item: TurnFooterItem, width: int, expanded: bool, ctx: RenderContext) -> list[Strip]:
    p = ctx.palette
    label, problem = _footer_label(item)
    text = Text(label, p.muted)
    if problem:
        text.append(" · ", p.muted)
        text.append(problem, p.error if item.turn_ref.is_error else p.warning)
    head = Text.assemble(("── ", p.muted), text, " ")
    fill = max(width - head.cell_len, 0)
    head.append("─" * fill, p.muted)
    rows = [_crop(head, width, ctx.console)]
    if expanded:
        t = item.turn_ref
        body = _Body()
        for err in t.errors:
            body.add_output(err, p.error)
        if t.result_text:
            body.add_output(t.result_text, p.muted)
        rows += _layout_body(body.lines, width, True, None, ctx)
    return rows


def _footer_h(item: TurnFooterItem, width: int, expanded: bool, session: Session) -> int:
    if not expanded:
        return 1
    t = item.turn_ref
    rows = sum(_wrapped_rows(e.rstrip("\n"), width - BODY_INDENT) for e in t.errors if e.strip())
    if t.result_text and t.result_text.strip():
        rows += _wrapped_rows(t.result_text.rstrip("\n"), width - BODY_INDENT)
    return 1 + rows


def _problem_text(item: ProblemItem) -> str:
    glyph = UNKNOWN if item.problem == "unknown" else PROBLEM
    return f"{glyph} line {item.line_no}: {item.reason}"


def _problem(item: ProblemItem, width: int, expanded: bool, ctx: RenderContext) -> list[Strip]:
    text = Text(clean(_problem_text(item)), ctx.palette.warning)
    if expanded:
        return _wrap(text, width, ctx.console)
    return [_crop(text, width, ctx.console)]


def _problem_h(item: ProblemItem, width: int, expanded: bool, session: Session) -> int:
    return _wrapped_rows(_problem_text(item), width) if expanded else 1


Renderer = Callable[[Item, int, bool, RenderContext], list[Strip]]
Estimator = Callable[[Item, int, bool, "Session"], int]

_RENDERERS: dict[type, Renderer] = {
    PromptItem: _prompt, TextItem: _markdown, ThinkingItem: _thinking, ToolItem: _tool,
    CompactionItem: _compaction, HookItem: _hook, StopSummaryItem: _stop_summary,
    NoticeItem: _notice, TurnFooterItem: _footer, ProblemItem: _problem,
}  # type: ignore[dict-item]
_ESTIMATORS: dict[type, Estimator] = {
    PromptItem: _prompt_h, TextItem: _markdown_h, ThinkingItem: _thinking_h, ToolItem: _tool_h,
    CompactionItem: _compaction_h, HookItem: _hook_h, StopSummaryItem: _stop_summary_h,
    NoticeItem: _notice_h, TurnFooterItem: _footer_h, ProblemItem: _problem_h,
}  # type: ignore[dict-item]


def plain_rows(strips: Iterable[Strip]) -> list[str]:
    """The text of rendered rows (for tests and search previews)."""
    return [strip.text for strip in strips]
