"""Snapshots of a session's state, for replay seeking: taken, packed, and read back.

:func:`checkpoint` pickles the state of a :class:`~reducer.fold.Session` (its
:attr:`~reducer.fold.Session.parts`, and something derived from them);
:func:`restore_with_extra` makes a session of them again. The state
classes pickle as ``(class, field tuple)``, which cannot hold a cycle: the
back references of calls and hook runs to their cards (:func:`back_links`)
are left out of the state and pickled after it as ``(owner, card)`` pairs.
:func:`own_tables` lists the containers a state made itself, for freeing one
a burst at a time (:func:`reducer.replay.player.dismantle`).

Checkpoints are compressed with Zstandard (the ``zstandard`` package), not
zlib: at the end of a 100 MB session a snapshot (14.6 MB) inflates in 11 ms
instead of 72 ms, packs in 50 ms instead of 611 ms, and is 4.8× smaller
instead of 3.0×.
"""

from __future__ import annotations

import io
import pickle
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..fold import Session
from ..state import HookItem, HookRun, Item, ToolCall, ToolItem

__all__ = ["Inflating", "back_links", "checkpoint", "own_tables", "pack", "restore",
           "restore_with_extra", "unpack"]

LEVEL = 3
"""Zstandard's level for checkpoints (higher levels pack 5× slower for 2% less)."""

# ``zstandard`` is imported when first needed: it takes ~20 ms to import, and
# only a replay packs (``cctv summary`` and the other headless commands do not).


def pack(snapshot: Any) -> bytes:
    """``snapshot`` (bytes or a buffer) compressed, as checkpoints are kept."""
    import zstandard

    return zstandard.ZstdCompressor(level=LEVEL).compress(snapshot)


def unpack(packed: Any) -> bytes:
    """A :func:`pack`'s bytes back, whole (``zstandard.ZstdError`` when damaged)."""
    import zstandard

    return zstandard.ZstdDecompressor().decompress(packed)


class Inflating(io.BytesIO):
    """A file over a :func:`pack`-ed snapshot, for an unpickler: inflated
    whole at once (11 ms for the 15 MB end state of a 100 MB session, the
    interpreter lock let go meanwhile; the unpickler reads it in frames of
    64 KB, a Python call each, so other threads run between reads). Once
    ``cancelled()`` says so a read raises :class:`EOFError` (and so does
    the unpickler reading it)."""

    def __init__(self, packed: Any, cancelled: Callable[[], bool] | None = None) -> None:
        super().__init__(unpack(packed))
        self._cancelled = cancelled

    def _check(self) -> None:
        if self._cancelled is not None and self._cancelled():
            self.close()
            raise EOFError("the restore was cancelled")

    def read(self, size: int | None = -1) -> bytes:
        self._check()
        return super().read(size)

    def readinto(self, target: Any) -> int:
        self._check()
        return super().readinto(target)

    def readline(self, size: int | None = -1) -> bytes:
        self._check()
        return super().readline(size)


# --- taking and restoring -----------------------------------------------------------------


def checkpoint(session: Session, extra: Any = None, shared: Mapping[int, int] | None = None) -> bytes:
    """A snapshot of the whole state of ``session``, and of ``extra``:
    something derived from the state that a restore would otherwise derive
    again (pickled with it, it shares the state's objects; see
    :func:`restore_with_extra`).

    ``shared`` maps ``id(obj)`` of objects a restore takes from a pool
    instead of building them to their index there (see
    :mod:`reducer.replay.pool`): each is pickled as that index (a
    persistent id), and their back references are the pool's own."""
    session.parts.core.end()  # (the last fold's change records are not state)
    links = back_links(session)
    for owner, _ in links:
        owner.item = None
    try:
        if not shared:
            return pickle.dumps((session.parts, links, extra), protocol=pickle.HIGHEST_PROTOCOL)
        kept = [(owner, item) for owner, item in links if id(owner) not in shared]
        out = io.BytesIO()
        _SharingPickler(out, shared).dump((session.parts, kept, extra))
        return out.getvalue()
    finally:
        for owner, item in links:
            owner.item = item


def restore(snapshot: Any, *, packed: bool = False, cancelled: Callable[[], bool] | None = None,
            leftovers: list[Any] | None = None, shared: Sequence[Any] | None = None) -> Session:
    """The state saved by :func:`checkpoint` (see :func:`restore_with_extra`)."""
    return restore_with_extra(snapshot, packed=packed, cancelled=cancelled,
                              leftovers=leftovers, shared=shared)[0]


def restore_with_extra(snapshot: Any, *, packed: bool = False,
                       cancelled: Callable[[], bool] | None = None,
                       leftovers: list[Any] | None = None,
                       shared: Sequence[Any] | None = None) -> tuple[Session, Any]:
    """The state saved by :func:`checkpoint`, and the ``extra`` saved with
    it. ``packed``: the snapshot as :func:`pack` left it (as replay keeps
    them), read by the unpickler a frame at a time (:class:`Inflating`):
    other threads run between frames, and ``cancelled`` is asked before
    each: once it says so the restore stops with :class:`EOFError`.
    ``leftovers``: the unpickler is put there instead of freed (its memo
    holds every object read: ~30 ms to let go of at 100 MB), for the
    caller to drop after the screen is drawn. ``shared``: the pool a
    checkpoint taken with ``shared`` indexes into (its objects are taken
    from there, not built)."""
    reader: io.BytesIO = Inflating(snapshot, cancelled) if packed else io.BytesIO(snapshot)
    unpickler = pickle.Unpickler(reader)
    if shared is not None:
        unpickler.persistent_load = shared.__getitem__  # type: ignore[assignment]
    try:
        parts, links, extra = unpickler.load()
    finally:
        reader.close()
    if leftovers is not None:
        leftovers.append(unpickler)
    for owner, item in links:
        owner.item = item
    return Session(parts), extra


class _SharingPickler(pickle.Pickler):
    """Pickles the objects ``shared`` names (by ``id``) as their index there."""

    def __init__(self, file: io.BytesIO, shared: Mapping[int, int]) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self._index = shared.get

    def persistent_id(self, obj: Any) -> int | None:
        return self._index(id(obj))


# --- the state's cycles and containers ------------------------------------------------------


def back_links(session: Session) -> list[tuple[ToolCall | HookRun, Item]]:
    """Every call and hook run of ``session`` that points back at its card,
    with the card: the state's only cycles (those of the cards, and those
    kept by id, which are the same but for a call replaced in place)."""
    seen: set[int] = set()
    links: list[tuple[ToolCall | HookRun, Item]] = []

    def note(owner: ToolCall | HookRun | None) -> None:
        if owner is not None and owner.item is not None and id(owner) not in seen:
            seen.add(id(owner))
            links.append((owner, owner.item))

    for agent in session.agents.values():
        for item in agent.items:
            if type(item) is ToolItem:
                note(item.call)
            elif type(item) is HookItem:
                note(item.hook)
    for call in session.calls.values():
        note(call)
    for hook in session.hooks.values():
        note(hook)
    return links


def own_tables(session: Session) -> list[Any]:
    """The big containers the fold made itself: the agents' items, calls,
    hooks, tasks, turns and the indexes over them. (A state also holds
    objects of the decoded frames, such as a result's model usage, which
    a fold from the same frames reads again: those are not its own.)"""
    parts = session.parts
    return [*parts.core.tables(), *parts.calls.tables(), *parts.hooks.tables(),
            *parts.tasks.tables(), *parts.turns.tables(), *parts.usage.tables()]
