"""The status bar: one line of what the session is and does now.

It reads :class:`~reducer.fold.Session` attributes (never frames) and is
re-drawn by the app calling :meth:`StatusBar.update_state`; when the terminal
is narrow it drops its least important parts first. Every string from the
session or the source (model, tool name, path, why it ended) is made visible
text by :func:`widgets.safe_text.visible` before it is measured, and the bar is
built from plain Content, never markup.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.content import Content
from textual.widgets import Static

from cctv.reducer.costs import CostMemo, cost_text
from cctv.reducer.facts import call_duration, final_state, tokens
from cctv.reducer.format import WORDS, clip, compact_count, format_duration, plural, short_path
from cctv.reducer.fold import Session
from cctv.reducer.state import Activity

from .home import home
from .safe_text import visible
from .status_glyphs import BACKGROUND, ENDED, FOLLOW, IDLE, PAUSED, PROBLEM, STATUSES, THINKING, css

__all__ = ["StatusBar", "status_parts"]

_SEP = " │ "


@dataclass(frozen=True, slots=True)
class _Part:
    """One field of the bar: shown in ``order``; when space is short, fields are
    placed highest ``priority`` first, each in full, else in its ``short`` form,
    else left out."""

    order: int
    priority: int
    content: Content
    short: Content | None = None
    source: str | None = None
    """For the source label: its text, cut in the middle to fit what is left."""


def _ended(reason: str | None) -> Content:
    return Content.assemble((f"{ENDED.glyph} {ENDED.word}", css(ENDED.role, ENDED.bold)),
                            (f" · {visible(reason, oneline=True)}" if reason else "",
                             "$text-muted"))


def _activity(session: Session, ended: str | None, settled: bool = False) -> Content:
    running = STATUSES["running"]
    if ended is not None:
        return _ended(ended)
    activity = session.activity
    if settled or session.exited:
        # the input has stopped growing (or the user ended the session): what it ended in
        final = final_state(session)
        if final == "ended":
            return _ended(None)
        if final != activity.kind:
            activity = Activity(final)
    kind = activity.kind
    text = visible(activity.text, oneline=True)
    if kind == "idle":
        return Content.styled(f"{IDLE.glyph} {IDLE.word}", css(IDLE.role))
    if kind == "thinking":
        return Content.assemble((f"{THINKING} thinking", "bold $text-accent"),
                                (f" · {compact_count(session.live_thinking_tokens)} tok",
                                 "$text-accent"))
    if kind == "compacting":
        return Content.styled(f"{running.glyph} compacting", css(running.role, True))
    if kind == "running":
        call = session.calls.get(activity.call_id or "")
        took = call_duration(call) if call is not None else None
        elapsed = format_duration(took) if took else ""
        return Content.assemble((f"{running.glyph} ", css(running.role, True)),
                                (text, css(running.role, True)),
                                (f" {elapsed}" if elapsed else "", css(running.role)))
    if kind == "background":  # the turn ended; a background shell or agent still runs
        return Content.styled(f"{BACKGROUND.glyph} {text}", css(BACKGROUND.role, True))
    return Content.styled(f"{running.glyph} {text}", "bold $text-primary")


def _model(session: Session) -> str:
    model = visible(session.model, oneline=True) or "model ?"
    return model.removeprefix("claude-")


def _rate_limit(session: Session, now: float | None) -> Content | None:
    info = session.rate_limit
    if not info:
        return None
    status = info.get("status")
    if status in (None, "allowed"):
        return None
    text = "rate limited" if status == "rejected" else "near rate limit"
    resets = info.get("resetsAt")
    if now is not None and isinstance(resets, (int, float)) and resets > now:
        text += f" · resets in {format_duration(resets - now)}"
    style = "bold $text-error" if status == "rejected" else "$text-warning"
    return Content.styled(f"{PROBLEM} {text}", style)


_UNITS = ((1e9, "GB"), (1e6, "MB"), (1e3, "kB"), (1.0, "bytes"))
_BAR_CELLS = 10


def reading_progress(done: int, total: int) -> tuple[str, str]:
    """``("reading 35 of 100 MB", "███▌░░░░░░")``: how far a history is read,
    in the unit of its size, and as a bar of :data:`_BAR_CELLS` cells."""
    done = max(0, min(done, total))
    scale, unit = next((s, u) for s, u in _UNITS if total >= s or s == 1.0)
    digits = 0 if total / scale >= 10 or scale == 1.0 else 1
    text = f"reading {done / scale:.{digits}f} of {total / scale:.{digits}f} {unit}"
    halves = 0 if total <= 0 else round(2 * _BAR_CELLS * done / total)
    bar = "█" * (halves // 2) + "▌" * (halves % 2)
    return text, bar + "░" * (_BAR_CELLS - len(bar))


_SOURCE_STYLES = {"information": "$text-primary", "warning": "bold $text-warning",
                  "error": "bold $text-error"}


_COSTS = CostMemo()
"""The shown session's cost, worked out again only when its requests change."""


def status_parts(session: Session, *, source: str, following: bool, ended: str | None = None,
                 now: float | None = None,
                 loading: tuple[int, int] | None = None, filtered: str = "",
                 source_state: tuple[str, str, str | None] | None = None,
                 settled: bool = False, elsewhere: str | None = None) -> list[_Part]:
    """The fields of the bar, in display order, each with its priority;
    ``filtered`` says what the view hides (``"only errors"``), ``""`` for nothing;
    ``source_state`` is what the source says now (text, level, and a shorter
    form of the text for a narrow bar, ``None``: none); ``settled``: the input
    has stopped growing (a file read to its end, or not grown for long): the
    bar shows what the session ended in, as ``cctv summary`` says it."""
    parts: list[_Part] = [
        _Part(0, 100, _activity(session, ended, settled),
              short=Content.styled(f"{ENDED.glyph} {visible(ended, oneline=True)}",
                                   css(ENDED.role, ENDED.bold)) if ended else None),
        _Part(10, 70, Content.styled(_model(session), "bold")),
    ]
    parts.append(_Part(20, 50, Content(plural(session.model_turns, WORDS["turns"]))))
    cost = _COSTS.cost(session)  # recorded, else estimated (~$), "–" unknown (never $0)
    parts.append(_Part(30, 80, Content.styled(
        cost_text(cost), "$text-success" if cost is not None and cost.usd is not None
        else "$text-muted")))
    spent = tokens(session)
    parts.append(_Part(40, 40, Content.assemble(
        (f"{WORDS['in']} ", "$text-muted"), compact_count(spent.total_in),
        (f" {WORDS['out']} ", "$text-muted"), compact_count(spent.output))))
    window = session.context_window
    if window:
        used = session.context_tokens or 0
        pct = round(100 * used / window)
        style = "$text-error" if pct >= 90 else "$text-warning" if pct >= 75 else ""
        parts.append(_Part(50, 60, Content.assemble(
            ("ctx ", "$text-muted"),
            (f"{compact_count(used)}/{compact_count(window)} {pct}%", style)),
            short=Content.assemble(("ctx ", "$text-muted"), (f"{pct}%", style))))
    limit = _rate_limit(session, now)
    if limit is not None:
        parts.append(_Part(60, 75, limit))
    if loading is not None:
        text, bar = reading_progress(*loading)
        parts.append(_Part(70, 95, Content.assemble((text, "bold $text-warning"), " ",
                                                    (bar, "$text-warning")),
                           short=Content.styled(text, "bold $text-warning")))
    if session.is_error and ended is None:
        failed = STATUSES["failed"]
        parts.append(_Part(5, 85, Content.styled(f"{failed.glyph} turn failed",
                                                 css(failed.role, failed.bold))))
    if following:
        parts.append(_Part(80, 90, Content.styled(f"{FOLLOW} follow", "$text-success")))
    else:
        parts.append(_Part(80, 90, Content.styled(f"{PAUSED} paused (G to follow)",
                                                  "bold $text-warning"),
                           short=Content.styled(f"{PAUSED} paused", "bold $text-warning")))
    if filtered:
        parts.append(_Part(75, 88, Content.styled(f"filter: {visible(filtered, oneline=True)}",
                                                  "bold $text-accent"),
                           short=Content.styled("filtered", "bold $text-accent")))
    if source_state is not None:
        text, level, short = source_state
        style = _SOURCE_STYLES.get(level, "$text-muted")
        parts.append(_Part(85, 88, Content.styled(text, style),
                           short=Content.styled(short, style) if short else None))
    if elsewhere:
        parts.append(_Part(3, 92, Content.styled(visible(elsewhere, oneline=True),
                                                 "bold $text-warning")))
    if source:
        source = visible(source, oneline=True)
        parts.append(_Part(90, 30, Content.styled(source, "$text-muted"), source=source))
    return parts


_MIN_SOURCE = 12


def _source_label(source: str, room: int) -> str:
    """A path with ``~`` and its middle cut; anything else (``stdin``,
    ``cmd: …``) cut at the end."""
    if source.startswith(("/", "~", "./", "../")):
        return short_path(source, room, home())
    return clip(source, room)


def _fit(parts: list[_Part], width: int) -> Content:
    """The parts that fit ``width``, in display order, joined by separators."""
    sep = len(_SEP)
    chosen: dict[int, Content] = {}
    used = -sep
    for part in sorted(parts, key=lambda p: -p.priority):
        room = width - used - sep
        if part.source is not None:
            if room >= min(_MIN_SOURCE, part.content.cell_length):
                label = _source_label(part.source, room)
                chosen[part.order] = Content.styled(label, "$text-muted")
                used += sep + len(label)
            continue
        for form in (part.content, part.short):
            if form is not None and form.cell_length <= room:
                chosen[part.order] = form
                used += sep + form.cell_length
                break
        else:
            if not chosen:  # not even the most important part fits: cut it
                chosen[part.order] = part.content.truncate(max(width, 1), ellipsis=True)
                used = width
    ordered = [chosen[k] for k in sorted(chosen)]
    return Content(_SEP).stylize("$text-muted").join(ordered)


class StatusBar(Static):
    """One line: activity, model, turns, cost, tokens, context, follow state, source.

    The app docks it (above its Footer) and calls :meth:`update_state` whenever
    the session changes or a clock tick should refresh elapsed times.
    """

    DEFAULT_CSS = """
    StatusBar {
        height: 1;
        width: 1fr;
        padding: 0 1;
        background: $panel;
        color: $foreground;
    }
    """

    def __init__(self, *, name: str | None = None, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__("", name=name, id=id, classes=classes)
        self._parts: list[_Part] = []

    def update_state(self, session: Session, *, source: str, following: bool,
                     ended: str | None = None, now: float | None = None,
                     loading: tuple[int, int] | None = None, filtered: str = "",
                     source_state: tuple[str, str, str | None] | None = None,
                     settled: bool = False, elsewhere: str | None = None) -> None:
        """Re-draw from ``session``.

        ``source`` labels the input (a path, ``"stdin"``, ``"cmd: …"``);
        ``following`` is whether the view sticks to the end; ``ended`` (e.g.
        ``"exited 3"``) marks a source that has finished; ``now`` (epoch
        seconds) is the clock for relative times; ``loading`` is
        ``(bytes_done, bytes_total)`` while the initial read is under way;
        ``filtered`` says what the transcript's filter hides; ``source_state`` is
        what the source says now (text, level: information, warning or error,
        a shorter text or ``None``), e.g. ``("deleted · waiting for it to come
        back", "warning", "deleted")``;
        ``settled``: the input has not grown for long (see :func:`status_parts`);
        ``elsewhere``: what another live session asks of you."""
        self._parts = status_parts(session, source=source, following=following, ended=ended,
                                   now=now, loading=loading, filtered=filtered,
                                   source_state=source_state, settled=settled,
                                   elsewhere=elsewhere)
        self._draw()

    @property
    def text(self) -> str:
        """The plain text the bar shows now (for tests and screen readers)."""
        content = self.content
        return content.plain if isinstance(content, Content) else str(content)

    def _draw(self) -> None:
        width = self.content_region.width or (self.app.size.width - 2 if self.is_attached else 78)
        self.update(_fit(self._parts, max(width, 1)))

    def on_resize(self) -> None:
        if self._parts:
            self._draw()
