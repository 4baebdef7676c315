"""Replay checkpoints: how they are kept, and read back.

A checkpoint is a :func:`~reducer.replay.snapshot.checkpoint` of the fold
at some frame, :func:`~reducer.replay.snapshot.pack`-ed. :class:`Checkpoints`
keeps them by position under a byte budget, the builder's first pass adding
plain ones and its second replacing each with one that takes the final
state's unchanged units from a pool (:class:`Pooled`, see
:mod:`reducer.replay.pool`); :func:`restore_checkpoint` reads either kind
back. The builder itself is :meth:`reducer.replay.player.Replay.checkpoint_pieces`.
"""

from __future__ import annotations

import mmap
import threading
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from typing import Any

from ..fold import Session
from .describe import ChangeDescriber
from .pool import UnitPool
from .snapshot import pack, restore_with_extra

__all__ = ["Buffer", "Checkpoints", "Kept", "PLAIN", "POOL", "POOLED", "Pooled",
           "pack", "restore_checkpoint"]

PLAIN, POOL, POOLED = 0, 1, 2
"""The kinds of piece a checkpoint builder makes
(:meth:`~reducer.replay.player.Replay.checkpoint_pieces`)."""


Buffer = bytes | bytearray | memoryview | mmap.mmap
"""What a checkpoint is kept in (a reader may hand over a memory map of its own)."""


class Pooled:
    """A kept checkpoint whose units equal to their final selves are indexes
    into ``pool`` (see :mod:`reducer.replay.pool`)."""

    __slots__ = ("data", "pool")

    def __init__(self, data: Buffer, pool: UnitPool) -> None:
        self.data = data
        self.pool = pool

    def __len__(self) -> int:
        return len(self.data)


Kept = Buffer | Pooled
"""A checkpoint as :class:`Checkpoints` keeps it (:func:`pack`-ed)."""


def restore_checkpoint(kept: Kept, **options: Any) -> tuple[Session, ChangeDescriber | None]:
    """A kept checkpoint's state, and the describer synced with it that the
    builder saved with it (``None`` from a checkpoint taken without one).
    ``options`` go to :func:`~reducer.replay.snapshot.restore_with_extra`."""
    if type(kept) is Pooled:
        session, extra = restore_with_extra(kept.data, packed=True, shared=kept.pool.objects,
                                            **options)
    else:
        session, extra = restore_with_extra(kept, packed=True, **options)
    return session, extra if isinstance(extra, ChangeDescriber) else None


_PLAN_RATIO = 4.3
""":meth:`Checkpoints.planned_interval` expects snapshots to compress this much:
what they do on a 100 MB stream-json session (4.2–4.4). Expecting more plans a
grid twice as fine wherever the estimate crosses the budget, and the builder
pickles the snapshots thinning then drops (the fold's parts made snapshots 1%
smaller, and a 4.8 took the build from 9.1 to 10.8 s)."""


class Checkpoints:
    """Compressed fold snapshots by frame position, kept under a byte budget.

    When the budget is exceeded every other snapshot is dropped and the
    interval doubles, so memory stays bounded whatever the session's length.
    The snapshot at :attr:`last_position` is kept apart from that grid.
    Safe to fill from one thread while another reads."""

    def __init__(self, interval: int, budget_bytes: int, last_position: int = 0) -> None:
        self.interval = interval
        self.budget_bytes = budget_bytes
        self.positions: list[int] = []
        """The grid's positions (the one at :attr:`last_position` is apart)."""
        self._snapshots: list[Kept] = []
        self.last_position = last_position
        """The frame before the last: a jump to the end restores the state
        there and steps once, so it is kept apart from the grid, whatever
        thinning does (0: none)."""
        self._last: Kept | None = None
        self.pool: UnitPool | None = None
        """The final state's units, once the builder has folded every frame:
        checkpoints added by :meth:`add_pooled` take those equal to their
        final selves from it (:mod:`reducer.replay.pool`)."""
        self.shared_owners: frozenset[int] = frozenset()
        """The :attr:`~reducer.replay.pool.UnitPool.owners` of every pool
        added, and of the checkpoints these replace
        (:meth:`~reducer.replay.player.Replay.grow`): states restored from
        any of them may be alive, and freeing a state leaves these whole (a
        builder that failed half-way is followed by another, whose pool
        replaces the first)."""
        self._first_interval = self._plan = interval
        self._taken: tuple[tuple[int, int], tuple[int, int]] = ((0, 0), (0, 0))
        """(position, uncompressed bytes) of the latest two snapshots a builder took."""
        self._replan = False
        self.bytes = 0
        self.complete = False
        """Every checkpoint the frames call for has been built."""
        self.pooled = False
        """... and taken again with the final units as :attr:`pool` indexes
        (the builder is done)."""
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self.positions) + (self._last is not None)

    @property
    def pooled_count(self) -> int:
        """How many kept checkpoints index into the :attr:`pool` so far (while
        the builder takes them again, after :attr:`complete`)."""
        with self._lock:
            return sum(type(kept) is Pooled for kept in self._snapshots) \
                + (type(self._last) is Pooled)

    def add(self, position: int, snapshot: Buffer, *, packed: bool = False) -> bool:
        """Keep ``snapshot`` (a :func:`~reducer.replay.snapshot.checkpoint`, or its
        :func:`pack` when ``packed``) taken after ``position`` frames, when the
        position is on the current grid or is :attr:`last_position`; positions
        must grow from call to call. Returns whether it was kept."""
        if position == self.last_position:
            data = snapshot if packed else pack(snapshot)
            with self._lock:
                if self._last is not None:
                    return False
                self._last = data
                self.bytes += len(data)
                while self.bytes > self.budget_bytes and len(self.positions) > 1:
                    self._thin()
            return True
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

    def take(self, kind: int, position: int, data: Buffer, *, packed: bool = False,
             cancelled: Callable[[], bool] | None = None) -> bool:
        """Keep one piece a builder made
        (:meth:`~reducer.replay.player.Replay.checkpoint_pieces`): a
        :data:`PLAIN` checkpoint (:meth:`add`), a :data:`POOLED` one
        (:meth:`add_pooled`), or the :data:`POOL`, loaded (``EOFError`` once
        ``cancelled``), which also says every checkpoint is built. Returns
        whether a checkpoint was kept at ``position``."""
        if kind == POOL:
            self.add_pool(UnitPool.load(data, packed=packed, cancelled=cancelled))
            self.complete = True
            return False
        if kind == POOLED:
            return self.add_pooled(position, data, packed=packed)
        return self.add(position, data, packed=packed)

    def add_pool(self, pool: UnitPool) -> None:
        """The pool the checkpoints :meth:`add_pooled` keeps index into."""
        with self._lock:
            self.pool = pool
            self.shared_owners = self.shared_owners | pool.owners if self.shared_owners \
                else pool.owners

    def add_pooled(self, position: int, snapshot: Buffer, *, packed: bool = False) -> bool:
        """Replace the checkpoint at ``position`` with ``snapshot``, the same
        state taken with its final units as indexes into :attr:`pool`
        (:meth:`~reducer.replay.pool.PoolPlan.checkpoint`): smaller, and
        restored without building them. Returns whether it was kept (there
        was one at ``position`` to replace)."""
        assert self.pool is not None, "add_pool first"
        kept = Pooled(snapshot if packed else pack(snapshot), self.pool)
        with self._lock:
            if position == self.last_position and self._last is not None:
                self.bytes += len(kept) - len(self._last)
                self._last = kept
                return True
            i = bisect_left(self.positions, position)
            if i == len(self.positions) or self.positions[i] != position:
                return False
            self.bytes += len(kept) - len(self._snapshots[i])
            self._snapshots[i] = kept
            return True

    def snapshot_taken(self, position: int, size: int) -> None:
        """A builder took a snapshot of ``size`` bytes (uncompressed) after
        ``position`` frames (for :meth:`planned_interval`)."""
        self._taken = (self._taken[1], (position, size))
        self._replan = True

    def planned_interval(self, frames: int) -> int:
        """The interval a builder folding ``frames`` frames takes its next
        snapshots at: the grid thinning is expected to end with, i.e. the
        finest one (a power of two times the first interval) whose snapshots,
        with the one at the frame before the last, are expected to fit the
        budget, so that the builder does not pickle (half a second at the end
        of a 100 MB session) what thinning would drop. Snapshots are expected
        to keep growing as the latest two did, and to compress
        :data:`_PLAN_RATIO` times. The plan depends on the snapshots' own
        sizes only, so a builder in a child process takes the same ones. If
        it falls short, thinning still keeps the budget (a snapshot too many
        costs time, never memory)."""
        if not self._replan:
            return self._plan
        self._replan = False
        (p1, s1), (p2, s2) = self._taken
        if not p1 or frames <= p2 + 1:
            return self._plan
        growth = max((s2 - s1) / (p2 - p1), 0.0)
        end = frames - 1  # the frame before the last has a checkpoint of its own

        def size(position: float) -> float:
            return max(s2 + growth * (position - p2), 0.0) / _PLAN_RATIO

        interval = self._first_interval
        while True:
            count = (end - 1) // interval  # the grid's positions before the end
            if not count or count * size(interval * (count + 1) / 2) + size(end) \
                    <= self.budget_bytes:
                break
            interval *= 2
        self._plan = interval
        return interval

    def _thin(self) -> None:
        self.interval *= 2
        keep = [i for i, pos in enumerate(self.positions) if pos % self.interval == 0]
        if len(keep) == len(self.positions):  # positions off the grid: keep every other
            keep = keep[1::2]
        self.positions = [self.positions[i] for i in keep]
        self._snapshots = [self._snapshots[i] for i in keep]
        self.bytes = sum(map(len, self._snapshots)) + (len(self._last) if self._last else 0)

    def state_at_or_before(self, position: int) -> tuple[int, Session] | None:
        """The state of the latest checkpoint taken at or before ``position``, restored."""
        found = self.packed_at_or_before(position)
        return None if found is None else (found[0], restore_checkpoint(found[1])[0])

    def packed_at_or_before(self, position: int) -> tuple[int, Kept] | None:
        """The latest checkpoint taken at or before ``position``, as kept."""
        with self._lock:
            if self._last is not None and self.last_position <= position:
                return self.last_position, self._last
            i = bisect_right(self.positions, position) - 1
            if i < 0:
                return None
            return self.positions[i], self._snapshots[i]

    def latest_at_or_before(self, position: int) -> int:
        """The position of that checkpoint (0 when there is none)."""
        found = self.packed_at_or_before(position)
        return 0 if found is None else found[0]
