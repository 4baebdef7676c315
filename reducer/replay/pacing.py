"""When each frame happened, and when a replay shows it.

:func:`pace` gives every frame an offset in recorded seconds from the first
frame, from the best source the recording has:

* ``"timestamps"`` — the rows' ISO ``timestamp`` (on-disk transcripts, and
  the stream-json frames that carry one);
* ``"derived"`` — what the frames say about elapsed time when they carry no
  clock (most of stream-json): each turn lasts its ``result.duration_ms``,
  a running tool's ``tool_progress.elapsed_time_seconds`` fixes the gap since
  its previous sign of life, a compaction takes its ``duration_ms``, a task's
  ``task_updated`` ``end_time`` and a hook's ``durationMs`` fix gaps between
  those frames; the frames in between share the rest evenly;
* ``"even"`` — nothing to go by: :data:`EVEN_STEP_S` between frames.

:meth:`Timeline.paced` shortens idle gaps, and :class:`Pacer` turns offsets into
deadlines on a monotonic clock (absolute, so sleeps never accumulate drift).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from .. import frames as F
from .order import ReplayFrame

__all__ = ["PacingSource", "Timeline", "pace", "Pacer", "EVEN_STEP_S", "IDLE_GAP_S",
           "IDLE_KEPT_S", "SPEEDS", "faster", "slower", "skip_gaps"]

PacingSource = Literal["timestamps", "derived", "even"]

EVEN_STEP_S = 0.25
"""Seconds between frames when the recording says nothing about time."""
IDLE_GAP_S = 3.0
"""A gap longer than this is idle time; skipping idle gaps shortens it ..."""
IDLE_KEPT_S = 1.0
"""... to this."""
_MIN_TIMED_SHARE = 0.5
"""Timestamps pace a recording when at least this share of its frames has one."""

SPEEDS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0)
"""The speeds ``+`` / ``-`` step through."""


@dataclass(slots=True)
class Timeline:
    """Recorded offsets of every frame and where they came from."""

    offsets: list[float]
    """Seconds from the first frame to each frame, non-decreasing."""
    source: PacingSource
    derived_from: tuple[str, ...] = ()
    """For ``"derived"``: the frame fields that gave time (``"duration_ms"``…)."""
    start_at: float | None = None
    """Epoch seconds of the first frame, when the rows carry timestamps."""
    _paced: dict[bool, tuple[list[float], float]] = field(default_factory=dict, repr=False)

    def __len__(self) -> int:
        return len(self.offsets)

    @property
    def duration(self) -> float:
        return self.offsets[-1] if self.offsets else 0.0

    def wall_clock(self, index: int) -> float | None:
        """Epoch seconds frame ``index`` (0-based) was recorded at, if known."""
        if self.start_at is None or not self.offsets:
            return None
        return self.start_at + self.offsets[min(max(index, 0), len(self.offsets) - 1)]

    def paced(self, skip_idle: bool) -> tuple[list[float], float]:
        """Offsets a replay plays at, and the seconds idle-gap skipping removed."""
        cached = self._paced.get(skip_idle)
        if cached is None:
            cached = self._paced[skip_idle] = skip_gaps(self.offsets) if skip_idle \
                else (self.offsets, 0.0)
        return cached


def skip_gaps(offsets: Sequence[float], gap: float = IDLE_GAP_S,
              kept: float = IDLE_KEPT_S) -> tuple[list[float], float]:
    """``offsets`` with every gap longer than ``gap`` shortened to ``kept``;
    returns the new offsets and the seconds removed."""
    out: list[float] = []
    skipped = 0.0
    prev = None
    for t in offsets:
        if prev is not None and t - prev > gap:
            skipped += t - prev - kept
        out.append(t - skipped)
        prev = t
    return out, skipped


def pace(frames: Sequence[ReplayFrame]) -> Timeline:
    """The recorded offsets of ``frames`` from the best source they offer."""
    n = len(frames)
    if n == 0:
        return Timeline([], "even")
    timed = sum(1 for f in frames if f.at is not None)
    if timed and timed >= _MIN_TIMED_SHARE * n:
        return _from_timestamps(frames)
    derived = _derived(frames)
    if derived is not None:
        return derived
    return Timeline([i * EVEN_STEP_S for i in range(n)], "even")


def _from_timestamps(frames: Sequence[ReplayFrame]) -> Timeline:
    start = next(f.at for f in frames if f.at is not None)
    offsets: list[float] = []
    last = 0.0
    for f in frames:
        if f.at is not None:
            last = max(last, f.at - start)
        offsets.append(last)
    return Timeline(offsets, "timestamps", start_at=start)


def _derived(frames: Sequence[ReplayFrame]) -> Timeline | None:
    """Offsets from the durations frames report, or ``None`` when none does.

    Each frame gets a gap (seconds since the frame before it): known where a
    frame fixes it, else unknown. A turn (frames up to and including its
    ``result``) lasts ``duration_ms``: its unknown gaps share what the known
    ones leave. Unknown gaps outside any timed turn are :data:`EVEN_STEP_S`."""
    n = len(frames)
    known: list[float | None] = [None] * n
    used: set[str] = set()
    last_seen: dict[str, tuple[int, float]] = {}
    """tool_use id → (frame index, elapsed seconds) of its latest sign of life."""
    last_end: tuple[int, float] | None = None
    turn_ends: list[tuple[int, float]] = []
    for i, frame in enumerate(frames):
        e = frame.entry
        if isinstance(e, F.ToolProgress) and e.elapsed_time_seconds is not None:
            seen = last_seen.get(e.tool_use_id)
            if seen is not None:
                gap = e.elapsed_time_seconds - seen[1]
                if gap >= 0 and seen[0] == i - 1:
                    known[i] = gap
                    used.add("elapsed_time_seconds")
                elif gap >= 0 and _spread(known, seen[0] + 1, i, gap):
                    used.add("elapsed_time_seconds")
            last_seen[e.tool_use_id] = (i, e.elapsed_time_seconds)
        elif isinstance(e, F.Assistant):
            for block in e.message.content:
                if block.type == "tool_use" and block.id:
                    last_seen[block.id] = (i, 0.0)
        elif isinstance(e, F.CompactBoundary):
            ms = e.meta("duration_ms", "durationMs")
            if isinstance(ms, (int, float)) and ms > 0 and known[i] is None:
                known[i] = ms / 1000
                used.add("duration_ms")
        elif isinstance(e, F.TaskUpdated) and e.patch.end_time:
            end = e.patch.end_time / 1000
            if last_end is not None and end >= last_end[1]:
                if _spread(known, last_end[0] + 1, i + 1, end - last_end[1]):
                    used.add("end_time")
            last_end = (i, end)
        elif isinstance(e, F.StopHookSummary):
            total = sum(float(h.get("durationMs") or 0) for h in e.hookInfos
                        if isinstance(h, dict))
            if total > 0 and known[i] is None:
                known[i] = total / 1000
                used.add("durationMs")
        elif isinstance(e, F.Result) and e.duration_ms:
            turn_ends.append((i, e.duration_ms / 1000))
            used.add("duration_ms")
    if not used:
        return None
    gaps: list[float | None] = list(known)
    turn_start = 0
    for end, duration in turn_ends:
        unknown = [j for j in range(turn_start + 1, end + 1) if gaps[j] is None]
        fixed = sum(g for j in range(turn_start + 1, end + 1) if (g := gaps[j]) is not None)
        share = max(duration - fixed, 0.0) / len(unknown) if unknown else 0.0
        for j in unknown:
            gaps[j] = share
        turn_start = end
    offsets: list[float] = []
    t = 0.0
    for i, g in enumerate(gaps):
        if i:
            t += EVEN_STEP_S if g is None else g
        offsets.append(t)
    return Timeline(offsets, "derived", tuple(sorted(used)))


def _spread(known: list[float | None], start: int, stop: int, seconds: float) -> bool:
    """Share ``seconds`` over the unknown gaps of frames ``start..stop-1`` (what
    the known ones there leave); ``False`` when there is nothing to share it on."""
    unknown = [j for j in range(start, stop) if known[j] is None]
    if not unknown or stop - start > 10_000:
        return False
    fixed = sum(g for j in range(start, stop) if (g := known[j]) is not None)
    share = max(seconds - fixed, 0.0) / len(unknown)
    for j in unknown:
        known[j] = share
    return True


class Pacer:
    """When each frame is due on a clock, at a speed, from a starting frame.

    Deadlines are absolute: frame ``i`` is due at ``started + (offsets[i] -
    base) / speed`` on ``clock``, so however late one wake-up is, the next
    deadline does not move (no drift accumulates). ``clock`` is
    :func:`time.monotonic` in use and a fake in tests."""

    def __init__(self, offsets: Sequence[float], clock: Callable[[], float],
                 speed: float = 1.0) -> None:
        self.offsets = offsets
        self.clock = clock
        self.speed = speed
        self._first = 0
        self._base = offsets[0] if offsets else 0.0
        self._started = clock()

    def start(self, index: int, speed: float | None = None) -> None:
        """Count from frame ``index`` (0-based) now, at ``speed``."""
        if speed is not None:
            self.speed = speed
        self._first = min(max(index, 0), max(len(self.offsets) - 1, 0))
        self._base = self.offsets[self._first] if self.offsets else 0.0
        self._started = self.clock()

    def recorded_now(self, now: float | None = None) -> float:
        """The recorded offset the replay has reached at ``now``."""
        now = self.clock() if now is None else now
        return self._base + (now - self._started) * self.speed

    def deadline(self, index: int) -> float:
        """The clock time frame ``index`` is due at."""
        if not self.offsets:
            return self._started
        return self._started + (self.offsets[index] - self._base) / self.speed

    def due(self, now: float | None = None) -> int:
        """The last frame due at ``now`` (default: the clock now), 0-based."""
        if not self.offsets:
            return 0
        recorded = self.recorded_now(now)
        return max(self._first, bisect_right(self.offsets, recorded + 1e-9) - 1)

    def set_speed(self, speed: float) -> None:
        """Change speed from here on, without jumping: the recorded time reached
        so far stays where it is."""
        now = self.clock()
        self._base = self.recorded_now(now)
        self._started = now
        self.speed = speed


def faster(speed: float) -> float:
    """The next speed up in :data:`SPEEDS`."""
    return next((s for s in SPEEDS if s > speed + 1e-9), SPEEDS[-1])


def slower(speed: float) -> float:
    """The next speed down in :data:`SPEEDS`."""
    return next((s for s in reversed(SPEEDS) if s < speed - 1e-9), SPEEDS[0])
