"""Prompts, assistant replies (Markdown) and thinking blocks."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.style import Style
from rich.text import Text
from textual.strip import Strip

from cctv.reducer.state import MAIN, PromptItem, TextItem, ThinkingItem
from cctv.reducer.format import exact_count, plural
from cctv.reducer.queries import item_images

from ..reply_markdown import reply_markdown
from ..status_glyphs import THINKING

from .base import (
    BODY_INDENT,
    MARKDOWN_LIMIT,
    PROMPT_FOLD_LINES,
    Palette,
    RenderContext,
    _Body,
    _count_lines,
    _crop,
    _expanded_rows,
    _folded_height,
    _head,
    _indent,
    _layout_body,
    _render,
    _text,
    _wrap,
    _wrapped_rows,
    clean,
    image_lines,
)

if TYPE_CHECKING:
    from cctv.reducer.fold import Session


# prompt ---------------------------------------------------------------------------------

def _prompt(item: PromptItem, width: int, expanded: bool, ctx: RenderContext) -> list[Strip]:
    p, console = ctx.palette, ctx.console
    who = "you" if item.agent == MAIN else "prompt"
    label = Text.assemble(("▌ ", p.band_label), (who, p.band_label))
    if item.turn is not None:
        label.append(f" · turn {item.turn + 1}", p.muted)
    images = item_images(item)
    if images:
        label.append(f" · {plural(len(images), 'image')}", p.muted)
    for chip in getattr(item, "context", ()):  # what the IDE attached
        label.append(f" · ⌘ {clean(chip)}", p.muted)
    rows = [_crop(label, width, console)]
    body = _Body()
    body.add_output(item.text)
    if not body.count and not images:
        body.add(Text(""))
    image_lines(body, images, p)
    rows += _layout_body(body, width, expanded, PROMPT_FOLD_LINES, ctx)
    return [row.extend_cell_length(width, p.band).apply_style(p.band) for row in rows]


def _prompt_h(item: PromptItem, width: int, expanded: bool, session: Session) -> int:
    images = len(item_images(item))
    if expanded:
        return 1 + _expanded_rows(item.text, width - BODY_INDENT, expanded) + images
    lines = _count_lines(item.text) + images
    return 1 + _folded_height(max(lines, 1), PROMPT_FOLD_LINES)


# assistant text ----------------------------------------------------------------------------

def _huge_text(item: TextItem, width: int, expanded: bool, ctx: RenderContext) -> list[Strip]:
    """A reply too long to lay out as Markdown at every redraw: the Markdown of its
    start while folded, all of it as plain text (page by page) when expanded."""
    text = item.text
    if expanded:
        body = _Body()
        body.add_output(text)
        return _layout_body(body, width, expanded, None, ctx, 0)
    shown = _head(text, MARKDOWN_LIMIT)
    theme = ctx.palette.code_theme
    rows = _render(reply_markdown(shown, theme), width, ctx.console)
    hint = Text(f"… {len(text) - len(shown):,} more characters (enter: show all as plain text)",
                ctx.palette.muted)
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
        if expanded:
            return _expanded_rows(text, width, expanded)
        return _wrapped_rows(_head(text, MARKDOWN_LIMIT).strip("\n"), width) + 1
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
        else:  # a huge block: its lines, page by page like any expanded body
            body = _Body()
            body.add_output(item.text, p.muted + Style(italic=True))
            rows += _layout_body(body, width, expanded, None, ctx)
    return rows


def _thinking_h(item: ThinkingItem, width: int, expanded: bool, session: Session) -> int:
    if expanded and item.text:
        if len(item.text) <= MARKDOWN_LIMIT:
            return 1 + _wrapped_rows(item.text.strip("\n"), width - BODY_INDENT)
        return 1 + _expanded_rows(item.text, width - BODY_INDENT, expanded)
    return 1


