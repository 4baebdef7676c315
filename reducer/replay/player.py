"""A session at any frame: checkpoints of the fold, restored and folded on.

:class:`Replay` holds the frames, a :class:`~reducer.fold.Session` as of
the current frame, and its :class:`~reducer.replay.checkpoints.Checkpoints`
(:func:`~reducer.replay.snapshot.checkpoint` every ``interval`` frames and at the frame before
the last, built by
:meth:`Replay.build_checkpoints`, which a caller runs in a worker while the
user already steps). Seeking restores the nearest checkpoint at or before the
target and folds the frames in between, or goes on from the current state
when that is measured to cost less.

The builder folds every frame twice: the first pass takes plain
checkpoints, ready as it goes; once it has the final state, the second
takes each kept checkpoint again with the transcript units that equal
their final selves as indexes into a pool of those units
(:mod:`reducer.replay.pool`), which replaces the plain one. Restoring a
plain checkpoint builds the whole state (at the end of 100 MB of
stream-json ~600k objects, 0.1–0.2 s); a pooled one builds only the units
that will still change and the tables that hold the rest (30–50 ms).
A caller can also have the restore a step back (or a click where the user
points, :attr:`Replay.aim`) would need made ahead, off the UI thread
(:meth:`Replay.prepare_spare`), and a seek that finds it ready only folds.
The state a restore replaces is not freed during the seek: it waits for the
caller to free it in a worker, a burst at a time (:meth:`Replay.free_retired`);
older ones than the last two are released (:func:`release`, their cycles
broken, so reference counting frees them at once; the pool's units, which
the states share, are left whole). What a restore builds goes
to the collector's oldest generation unexamined
(:func:`~reducer.collector.promote_to_oldest`): neither costs a pass of the
cyclic collector over the whole heap after the key.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Container, Iterator, Sequence
from dataclasses import dataclass, field

from ..collector import collector_paused, promote_to_oldest
from ..fold import Session
from ..state import Change
from .checkpoints import PLAIN, POOL, POOLED, Checkpoints, restore_checkpoint
from .describe import ChangeDescriber
from .order import ReplayFrame
from .markers import Markers
from .pacing import Timeline, pace
from .pool import PoolPlan
from .snapshot import back_links, checkpoint, own_tables

__all__ = ["Replay", "SeekResult", "dismantle", "release"]

_MIN_INTERVAL = 64
SPARE_MARGIN = 256
"""The restore made ahead stops this many frames before the frame a step
back folds to: a jump back that short is served by it too."""
REPORTED_FOLD = 512
"""A seek forward that folds more frames than this says so (``many``): a
transcript view is then better off comparing itself with the state again
(deferring what it has not seen) than taking the records one by one
(measuring each new item at once: ~25 µs each, ~70 ms for 6,000 frames)."""
_FOLD_RATE = 12e-6
"""Seconds to fold a frame, until measured (a 100 MB session: 10–15 µs)."""
_RESTORE_RATE = 80e-9
"""Seconds to restore a byte of packed checkpoint, until measured (~80 ms per MB)."""
_TARGET_CHECKPOINTS = 64
_BUDGET_SHARE = 0.5
"""Checkpoints may take this share of the recording's bytes (compressed)."""


def release(session: Session, shared: Container[int] = frozenset()) -> None:
    """Break the reference cycles of a state that is no longer needed (a tool
    call and its card, a hook run and its chip point at each other), so that
    reference counting frees it as soon as the last reference goes, instead of
    a full collection over the whole heap some time later (each restore drops
    one such state). It can still be read, not folded on. ``shared``: the
    ``id`` of calls and hook runs other states share (a checkpoint pool's,
    :attr:`~reducer.replay.pool.UnitPool.owners`), left as they are."""
    for owner, _ in back_links(session):
        if id(owner) not in shared:
            owner.item = None


def dismantle(session: Session, burst: int = 2048,
              shared: Container[int] = frozenset()) -> Iterator[None]:
    """Free a state no longer needed a burst at a time, yielding between bursts
    (a worker thread running it lets the others run): at 100 MB a state is
    ~700k objects, ~150 ms to free in one go. Its cycles are broken first
    (as :func:`release` does, ``shared`` left alone), ``burst`` at a time, then the tables it made
    itself (:func:`~reducer.replay.snapshot.own_tables`) are emptied
    ``burst`` entries at a time; the rest goes with the last reference."""
    links = [link for link in back_links(session) if id(link[0]) not in shared]
    yield
    for start in range(0, len(links), burst):
        for owner, _ in links[start:start + burst]:
            owner.item = None
        yield
    del links
    for container in own_tables(session):  # never a frame's own list or dict
        while container:
            if isinstance(container, list):
                del container[-burst:]
            else:
                for _ in range(min(burst, len(container))):
                    container.popitem()
            yield


def _words_values(session: Session, describer: ChangeDescriber | None,
                  folded: list[Change]) -> ChangeDescriber:
    """The describer for ``session``: the one its checkpoint or restore made
    ahead came with, moved on over the records ``folded`` since; for a fresh
    state (``None``), every status read."""
    if describer is None:
        return ChangeDescriber.of(session)
    describer.catch_up(session, folded)
    return describer


@dataclass(slots=True)
class SeekResult:
    """How a seek got there: ``restored`` (another state: redraw all), or by
    folding on (``changes`` holds every record since the previous position;
    ``many`` when that was more than :data:`REPORTED_FOLD` frames, too many
    records for a view to take one by one rather than compare itself again)."""

    restored: bool
    changes: list[Change] = field(default_factory=list)
    many: bool = False


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
        self.aim: int | None = None
        """Where the user points (the timeline under the pointer): while it is
        set and not the cursor, the restore made ahead is for a seek there."""
        self._fold_rate = _FOLD_RATE
        self._restore_rate = _RESTORE_RATE
        self._spare: tuple[int, Session, ChangeDescriber] | None = None
        """A restored checkpoint not used yet: (its position, its state, a
        describer synced with it)."""
        self._spare_lock = threading.Lock()
        self._spare_stop = threading.Event()
        self._retired: list[Session] = []
        """States seeks replaced, not freed yet (see :meth:`free_retired`)."""
        self._leftovers: list[object] = []
        """The unpicklers of restores (their memo holds every object read)."""
        self._retired_lock = threading.Lock()
        self.spare_yield: Callable[[], None] = lambda: None
        """Called between bursts of a restore made ahead, on its thread: a
        caller blocks there while its UI thread is busy (so the two do not
        share the interpreter lock while a key is handled)."""

    def _new_checkpoints(self) -> Checkpoints:
        frames = self.frames
        interval = self._interval or max(_MIN_INTERVAL, len(frames) // _TARGET_CHECKPOINTS)
        budget = self._budget or max(int(_BUDGET_SHARE * sum(len(f.entry.raw) for f in frames)),
                                     1 << 20)
        return Checkpoints(interval, budget, last_position=len(frames) - 1)

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
        dropped, self.checkpoints = self.checkpoints, self._new_checkpoints()
        # states restored from the dropped ones' pool may still be alive
        self.checkpoints.shared_owners = dropped.shared_owners

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
        """Go to position ``target`` (clamped), forward or back: by folding on
        from here, or by restoring the nearest checkpoint (or the restore made
        ahead) and folding from there, whichever :meth:`_cheaper_to_fold_on`."""
        target = min(max(target, 0), len(self.frames))
        if target == self.position:
            return SeekResult(False, [])
        if self.position < target and self._cheaper_to_fold_on(target):
            collected: list[Change] = []
            skipped = target - 1 - self.position
            started = time.perf_counter()
            with collector_paused():
                while self.position < target - 1:
                    collected += self._apply(self.session, self.position)
                    self.position += 1
            if skipped:
                self._fold_took(skipped, time.perf_counter() - started)
                # the words compare the last frame with the one before it
                self.describer.catch_up(self.session, collected)
                promote_to_oldest()
            collected += self.step()
            return SeekResult(False, collected, many=skipped >= REPORTED_FOLD)
        self._restore(target)
        return SeekResult(True, [])

    def _cheaper_to_fold_on(self, target: int) -> bool:
        """Whether folding on from the current position to ``target`` (ahead)
        is expected to cost no more than restoring the state a restore would
        start from and folding from there: the costs are the ones measured so
        far (seconds per frame folded, per byte of checkpoint restored)."""
        fold_on, restore = self._costs(target)
        return fold_on is not None and fold_on <= restore

    def seek_cost(self, target: int) -> float:
        """The seconds :meth:`seek` to ``target`` is expected to take (from the
        rates measured so far): long while the checkpoints near it are not
        built yet."""
        target = min(max(target, 0), len(self.frames))
        if target == self.position:
            return 0.0
        fold_on, restore = self._costs(target)
        return restore if fold_on is None else min(fold_on, restore)

    def _costs(self, target: int) -> tuple[float | None, float]:
        """(folding on from here, restoring and folding from there) to
        ``target``, in expected seconds; the first is ``None`` when ``target``
        is not ahead. Folding on is taken to cost nothing more when it is
        within an interval of the checkpoints, or when no restore would start
        nearer (a restore is then not made: its cost is infinite)."""
        ahead = target - self.position
        spare = self._spare_at(target - 1)
        found = self.checkpoints.packed_at_or_before(target - 1)
        checkpoint = found[0] if found is not None else 0
        if spare >= checkpoint:  # the restore made ahead: taking it costs nothing
            restore = (target - spare) * self._fold_rate
        else:
            restore = (len(found[1]) * self._restore_rate if found is not None else 0.0) \
                + (target - checkpoint) * self._fold_rate
        if ahead <= 0:
            return None, restore
        fold_on = ahead * self._fold_rate
        if max(spare, checkpoint) <= self.position or ahead <= self.checkpoints.interval:
            return fold_on, math.inf  # (a restore would not be made)
        return fold_on, restore

    def _fold_took(self, frames: int, seconds: float) -> None:
        self._fold_rate += (seconds / frames - self._fold_rate) * min(1.0, frames / 4096)

    def _restore(self, target: int) -> None:
        before = target - 1  # fold to the frame before, then step (for the change words)
        spare = self._take_spare(before)
        leftovers: list[object] = []
        describer: ChangeDescriber | None = None
        with collector_paused():
            if spare is not None:
                position, session, describer = spare
            elif target and (found := self.checkpoints.packed_at_or_before(before)) is not None:
                position, packed = found
                started = time.perf_counter()
                session, describer = restore_checkpoint(packed, leftovers=leftovers)
                took = time.perf_counter() - started
                self._restore_rate += (took / max(len(packed), 1) - self._restore_rate) / 2
            else:
                session, position = self._new_session(), 0
            started, skipped = time.perf_counter(), before - position
            folded: list[Change] = []  # (for a describer to move on: none for a fresh state)
            while position < before:
                changes = self._apply(session, position)
                if describer is not None:
                    folded += changes
                position += 1
            if skipped > 0:
                self._fold_took(skipped, time.perf_counter() - started)
            promote_to_oldest()
        self._retire(self.session, leftovers)
        self.session = session
        self.position = position
        self.describer = _words_values(session, describer, folded)
        self.changes, self.descriptions = [], []
        if position < target:
            self.step()

    # --- the states seeks leave behind -----------------------------------------------------

    _RETIRED_KEPT = 2
    """Replaced states left for :meth:`free_retired` (and as many restores'
    unpicklers); older ones are let go of at once."""

    def _retire(self, session: Session, leftovers: Sequence[object] = ()) -> None:
        """Keep the state a restore replaced (and the unpickler it used) for
        :meth:`free_retired` instead of freeing them now: the seek's caller
        waits for the seek, not for that."""
        keep = self._RETIRED_KEPT
        with self._retired_lock:
            self._retired.append(session)
            self._leftovers += leftovers
            overflow, self._retired = self._retired[:-keep], self._retired[-keep:]
            del self._leftovers[:-keep]
        for old in overflow:  # nobody frees them: at once, without the collector
            release(old, self.checkpoints.shared_owners)

    @property
    def retired(self) -> int:
        """How many replaced states wait for :meth:`free_retired`."""
        with self._retired_lock:
            return len(self._retired)

    def free_retired(self, between: Callable[[], None] = lambda: None) -> int:
        """Free the states seeks replaced (:func:`dismantle`), calling
        ``between`` between bursts, and the unpicklers of their restores: a
        worker passes what lets the UI thread run (``time.sleep(0)``).
        Returns how many states were freed."""
        with self._retired_lock:
            self._leftovers.clear()
        freed = 0
        while True:
            with self._retired_lock:
                if not self._retired:
                    return freed
                session = self._retired.pop(0)
            for _ in dismantle(session, shared=self.checkpoints.shared_owners):
                between()
            del session
            freed += 1

    # --- a restore made ahead ----------------------------------------------------------

    def _spare_plan(self) -> tuple[int, int] | None:
        """Which checkpoint the restore made ahead starts from and the
        position it is folded on to: :data:`SPARE_MARGIN` frames before the
        frame a seek to :attr:`aim` folds to, when the user points somewhere;
        else before the frame a step back folds to (so a step back, or a jump
        back that short, only folds a few frames); near the start, where a
        step back restores nothing, the last checkpoint (the frame before the
        last: a jump to the end then only steps), once all are built.
        ``None``: no restore is worth making."""
        checkpoints = self.checkpoints
        aim = self.aim if self.aim != self.position else None
        if aim is not None:
            before = min(max(aim - 1, 0), len(self.frames))  # a seek there folds to here
        else:
            before = max(self.position - 2, 0)  # a step back folds to here, then steps
        base = checkpoints.latest_at_or_before(before)
        if base:
            return base, max(base, before - SPARE_MARGIN)
        if aim is not None:
            return None
        last = checkpoints.latest_at_or_before(len(self.frames)) if checkpoints.complete else 0
        return (last, max(last, len(self.frames) - 1)) if last else None

    def wants_spare(self) -> bool:
        """Whether :meth:`prepare_spare` would make a restore that the next
        step back (or jump to the end) needs."""
        plan = self._spare_plan()
        if plan is None:
            return False
        with self._spare_lock:
            return self._spare is None or self._spare[0] != plan[1]

    def prepare_spare(self) -> bool:
        """Restore, on the calling thread (a worker: it lets other threads run
        meanwhile), the checkpoint before the cursor and fold it on to just
        before the frame a step back shows (see :meth:`_spare_plan`); keep it
        for the seek that needs it (one at a time: any seek it is nearer to
        than the nearest checkpoint uses it), by :meth:`fold_spare`. Returns
        whether one was made."""
        plan = self._spare_plan()
        if plan is None or self._spare_stop.is_set() or not self.wants_spare() \
                or self.checkpoints.packed_at_or_before(plan[0]) is None:
            return False
        return self.fold_spare(plan[1])  # (from that checkpoint: the latest before plan[1])

    def fold_spare(self, position: int, cancelled: Callable[[], bool] = lambda: False) -> bool:
        """Fold a state of its own to ``position`` (from the latest checkpoint
        before it, else from the first frame), on the calling thread (a
        worker), and keep it as the restore made ahead: a seek there then only
        takes it (``cctv replay --from LINE`` deep in a big file shows its first
        screen before this fold is done, and so does a seek made before the
        checkpoints near it are built). Returns
        whether it was kept (not cancelled). The collector is off meanwhile
        (it would walk the ~million objects made, for nothing), and they go
        to its oldest generation unexamined."""
        position = min(position, len(self.frames))
        found = self.checkpoints.packed_at_or_before(position)

        def stop() -> bool:
            return cancelled() or self._spare_cancelled()

        describer: ChangeDescriber | None = None
        folded: list[Change] = []
        with collector_paused():
            if found is None:
                start, session = 0, self._new_session()
            else:
                try:
                    session, describer = restore_checkpoint(found[1], cancelled=stop)
                except EOFError:
                    return False
                start = found[0]
            for index in range(start, position):
                if index % 256 == 0 and stop():
                    return False
                changes = self._apply(session, index)
                if describer is not None:
                    folded += changes
            words = _words_values(session, describer, folded)  # here, not on the UI thread
            promote_to_oldest()
        self._keep_spare(position, session, words)
        return True

    def _keep_spare(self, position: int, session: Session, describer: ChangeDescriber) -> None:
        with self._spare_lock:
            unused, self._spare = self._spare, (position, session, describer)
        if unused is not None:  # made for a cursor that moved on: freed like a replaced state
            self._retire(unused[1])

    def _spare_cancelled(self) -> bool:
        self.spare_yield()
        return self._spare_stop.is_set()

    def stop_spare(self) -> None:
        """Stop a :meth:`prepare_spare` running in another thread at its next
        burst (the app is closing), and make none from now on."""
        self._spare_stop.set()

    def _spare_at(self, before: int) -> int:
        """The position of the restore made ahead when it is at or before
        ``before`` (a seek forward past it takes it rather than fold there), else 0."""
        with self._spare_lock:
            spare = self._spare
        return spare[0] if spare is not None and spare[0] <= before else 0

    def _take_spare(self, before: int) -> tuple[int, Session, ChangeDescriber] | None:
        """The restore made ahead, when it is at or before ``before`` and no
        farther from it than the checkpoint a restore would use."""
        with self._spare_lock:
            spare = self._spare
            if spare is None or spare[0] > before \
                    or spare[0] < self.checkpoints.latest_at_or_before(before):
                return None
            self._spare = None
            return spare

    # --- checkpoints -------------------------------------------------------------------

    def snapshots(self, grid: Checkpoints, cancelled: Callable[[], bool] = lambda: False,
                  session: Session | None = None) -> Iterator[tuple[int, bytes]]:
        """Fold every frame once more on a private session (``session``, a new
        one by default) and yield
        ``(position, checkpoint(session))`` on ``grid``'s
        :meth:`~Checkpoints.planned_interval`, and at the frame before the
        last (the state the user steps through is not touched); each size
        taken is told to ``grid``, which plans from it."""
        session = self._new_session() if session is None else session
        n = len(self.frames)
        for index in range(n):
            if cancelled():
                return
            self._apply(session, index)
            position = index + 1
            if (position % grid.planned_interval(n) == 0 and position < n) or position == n - 1:
                with collector_paused():
                    # with the describer's values: a restore need not read them again
                    snapshot = checkpoint(session, ChangeDescriber.of(session))
                grid.snapshot_taken(position, len(snapshot))
                yield position, snapshot

    def pooled_snapshots(self, plan: PoolPlan, positions: Sequence[int],
                         cancelled: Callable[[], bool] = lambda: False
                         ) -> Iterator[tuple[int, bytes]]:
        """Fold every frame once more on a private session and yield
        ``(position, plan.checkpoint(...))`` at each of ``positions``: the
        checkpoints :meth:`Checkpoints.add_pooled` keeps."""
        session = self._new_session()
        wanted = set(positions)
        for index in range(max(wanted, default=0)):
            if cancelled():
                return
            self._apply(session, index)
            if index + 1 in wanted:
                with collector_paused():
                    snapshot = plan.checkpoint(session, ChangeDescriber.of(session))
                yield index + 1, snapshot

    def checkpoint_pieces(self, grid: Checkpoints, cancelled: Callable[[], bool] = lambda: False
                          ) -> Iterator[tuple[int, int, bytes]]:
        """Everything a checkpoint builder makes, in order, as ``(kind,
        position, pickled bytes)``: the :meth:`snapshots` (``PLAIN``); once
        every frame is folded, the final state's units (``POOL``, position 0:
        see :mod:`reducer.replay.pool`); then each checkpoint ``grid`` kept
        again, with those units as pool indexes (``POOLED``)."""
        session = self._new_session()
        taken: list[int] = []
        for position, snapshot in self.snapshots(grid, cancelled, session):
            taken.append(position)
            yield PLAIN, position, snapshot
        if cancelled():
            return
        with collector_paused():
            plan = PoolPlan(session)
            pool = plan.pickled()
        del session
        yield POOL, 0, pool
        del pool
        # the positions taken that thinning has not dropped by now (a builder
        # whose grid lags behind takes a few more, which are not kept)
        again = [p for p in taken if p % grid.interval == 0 or p == grid.last_position]
        for position, snapshot in self.pooled_snapshots(plan, again, cancelled):
            yield POOLED, position, snapshot

    def build_checkpoints(self, cancelled: Callable[[], bool] = lambda: False) -> Iterator[int]:
        """Fill :attr:`checkpoints` from :meth:`checkpoint_pieces`; yields each
        position kept (again when its pooled checkpoint replaces it). Meant
        for a worker thread."""
        checkpoints = self.checkpoints
        for kind, position, data in self.checkpoint_pieces(checkpoints, cancelled):
            if checkpoints.take(kind, position, data):
                yield position
        if not cancelled():
            checkpoints.complete = checkpoints.pooled = True

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
