"""A session at any frame: checkpoints of the fold, restored and folded on.

:class:`Replay` holds the frames, a :class:`~reducer.session.Session` as of
the current frame, and :class:`Checkpoints` (``Session.checkpoint()`` every
``interval`` frames, built by :meth:`Replay.build_checkpoints`, which a caller
runs in a worker while the user already steps). Seeking restores the nearest
checkpoint at or before the target (or goes on from the current state when
that is closer) and folds the frames in between.
"""

from __future__ import annotations

import gc
import threading
from bisect import bisect_right
import zlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

from ..session import Session
from ..state import Change
from .describe import ChangeDescriber
from .frames import ReplayFrame
from .markers import Markers
from .pacing import Timeline, pace

__all__ = ["Checkpoints", "Replay", "SeekResult", "pack"]

_MIN_INTERVAL = 64
_TARGET_CHECKPOINTS = 64
_BUDGET_SHARE = 0.5
"""Checkpoints may take this share of the recording's bytes (compressed)."""


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Keep the cyclic collector off while a restore builds ~a million objects
    that all stay alive (it would walk them several times for nothing)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def pack(snapshot: bytes) -> bytes:
    """A checkpoint as :class:`Checkpoints` stores it (fast zlib: ~3× smaller)."""
    return zlib.compress(snapshot, 1)


class Checkpoints:
    """Compressed fold snapshots by frame position, kept under a byte budget.

    When the budget is exceeded every other snapshot is dropped and the
    interval doubles, so memory stays bounded whatever the session's length.
    Safe to fill from one thread while another reads."""

    def __init__(self, interval: int, budget_bytes: int) -> None:
        self.interval = interval
        self.budget_bytes = budget_bytes
        self.positions: list[int] = []
        self._snapshots: list[bytes] = []
        self.bytes = 0
        self.complete = False
        """Every checkpoint the frames call for has been built."""
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self.positions)

    def add(self, position: int, snapshot: bytes, *, packed: bool = False) -> bool:
        """Keep ``snapshot`` (a :meth:`Session.checkpoint`, or its
        :func:`pack` when ``packed``) taken after ``position`` frames, when the
        position is on the current grid; positions must grow from call to call.
        Returns whether it was kept."""
        if position % self.interval or (self.positions and position <= self.positions[-1]):
            return False  # off the grid thinned since it was asked for, or already there
        data = snapshot if packed else pack(snapshot)
        with self._lock:
            self.positions.append(position)
            self._snapshots.append(data)
            self.bytes += len(data)
            while self.bytes > self.budget_bytes and len(self.positions) > 1:
                self._thin()
        return True

    def _thin(self) -> None:
        self.interval *= 2
        keep = [i for i, pos in enumerate(self.positions) if pos % self.interval == 0]
        if len(keep) == len(self.positions):  # positions off the grid: keep every other
            keep = keep[1::2]
        self.positions = [self.positions[i] for i in keep]
        self._snapshots = [self._snapshots[i] for i in keep]
        self.bytes = sum(map(len, self._snapshots))

    def at_or_before(self, position: int) -> tuple[int, bytes] | None:
        """The latest checkpoint taken at or before ``position`` (uncompressed)."""
        with self._lock:
            i = bisect_right(self.positions, position) - 1
            if i < 0:
                return None
            at, packed = self.positions[i], self._snapshots[i]
        return at, zlib.decompress(packed)

    def latest_at_or_before(self, position: int) -> int:
        """The position of that checkpoint (0 when there is none)."""
        with self._lock:
            i = bisect_right(self.positions, position) - 1
            return self.positions[i] if i >= 0 else 0


@dataclass(slots=True)
class SeekResult:
    """How a seek got there: by restoring (redraw all) or by folding on
    (``changes`` holds every record since the previous position)."""

    restored: bool
    changes: list[Change] = field(default_factory=list)


class Replay:
    """The frames of a session and its state as of one of them.

    ``position`` counts the frames applied: ``0`` is before the first,
    ``len(frames)`` after the last; "frame k" (1-based) is position ``k``."""

    def __init__(self, frames: Sequence[ReplayFrame], *, timeline: Timeline | None = None,
                 interval: int | None = None, budget_bytes: int | None = None,
                 session_factory: Callable[[], Session] = Session) -> None:
        self.frames = frames
        self.timeline = timeline or pace(frames)
        self.markers = Markers(frames)
        self._new_session = session_factory
        self.session = session_factory()
        self.position = 0
        self.changes: list[Change] = []
        """The change records of the frame at ``position``."""
        self.descriptions: list[str] = []
        """:attr:`changes` in words."""
        self.describer = ChangeDescriber()
        self._interval = interval
        self._budget = budget_bytes
        self.checkpoints = self._new_checkpoints()
        self._timed = self.timeline.source == "timestamps"

    def _new_checkpoints(self) -> Checkpoints:
        frames = self.frames
        interval = self._interval or max(_MIN_INTERVAL, len(frames) // _TARGET_CHECKPOINTS)
        budget = self._budget or max(int(_BUDGET_SHARE * sum(len(f.entry.raw) for f in frames)),
                                     1 << 20)
        return Checkpoints(interval, budget)

    def grow(self, frames: Sequence[ReplayFrame], timeline: Timeline | None = None,
             markers: Markers | None = None) -> None:
        """The recording is longer than the frames so far (the rest of the file
        has been decoded): ``frames`` starts with the same frames, so positions
        and the current state stay valid. Checkpoints start again."""
        if len(frames) < len(self.frames):
            raise ValueError("a replay only grows")
        self.frames = frames
        self.timeline = timeline or pace(frames)
        self.markers = markers or Markers(frames)
        self._timed = self.timeline.source == "timestamps"
        self.checkpoints = self._new_checkpoints()

    def __len__(self) -> int:
        return len(self.frames)

    @property
    def frame(self) -> ReplayFrame | None:
        """The frame at the cursor (the last one applied)."""
        return self.frames[self.position - 1] if self.position else None

    # --- folding -------------------------------------------------------------------------

    def _apply(self, session: Session, index: int) -> list[Change]:
        frame = self.frames[index]
        if frame.opens is not None:
            info = frame.opens
            agent = session.agent_for(info.agent)
            agent.agent_file_id = info.file_id
            agent.subagent_type = agent.subagent_type or info.agent_type
            agent.description = agent.description or info.description
        received = self.timeline.wall_clock(index) if self._timed else None
        return session.apply(frame.entry, agent=frame.agent, received_at=received)

    def step(self) -> list[Change]:
        """Apply the next frame; its change records (empty at the end)."""
        if self.position >= len(self.frames):
            return []
        changes = self._apply(self.session, self.position)
        self.position += 1
        self.changes = changes
        self.descriptions = self.describer.describe(self.session, changes)
        return changes

    def seek(self, target: int) -> SeekResult:
        """Go to position ``target`` (clamped), forward or back."""
        target = min(max(target, 0), len(self.frames))
        if target == self.position:
            return SeekResult(False, [])
        base = self.checkpoints.latest_at_or_before(target)
        if self.position < target and (base <= self.position
                                       or target - self.position <= self.checkpoints.interval):
            collected: list[Change] = []
            skipped = self.position < target - 1
            while self.position < target - 1:
                collected += self._apply(self.session, self.position)
                self.position += 1
            if skipped:  # the words compare the last frame with the one before it
                self.describer.sync(self.session)
            collected += self.step()
            return SeekResult(False, collected)
        self._restore(target)
        return SeekResult(True, [])

    def _restore(self, target: int) -> None:
        found = self.checkpoints.at_or_before(target - 1) if target else None
        with _gc_paused():
            if found is None:
                session, position = self._new_session(), 0
            else:
                position, snapshot = found
                session = Session.restore(snapshot)
            while position < target - 1:
                self._apply(session, position)
                position += 1
        self.session = session
        self.position = position
        self.describer.sync(session)
        self.changes, self.descriptions = [], []
        if position < target:
            self.step()

    # --- checkpoints -------------------------------------------------------------------

    def snapshots(self, interval: int,
                  cancelled: Callable[[], bool] = lambda: False) -> Iterator[tuple[int, bytes]]:
        """Fold every frame once more on a private session and yield
        ``(position, Session.checkpoint())`` every ``interval`` frames (the
        state the user steps through is not touched)."""
        session = self._new_session()
        n = len(self.frames)
        for index in range(n):
            if cancelled():
                return
            self._apply(session, index)
            position = index + 1
            if position % interval == 0 and position < n:
                with _gc_paused():
                    snapshot = session.checkpoint()
                yield position, snapshot

    def build_checkpoints(self, cancelled: Callable[[], bool] = lambda: False) -> Iterator[int]:
        """Fill :attr:`checkpoints` from :meth:`snapshots`; yields each position
        kept. Meant for a worker thread."""
        checkpoints = self.checkpoints
        for position, snapshot in self.snapshots(checkpoints.interval, cancelled):
            if checkpoints.add(position, snapshot):
                yield position
        if not cancelled():
            checkpoints.complete = True

    # --- time and markers -----------------------------------------------------------------

    def offset(self, position: int | None = None, skip_idle: bool = False) -> float:
        """Seconds into the recording (paced, when ``skip_idle``) of a position."""
        position = self.position if position is None else position
        offsets = self.timeline.paced(skip_idle)[0]
        if not offsets:
            return 0.0
        return offsets[min(max(position - 1, 0), len(offsets) - 1)]

    def position_of_line(self, line_no: int) -> int:
        """The position of the main source's line ``line_no`` (the first frame
        at or after it)."""
        for index, frame in enumerate(self.frames):
            if frame.agent is None and frame.entry.line_no >= line_no:
                return index + 1
        return len(self.frames)
