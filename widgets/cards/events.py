"""One-line and divider items: compactions, hooks, stop-hook summaries,
notices, turn footers and problem rows."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.style import Style
from rich.text import Text
from textual.strip import Strip

from cctv.reducer.state import (
    CompactionItem,
    HookItem,
    NoticeItem,
    ProblemItem,
    StopSummaryItem,
    TurnFooterItem,
)

from cctv.reducer.format import exact_count, format_duration, plural
from cctv.reducer.turn_footer import turn_failure, turn_footer

from ..status_glyphs import HOOK, HOOK_RAN, NOTICE_GLYPHS, PROBLEM, STATUSES, UNKNOWN
from .base import (
    BODY_INDENT,
    LONG_LINE,
    Palette,
    RenderContext,
    _Body,
    _crop,
    _expanded_rows,
    _layout_body,
    _lines,
    _rule,
    _wrap,
    _wrapped_rows,
    clean,
)

if TYPE_CHECKING:
    from cctv.reducer.fold import Session


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
        body = _Body()
        body.add_output(item.summary.lstrip("\n"), p.muted)
        rows += _layout_body(body, width, expanded, None, ctx)
    return rows


def _compaction_h(item: CompactionItem, width: int, expanded: bool, session: Session) -> int:
    if expanded and item.summary:
        return 1 + _expanded_rows(item.summary.lstrip("\n"), width - BODY_INDENT, expanded)
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
    key = h.status
    look = HOOK_RAN if key == "ran" else STATUSES[key]
    colour = getattr(p, look.role)
    chip = Text.assemble((f"{HOOK} ", p.muted), (clean(h.label), p.error if key == "failed" else ""),
                         " ", (look.glyph, colour))
    if key == "running":
        chip.append(f" {look.word}", colour)
        if h.progress:
            chip.append(f" · {plural(h.progress, 'update')}", p.muted)
    elif h.exit_code is not None:
        chip.append(f" exit {h.exit_code}", p.error if h.exit_code else p.muted)
    elif key != "done":
        chip.append(f" {look.word}", colour)
    body = _hook_body(item)
    if body and not expanded:
        first = next(ln for text, _ in body for ln in _lines(text) if ln.strip())
        chip.append("  " + clean(first.strip()), p.muted)
    rows = [_crop(chip, width, console)]
    if expanded:
        lines = _Body()
        for text, role in body:
            lines.add_output(text, (p.error if h.status == "failed" else p.warning) if role else "")
        rows += _layout_body(lines, width, True, None, ctx)
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
        line.append(f" · {plural(len(item.errors), 'error')}", p.error)
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
        rows += _layout_body(body, width, True, None, ctx)
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
    first, rest = _notice_parts(item)
    head = Text.assemble((f"{glyph} ", style), (f"[{clean(item.category)}] ", p.muted),
                         (clean(first), style))
    if not expanded:
        if rest:
            head.append(" …", p.muted)
        return [_crop(head, width, console)]
    rows = _wrap(head, width, console)
    if rest:
        body = _Body()
        body.add_output(rest, style)
        rows += _layout_body(body, width, expanded, None, ctx)
    return rows


def _notice_parts(item: NoticeItem) -> tuple[str, str]:
    """The first line of a notice (its chip) and the rest with the detail (its body)."""
    text = item.text.strip("\n")
    cut = text.find("\n")
    first, rest = (text, "") if cut < 0 else (text[:cut], text[cut + 1:])
    if item.detail:
        rest = f"{rest}\n{item.detail}" if rest else item.detail
    return first[:LONG_LINE], rest


def _notice_h(item: NoticeItem, width: int, expanded: bool, session: Session) -> int:
    if not expanded:
        return 1
    first, rest = _notice_parts(item)
    head = 4 + len(item.category) + len(first)
    rows = 1 if head <= width else -(-head // width)
    if rest:
        rows += _expanded_rows(rest, width - BODY_INDENT, expanded)
    return rows


def _footer_label(item: TurnFooterItem) -> tuple[str, str]:
    t = item.turn_ref
    problem = ""
    failure = turn_failure(t)
    if t.outcome == "interrupted":
        problem = f"{STATUSES['interrupted'].glyph} {STATUSES['interrupted'].word}"
    elif failure is not None:
        problem = f"{STATUSES['failed'].glyph} {STATUSES['failed'].word} · {clean(failure)}"
    elif t.terminal_reason and t.terminal_reason not in ("completed",):
        problem = f"{PROBLEM} {clean(t.terminal_reason)}"
    return " · ".join(turn_footer(t)), problem


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
        rows += _layout_body(body, width, True, None, ctx)
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
    if item.count > 1:
        return (f"{glyph} lines {item.line_no:,}–{item.last_line_no:,} "
                f"({item.count:,} lines): {item.reason}")
    return f"{glyph} line {item.line_no}: {item.reason}"


def _problem(item: ProblemItem, width: int, expanded: bool, ctx: RenderContext) -> list[Strip]:
    text = Text(clean(_problem_text(item)), ctx.palette.warning)
    if expanded:
        return _wrap(text, width, ctx.console)
    return [_crop(text, width, ctx.console)]


def _problem_h(item: ProblemItem, width: int, expanded: bool, session: Session) -> int:
    return _wrapped_rows(_problem_text(item), width) if expanded else 1

