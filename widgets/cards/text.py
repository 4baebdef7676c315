"""Prompts, assistant replies (Markdown) and thinking blocks."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.markdown import Markdown
from rich.style import Style
from rich.text import Text
from textual.strip import Strip

from reducer.state import MAIN, PromptItem, TextItem, ThinkingItem

from .base import (
    BODY_INDENT,
    EXPAND_LINES,
    MARKDOWN_LIMIT,
    PLAIN_LIMIT,
    PROMPT_FOLD_LINES,
    Palette,
    RenderContext,
    _count_lines,
    _crop,
    _folded_height,
    _head,
    _head_lines,
    _indent,
    _layout_body,
    _lines,
    _render,
    _text,
    _wrap,
    _wrapped_rows,
    clean,
    fmt_tokens,
)

if TYPE_CHECKING:
    from reducer.session import Session


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
        rows = _render(Markdown(clean(shown), code_theme=theme, inline_code_lexer="text",
                                inline_code_theme=theme), width, ctx.console)
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
    md = Markdown(clean(source), code_theme=theme, inline_code_lexer="text",
                  inline_code_theme=theme)
    strips = _render(md, width, ctx.console)
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
    label = Text("✻ thinking", p.muted + Style(italic=True))
    if item.redacted:
        label.append(" (redacted)", p.muted)
    if item.streaming:
        label.append("…", p.muted)
    if item.tokens:
        label.append(f" · {fmt_tokens(item.tokens)} tok", p.muted)
    elif item.text:
        label.append(f" · ~{fmt_tokens(max(len(item.text) // 4, 1))} tok", p.muted)
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


