"""The replay screen: the live viewer's transcript, tasks panel and status bar
showing the state as of one frame, with a replay bar, an inspector and a timeline."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.css.query import NoMatches
from textual.reactive import var
from textual.widgets import Static

from cctv.reducer.format import format_duration
from cctv.reducer.replay.order import ReplayFrame
from cctv.reducer.state import MAIN
from cctv.widgets.inspector import Inspector
from cctv.widgets.key_footer import KeyFooter
from cctv.widgets.safe_text import content
from cctv.widgets.status_glyphs import FOLLOW, PAUSED
from cctv.widgets.timeline import ReplayTimeline

from ..messages import Aim, Seek
from ..screens.session import SessionScreen

if TYPE_CHECKING:
    from .controller import ReplayController

__all__ = ["ReplayScreen", "bar_text"]


def _clock(epoch: float | None) -> str:
    if epoch is None:
        return ""
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(epoch))


def bar_text(controller: ReplayController, width: int = 200) -> str:
    """The replay bar: play state, speed, frame, idle skipping, pacing, checkpoints;
    shorter words when ``width`` is narrow."""
    replay = controller.replay
    wide = width >= 110
    state = (f"{FOLLOW} playing" if controller.playing else f"{PAUSED} paused") if wide \
        else (FOLLOW if controller.playing else PAUSED)
    where = f"frame {replay.position:,}/{len(replay):,}"
    frame = replay.frame
    if frame is not None:
        where += f" · line {frame.entry.line_no}"
        if frame.agent is not None:
            where += " (sub-agent file)" if wide else "*"
    timeline = replay.timeline
    if wide:
        pacing = {"timestamps": "pace: recorded timestamps",
                  "derived": "pace: derived from " + ", ".join(timeline.derived_from),
                  "even": "pace: even (no times in the frames)"}[timeline.source]
    else:
        pacing = {"timestamps": "recorded pace", "derived": "derived pace",
                  "even": "even pace"}[timeline.source]
    skipped = timeline.paced(True)[1]
    idle = ("skip idle: on" + (f" (−{format_duration(skipped)})" if skipped else "")
            if controller.skip_idle else "skip idle: off")
    cps = replay.checkpoints
    if not controller.recording.complete:
        building = " · reading the rest of the file…" if wide else " · reading…"
    elif cps.pooled:
        building = ""
    elif cps.complete:  # taken again with the final units: seeks get faster when done
        building = (f" · making seeks faster ({cps.pooled_count}/{len(cps)})…" if wide
                    else " · tuning seeks…")
    else:
        building = f" · indexing {len(cps)} checkpoints…" if wide else " · indexing…"
    if controller.catching_up is not None:
        going = (f" · going to frame {controller.catching_up:,}…" if wide
                 else f" · →{controller.catching_up:,}…")
        building = going + building
    return f"{state} {controller.speed:g}× · {where} · {idle} · {pacing}{building}"


class ReplayScreen(SessionScreen):
    """The main transcript of a replay, at the replay's current frame.

    | Key(s) | Description |
    | :- | :- |
    | space | Play / pause |
    | → / ← | One frame forward / back |
    | home / end | First / last frame |
    | ] / [ | Next / previous turn |
    | c / C | Next / previous tool call |
    | e / E | Next / previous error |
    | h / H | Next / previous hook |
    | a / A | Next / previous task event |
    | z / Z | Next / previous compaction |
    | + / - | Faster / slower (0.25× to 64×) |
    | i | Skip idle gaps on / off |
    | f | Show / hide the inspector |
    """

    CSS_PATH = [SessionScreen.CSS_PATH, "screen.tcss"]

    STAYS_CURRENT: ClassVar[bool] = True  # the replay bar, under a sub-agent's screen

    show_inspector: var[bool] = var(True, toggle_class="-show-inspector")

    shown: ReplayController

    def __init__(self, controller: ReplayController) -> None:
        super().__init__(controller, MAIN)

    def compose(self) -> ComposeResult:
        for widget in super().compose():
            if isinstance(widget, KeyFooter):
                yield Inspector(id="inspector")
                yield Static(id="replay-bar", markup=False)
                yield ReplayTimeline(id="timeline")
            yield widget

    def on_mount(self) -> None:  # Textual runs SessionScreen.on_mount after this one
        self.set_class(True, "-show-inspector")
        self.markers_changed()

    def markers_changed(self) -> None:
        """The replay's frames and markers changed (the rest of the file came in)."""
        replay = self.shown.replay
        self.query_one(ReplayTimeline).set_markers(len(replay), replay.markers.at)
        self.refresh_panels()

    def refresh_panels(self) -> None:
        super().refresh_panels()
        try:
            bar = self.query_one("#replay-bar", Static)
            timeline = self.query_one(ReplayTimeline)
            inspector = self.query_one(Inspector)
        except NoMatches:
            return
        replay = self.shown.replay
        bar.update(content(bar_text(self.shown, bar.size.width or self.size.width)))
        position = replay.position
        left = self._time_at(position)
        right = f"frame {position:,}/{len(replay):,} · {format_duration(replay.timeline.duration)}"
        timeline.set_position(position, left, right)
        if self.show_inspector:
            frame: ReplayFrame | None = replay.frame
            inspector.show(position, len(replay), frame, replay.descriptions,
                           replay.markers.at.get(position - 1, ()))

    def _time_at(self, position: int) -> str:
        """The recorded time of a frame: the clock, or the time into the session."""
        replay = self.shown.replay
        wall = replay.timeline.wall_clock(position - 1) if position else None
        return _clock(wall) or f"t+{format_duration(replay.offset(position))}"

    def on_resize(self) -> None:
        self.refresh_panels()

    def action_toggle_inspector(self) -> None:
        self.show_inspector = not self.show_inspector
        self.refresh_panels()

    @on(ReplayTimeline.Seek)
    def _seek(self, event: ReplayTimeline.Seek) -> None:
        self.post_message(Seek(event.position))

    @on(ReplayTimeline.Aim)
    def _aim(self, event: ReplayTimeline.Aim) -> None:
        position = event.position
        event.timeline.tooltip = (None if position is None else
                                  f"frame {position:,} · {self._time_at(position)}")
        self.post_message(Aim(position))
