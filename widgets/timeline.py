"""The replay timeline: the whole session as one strip along the bottom.

Row one is the strip: each column stands for a stretch of frames and shows
its most telling marker (an error over a compaction over a task event over a
turn over a hook over a tool call). Hooks and tool calls, which come by the
dozen, are drawn as density — a bar as high as how many of that kind fall in
the column, against the busiest column — so a hook-heavy session is a
profile, not a wall of one glyph. The current position is a reversed ``▼``
of its own, never a marker's glyph, so it is found in any crowd.
Row two has the recorded wall-clock time and the frame number. A click seeks.

Drawn with the Line API: the strip's row is built once per width, markers and
theme, and a seek only puts the position mark into it (three crops), so
moving costs the same whatever the number of markers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.message import Message
from textual.strip import Strip
from textual.widget import Widget

from cctv.reducer.replay import MarkerKind

from .safe_text import visible
from .status_glyphs import STATUSES

__all__ = ["ReplayTimeline", "MARKER_GLYPHS"]

MARKER_GLYPHS: dict[MarkerKind, tuple[str, str]] = {
    "error": (STATUSES["failed"].glyph, "$text-error"),
    "compaction": ("◆", "$text-accent"),
    "task": ("▪", "$text-success"),
    "turn": ("│", "$text-primary"),
    "hook": ("h", "$text-warning"),
    "tool": ("·", "$text-secondary"),
}
"""Glyph and colour of each marker kind, most telling first (the glyph of a
:data:`DENSE` kind stands for it in the help; the strip draws its density)."""
_RANK = {kind: rank for rank, kind in enumerate(MARKER_GLYPHS)}
DENSE: frozenset[MarkerKind] = frozenset({"hook", "tool"})
"""Kinds drawn by how many fall in a column."""
LEVELS = "▁▂▃▄▅▆"
"""Density bars, fewest first (no full block: the position's mark is the only one)."""


class _AtFrame(Message):
    """A message of the timeline about one frame (``position``, 1-based)."""

    def __init__(self, timeline: ReplayTimeline, position: int | None) -> None:
        super().__init__()
        self.timeline = timeline
        self.position = position

    @property
    def control(self) -> ReplayTimeline:
        return self.timeline


class ReplayTimeline(Widget, can_focus=False):
    """Markers, position and time of a replay; click to seek."""

    DEFAULT_CSS = """
    ReplayTimeline {
        height: 2;
        background: $panel;
        color: $text-muted;
    }
    """

    class Seek(_AtFrame):
        """The user clicked the strip: go to ``position`` (1-based frame)."""

        position: int

    class Aim(_AtFrame):
        """The pointer rests over the strip at ``position`` (1-based frame), or
        left it (``None``): where a click may go next."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._aim: int | None = None
        self.total = 0
        self.position = 0
        self._marks: Mapping[int, Sequence[MarkerKind]] = {}
        self._columns: tuple[int, list[tuple[MarkerKind, str] | None]] | None = None
        """Per strip width: each column's winning kind and glyph."""
        self._row: tuple[tuple, Strip] | None = None
        """The strip's row without the position mark, and what it was drawn for."""
        self.left_label = ""
        self.right_label = ""

    def set_markers(self, total: int, marks: Mapping[int, Sequence[MarkerKind]]) -> None:
        """The frame count and the marker kinds of each marked frame (0-based)."""
        self.total = total
        self._marks = marks
        self._columns = None
        self.refresh()

    def set_position(self, position: int, left: str, right: str) -> None:
        """Where the replay is (1-based; 0 = before the first frame) and the labels."""
        if (position, left, right) != (self.position, self.left_label, self.right_label):
            self.position, self.left_label, self.right_label = position, left, right
            self.refresh()

    def _strip_width(self) -> int:
        return max(self.size.width - 2, 1)

    def column_of(self, position: int) -> int:
        """The column (0-based, within the strip) of a 1-based frame position."""
        width = self._strip_width()
        if self.total <= 0:
            return 0
        return min(max(position - 1, 0) * width // self.total, width - 1)

    def position_at(self, x: int) -> int:
        """The 1-based frame a click at column ``x`` of the widget goes to."""
        width = self._strip_width()
        col = min(max(x - 1, 0), width - 1)
        if self.total <= 0:
            return 0
        first = -(-col * self.total // width)  # the first frame drawn in that column
        return min(first, self.total - 1) + 1

    def _column_marks(self) -> list[tuple[MarkerKind, str] | None]:
        """Each column's winning kind and its glyph: a :data:`DENSE` kind's a
        bar as high as its count against that kind's busiest column."""
        width = self._strip_width()
        if self._columns is not None and self._columns[0] == width:
            return self._columns[1]
        counts: list[dict[MarkerKind, int]] = [{} for _ in range(width)]
        if self.total:
            for index, kinds in self._marks.items():
                col = counts[min(index * width // self.total, width - 1)]
                for kind in kinds:
                    col[kind] = col.get(kind, 0) + 1
        busiest = {kind: max((c.get(kind, 0) for c in counts), default=0) for kind in DENSE}
        cols: list[tuple[MarkerKind, str] | None] = []
        for col in counts:
            if not col:
                cols.append(None)
                continue
            kind = min(col, key=_RANK.__getitem__)
            if kind in DENSE:
                level = -(-col[kind] * len(LEVELS) // busiest[kind]) - 1
                cols.append((kind, LEVELS[level]))
            else:
                cols.append((kind, MARKER_GLYPHS[kind][0]))
        self._columns = (width, cols)
        return cols

    def _styles(self) -> dict[MarkerKind, Style]:
        variables = self.app.theme_variables
        out: dict[MarkerKind, Style] = {}
        for kind, (_, var) in MARKER_GLYPHS.items():
            try:
                out[kind] = Style.parse(variables.get(var.lstrip("$"), "") or "none")
            except Exception:  # a theme value Rich does not read: the widget's colour
                out[kind] = Style()
        return out

    def _strip_row(self) -> Strip:
        """Row one without the position mark (cached per width, markers and theme)."""
        cols = self._column_marks()
        styles = self._styles()
        key = (len(cols), id(cols), tuple(styles.values()))
        if self._row is not None and self._row[0] == key:
            return self._row[1]
        segments = [Segment(" ")]
        for mark in cols:
            segments.append(Segment("─") if mark is None else Segment(mark[1], styles[mark[0]]))
        row = Strip(Segment.simplify(segments), len(cols) + 1)
        self._row = (key, row)
        return row

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        base = self.rich_style
        if y == 0:
            row = self._strip_row()
            if self.position:
                col = self.column_of(self.position) + 1
                mark = Segment("▼", Style(reverse=True, bold=True))
                row = Strip.join([row.crop(0, col), Strip([mark], 1), row.crop(col + 1)])
        elif y == 1:
            left = visible(self.left_label, oneline=True)
            right = visible(self.right_label, oneline=True)
            line = " " + left
            gap = max(width - len(line) - len(right) - 1, 1)
            row = Strip([Segment(line + " " * gap + right)])
        else:
            return Strip.blank(width, base)
        return row.crop_extend(0, width, None).apply_style(base)

    def on_click(self, event: events.Click) -> None:
        if event.y == 0 and self.total:
            self.post_message(self.Seek(self, self.position_at(event.x)))

    def on_mouse_move(self, event: events.MouseMove) -> None:
        self._aim_at(self.position_at(event.x) if event.y == 0 and self.total else None)

    def on_leave(self, event: events.Leave) -> None:
        self._aim_at(None)

    def _aim_at(self, position: int | None) -> None:
        if position != self._aim:
            self._aim = position
            self.post_message(self.Aim(self, position))
