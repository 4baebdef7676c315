"""A replay as the session screens draw it: the state as of one frame, and
where the user is going in it.

:class:`ReplayController` is a :class:`~viewer.shown.ShownSession` (the
screens read the fold, the label and the time from it, as from a live
session) over a :class:`~reducer.replay.Replay`, plus what a replay has of
its own: the frame, playing, speed, skipping idle gaps, markers, and a far
seek folded in a worker (:attr:`catching_up`). Plain Python (no Textual): the
app (:mod:`viewer.replay.app`) runs its workers and timers and tells the
screens.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from cctv.reducer.replay import Pacer, Replay
from cctv.reducer.replay.pacing import faster, slower

from ..shown import ShownSession
from ..source_state import SourceState

if TYPE_CHECKING:
    from cctv.reducer.replay import MarkerKind
    from cctv.reducer.replay.player import SeekResult

    from .recording import Recording

__all__ = ["ReplayController", "MARKER_NAMES"]

BUSY_S = 0.3
"""Workers wait this long after a seek before they go on (the UI thread has the
interpreter lock to itself while it draws the seek's screen)."""
WAIT_AT_MOST_S = 1.0
"""The longest a worker waits for the UI thread at a time (keys held down)."""
LONG_SEEK_S = 0.5
"""A seek expected to take longer folds in a worker (see :meth:`ReplayController.takes_long`)."""
CATCH_UP_FRAMES = 5000
"""A start farther than this many frames in is folded to in a worker: the
first screen shows frame 1 at once, and the start when the fold is done."""

MARKER_NAMES: dict[MarkerKind, str] = {
    "turn": "turn", "tool": "tool call", "error": "error", "hook": "hook",
    "task": "task event", "compaction": "compaction",
}
"""What the replay calls each kind of marker (keys, palette, warnings)."""


class ReplayController(ShownSession):
    """A recording replayed, at one frame of it at a time.

    The feed holds every decoded line (for the raw view); its ``session`` is
    the replay's, swapped after each seek."""

    def __init__(self, recording: Recording, *, replay: Replay | None = None, start: int = 1,
                 speed: float = 1.0, skip_idle: bool = True, label: str | None = None,
                 pace_clock: Callable[[], float] = time.monotonic) -> None:
        shown = label if label is not None else str(recording.path)
        super().__init__(recording.feed, shown, SourceState("file", follow=True, label=shown))
        self.recording = recording
        self.replay = replay or recording.replay()
        self.speed = speed
        self.skip_idle = skip_idle
        self.playing = False
        self.closing = False
        """The app is closing: workers stop at their next look."""
        self._pace_clock = pace_clock
        self._pacer: Pacer | None = None
        self._busy_until = 0.0
        self.replay.spare_yield = self.wait_for_ui
        self.catching_up: int | None = None
        """The frame a worker folds to for a seek that would take long (the
        frame the replay opens at, or a far jump before the checkpoints near it
        are built); the screen stays where it is meanwhile."""
        self._caught_up_from = 1
        """Where the cursor was when that seek was asked for: the replay goes
        there when the fold is done only if the cursor has not moved since."""
        self.steps_pending = 0
        """Frames ``←`` / ``→`` asked for that are not taken yet (see :meth:`ReplayApp.action_step`)."""
        if start > CATCH_UP_FRAMES:
            self.catching_up = start
            start = 1
        self.replay.seek(start)
        self.feed.session = self.replay.session

    def now(self) -> float | None:
        """The recorded wall-clock time of the current frame (for elapsed times)."""
        replay = self.replay
        return replay.timeline.wall_clock(replay.position - 1) if replay.position else None

    # --- seeking ----------------------------------------------------------------------------

    def takes_long(self, position: int) -> bool:
        """A seek to ``position`` would take longer than :data:`LONG_SEEK_S`
        (the checkpoints near it are not built yet): fold it in a worker."""
        return not self.playing and self.replay.seek_cost(position) > LONG_SEEK_S

    def go_later(self, position: int) -> None:
        """A worker folds to ``position``; the screen stays where it is meanwhile."""
        self.catching_up = position
        self._caught_up_from = self.replay.position

    def catch_up_dropped(self, start: int) -> Callable[[], bool]:
        """For the worker folding to ``start``: whether to stop (the user went
        elsewhere meanwhile, or the app closes)."""
        return lambda: self.closing or self.catching_up != start

    def caught_up(self, start: int) -> bool:
        """The worker's fold to ``start`` is done: whether to go there (the
        cursor has not moved since it was asked for); then :meth:`catch_up_over`."""
        return self.catching_up == start and self.replay.position == self._caught_up_from \
            and not self.playing

    def catch_up_over(self, start: int) -> None:
        if self.catching_up == start:
            self.catching_up = None

    def seek(self, position: int) -> SeekResult:
        """Go to frame ``position`` (1-based), forward or back, now."""
        self._busy_until = time.monotonic() + BUSY_S
        if self.catching_up is not None and position != self.catching_up:
            self.catching_up = None  # the user went elsewhere: the worker's fold is not taken
        result = self.replay.seek(position)
        self.feed.session = self.replay.session
        return result

    def wait_for_ui(self) -> None:
        """(On a worker thread.) Wait while the UI thread handles a seek (not
        while playing, and at most :data:`WAIT_AT_MOST_S`: a worker holding
        the collector off does not wait for ever)."""
        give_up = time.monotonic() + WAIT_AT_MOST_S
        while not self.closing and not self.playing \
                and time.monotonic() < min(self._busy_until, give_up):
            time.sleep(0.01)

    def wants_spare(self) -> bool:
        """The restore a step back needs is worth making ahead now."""
        return not self.playing and self.catching_up is None and self.replay.wants_spare()

    def marker(self, kind: MarkerKind, direction: int) -> int | None:
        """The frame (1-based) of the next (``direction`` > 0) or previous
        marker of ``kind``, if any."""
        markers, index = self.replay.markers, self.replay.position - 1
        found = markers.next(kind, index) if direction > 0 else markers.previous(kind, index)
        return None if found is None else found + 1

    # --- playing ----------------------------------------------------------------------------

    def start_playing(self) -> None:
        self.playing = True
        self.restart_pacer()

    def restart_pacer(self) -> None:
        offsets = self.replay.timeline.paced(self.skip_idle)[0]
        self._pacer = Pacer(offsets, self._pace_clock, self.speed)
        self._pacer.start(max(self.replay.position - 1, 0))

    def due(self) -> int | None:
        """While playing: the frame due now."""
        if not self.playing or self._pacer is None:
            return None
        return self._pacer.due() + 1

    @property
    def at_end(self) -> bool:
        return self.replay.position >= len(self.replay)

    def change_speed(self, direction: int) -> None:
        """Twice as fast (``direction`` > 0) or half as fast."""
        self.speed = faster(self.speed) if direction > 0 else slower(self.speed)
        if self._pacer is not None and self.playing:
            self._pacer.set_speed(self.speed)

    def toggle_idle(self) -> None:
        self.skip_idle = not self.skip_idle
        if self.playing:
            self.restart_pacer()
