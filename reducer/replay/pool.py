"""What replay checkpoints share: the transcript units no later frame changes.

Restoring a checkpoint builds every object of the state again: ~600k at the
end of a 100 MB session, about 100 ms. Yet most of a late state is transcript
*units* — an item with the call, hook run or turn it draws — that no later
frame touches: the same at that checkpoint, at every later one and in the
final state. So the checkpoint builder, once it has folded every frame,
keeps the final state's units as a pool (:class:`PoolPlan`, sent to the
viewer once); it then folds again, and pickles each checkpoint with every
unit that equals its final self (field by field, the item's version
included) as its index in the pool. A restore takes those units from the
pool (:class:`UnitPool`) instead of building them.

The states a replay holds (the one shown, the restore made ahead, the ones a
seek left behind) then share the pooled units. That is sound because a fold
never changes a unit that equals its final self: every change to a unit
bumps its item's version (``Core.touch``; a test checks it frame by frame
on the recordings), and versions only grow, so a unit that will change again
differs from its final self. The code that frees a left-behind state skips
the pool's calls and hook runs (:attr:`UnitPool.owners`).
"""

from __future__ import annotations

import io
import pickle
from collections.abc import Callable
from functools import cache
from operator import itemgetter
from typing import Any

from msgspec.structs import astuple

from ..collector import collector_paused, promote_to_oldest
from ..fold import Session
from ..state import HookItem, HookRun, Item, ToolCall, ToolItem, TurnFooterItem
from .snapshot import Inflating, checkpoint

__all__ = ["PoolPlan", "UnitPool", "signature"]

_REF_FIELD: dict[type, str] = {ToolItem: "call", HookItem: "hook", TurnFooterItem: "turn_ref"}
"""The item classes that draw another state object, and the field holding it."""
_NOT_COMPARED: dict[type, frozenset[str]] = {
    ToolCall: frozenset({"item", "tool"}),  # the back reference; the canonical tool reducer.queries builds
    HookRun: frozenset({"item"}),
}
_OWNERS = (ToolCall, HookRun)
"""The classes whose objects point back at their card (``item``)."""


@cache
def _fields_of(cls: type) -> Callable[[Any], tuple[Any, ...]]:
    """The values of ``cls``'s fields that tell two of its objects apart,
    in field order (a unit's own reference and back reference left out)."""
    names: tuple[str, ...] = cls.__struct_fields__  # type: ignore[attr-defined]
    skip = {_REF_FIELD[cls]} if cls in _REF_FIELD else _NOT_COMPARED.get(cls, frozenset())
    keep = [i for i, name in enumerate(names) if name not in skip]
    if len(keep) == len(names):
        return astuple
    pick = itemgetter(*keep) if len(keep) > 1 else (lambda t: (t[keep[0]],))

    def values(obj: Any) -> tuple[Any, ...]:
        return pick(astuple(obj))  # type: ignore[no-any-return]

    return values


def _ref(item: Item) -> Any:
    """The call, hook run or turn ``item`` draws (``None``: none)."""
    name = _REF_FIELD.get(type(item))
    return None if name is None else getattr(item, name)


def signature(item: Item) -> tuple[Any, ...]:
    """``item`` and what it draws as plain values: equal for two units only
    when every field is (by value; the objects the unit points at through
    another field would be compared by identity, and so never equal)."""
    cls = type(item)
    ref = _ref(item)
    drawn = None if ref is None else (type(ref), _fields_of(type(ref))(ref))
    return cls, _fields_of(cls)(item), drawn


class PoolPlan:
    """The checkpoint builder's side: the final state's units, and which units
    of a state at some frame equal them (see the module docstring)."""

    def __init__(self, final: Session) -> None:
        self.objects: list[Any] = []
        """The pool: each unit's item, followed by what it draws (if anything)."""
        self._units: dict[tuple[str, int], tuple[int, tuple[Any, ...]]] = {}
        """(agent id, position in its items) → (the item's index in :attr:`objects`,
        its :func:`signature` in the final state)."""
        self._session: Session | None = None
        self._known: dict[int, tuple[int, int]] = {}
        """Units of :attr:`_session` (kept alive by it) found equal to their
        final selves: ``id(item)`` → (its version then, its index in the pool)."""
        objects = self.objects
        for agent_id, agent in final.agents.items():
            for position, item in enumerate(agent.items):
                self._units[agent_id, position] = (len(objects), signature(item))
                objects.append(item)
                ref = _ref(item)
                if ref is not None:
                    objects.append(ref)

    def pickled(self) -> bytes:
        """The pool as :meth:`UnitPool.load` reads it (the back references of
        its calls and hook runs kept apart, as in a checkpoint)."""
        links = [(owner, owner.item) for owner in self.objects
                 if type(owner) in _OWNERS and owner.item is not None]
        for owner, _ in links:
            owner.item = None
        try:
            return pickle.dumps((self.objects, links), protocol=pickle.HIGHEST_PROTOCOL)
        finally:
            for owner, item in links:
                owner.item = item

    def shared(self, session: Session) -> dict[int, int]:
        """``id(obj)`` → index in the pool, for every unit of ``session`` (a
        state at some frame, folded by the builder) equal to its final self,
        and the object it draws. Called again on the same session folded
        further, a unit found equal before and whose version has not changed
        since is taken as it is (a unit that changes raises its version)."""
        if session is not self._session:
            self._session, self._known = session, {}
        known = self._known
        out: dict[int, int] = {}
        units = self._units
        for agent_id, agent in session.agents.items():
            for position, item in enumerate(agent.items):
                seen = known.get(id(item))
                if seen is not None and seen[0] == item.version:
                    index = seen[1]
                else:
                    unit = units.get((agent_id, position))
                    if unit is None or signature(item) != unit[1]:
                        continue
                    index = unit[0]
                    known[id(item)] = (item.version, index)
                out[id(item)] = index
                ref = _ref(item)
                if ref is not None:
                    out[id(ref)] = index + 1
        return out

    def checkpoint(self, session: Session, extra: Any = None) -> bytes:
        """``checkpoint(session, extra)`` with its final units as pool indexes."""
        return checkpoint(session, extra, shared=self.shared(session))


class UnitPool:
    """The viewer's side: the pool's objects, which restores of the
    checkpoints :meth:`PoolPlan.checkpoint` made take instead of building."""

    def __init__(self, objects: list[Any]) -> None:
        self.objects = objects
        self.owners: frozenset[int] = frozenset(id(o) for o in objects if type(o) in _OWNERS)
        """``id`` of the pool's calls and hook runs: their back references are
        never broken (see :func:`reducer.replay.player.release`)."""

    @classmethod
    def load(cls, data: Any, *, packed: bool = True,
             cancelled: Callable[[], bool] | None = None) -> UnitPool:
        """The pool :meth:`PoolPlan.pickled` made, as :func:`~reducer.replay.snapshot.pack`
        left it unless not ``packed`` (``EOFError`` once ``cancelled``); built
        with the collector off, and moved to its oldest generation, as a
        restore is."""
        reader: io.BytesIO = Inflating(data, cancelled) if packed else io.BytesIO(data)
        with collector_paused():  # (as a restore: see reducer.collector)
            try:
                objects, links = pickle.Unpickler(reader).load()
            finally:
                reader.close()
            for owner, item in links:
                owner.item = item
            promote_to_oldest()
        return cls(objects)
