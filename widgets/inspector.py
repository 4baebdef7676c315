"""The replay inspector: the frame at the replay cursor and what it changed."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from cctv.reducer.pretty import raw_view
from cctv.reducer.replay import MarkerKind, ReplayFrame
from cctv.reducer.format import short_id

from .safe_text import content, text

__all__ = ["Inspector"]

_RAW_LIMIT = 16_000
"""Bytes of a frame the pane pretty-prints (the raw view, r, shows all of it)."""


class Inspector(VerticalScroll, can_focus=False):
    """What the frame at the cursor is, what it changed (in words), its JSON."""

    DEFAULT_CSS = """
    Inspector {
        height: 100%;
        background: $surface;
        padding: 0 1;
        #inspector-head { text-style: bold; color: $text-accent; }
        #inspector-changes { color: $text; margin-bottom: 1; }
        #inspector-raw { color: $text-muted; }
    }
    """

    def compose(self) -> ComposeResult:
        yield Static(id="inspector-head", markup=False)
        yield Static(id="inspector-changes", markup=False)
        yield Static(id="inspector-raw", markup=False)

    def show(self, position: int, total: int, frame: ReplayFrame | None,
             changes: Sequence[str], markers: Sequence[MarkerKind] = ()) -> None:
        """Show frame ``position`` (1-based) of ``total``; ``changes`` in words."""
        if not self.is_mounted:
            return
        head = self.query_one("#inspector-head", Static)
        body = self.query_one("#inspector-changes", Static)
        raw = self.query_one("#inspector-raw", Static)
        if frame is None:
            head.update(f"before frame 1 of {total}")
            body.update("nothing applied yet: → applies the first frame")
            raw.update("")
            return
        entry = frame.entry
        where = "main" if frame.agent is None else f"sub-agent {short_id(frame.agent, 10)}"
        marks = f" · {', '.join(markers)}" if markers else ""
        head.update(content(f"frame {position:,} of {total:,} · line {entry.line_no} · "
                            f"{entry.kind_key} · {where}{marks}"))
        if changes:
            body.update(text("\n".join(f"• {line}" for line in changes)))
        else:
            body.update(Text("• no visible change to the session state", style="italic"))
        view = raw_view(entry.raw, limit=_RAW_LIMIT)
        notes = "".join(f"\n({note})" for note in view.notes)
        raw.update(text(view.text + notes))
