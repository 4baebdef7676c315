"""The on-disk conversation chain: ``parentUuid`` links, and rewinds.

A transcript is a tree of rows; the conversation is the path to the latest
leaf. A user or assistant row re-parented onto an earlier point abandons the
branch in between (a rewind): its items are hidden.
"""

from __future__ import annotations

from .. import frames as F
from ..state import MAIN
from .kernel import Kernel

__all__ = ["Chain"]

_REWIND_WALK = 100_000
"""How far up the on-disk parent chain a rewind's target is looked for."""


class Chain(Kernel):
    """Rewind detection over the rows' ``parentUuid`` links."""

    def _chain(self, e: F._Row) -> None:
        """Rebuild the on-disk conversation by ``parentUuid``: a user or assistant
        row whose parent is an *ancestor* of the current leaf abandons the rows
        in between (a rewind); their items are hidden. Tool-result rows and
        rows hanging off later rows never count as rewinds."""
        uuid = e.uuid or ""
        parent = e.parentUuid
        fresh_parent = self._depth is not None and parent is not None and parent not in self._depth
        self._link(uuid, parent)
        if not isinstance(e, (F.User, F.Assistant)) or e.isMeta:
            return
        leaf = self._leaf
        self._leaf = uuid
        if parent is None or leaf is None or parent == leaf:
            return
        if isinstance(e, F.User) and isinstance(e.message.content, list) and any(
                b.type == "tool_result" for b in e.message.content):
            return
        abandoned = self._path_up(leaf, parent, fresh_parent)
        if abandoned is None:
            return  # the parent is not an ancestor: no rewind
        hidden = 0
        for gone in abandoned:
            for item in self._uuid_items(gone):
                if not item.hidden:
                    item.hidden = True
                    hidden += 1
                    self._touch(item)
        if hidden:
            self.rewinds += 1
            self._notice(MAIN, e.line_no, "rewind",
                         f"conversation rewound: {hidden} item(s) of an abandoned branch hidden",
                         level="warning")

    def _link(self, uuid: str, parent: str | None) -> None:
        """``_parents[uuid] = parent``, keeping :attr:`_depth` exact while it can be."""
        parents = self._parents
        depth = self._depth
        if depth is not None:
            if uuid in parents:
                if parents[uuid] != parent:
                    self._depth = None  # a known node moves: depths below it change
            elif uuid in depth:  # named as a parent before its own row came
                if parent is not None:
                    self._depth = None
            elif parent is None:
                depth[uuid] = 0
            elif parent == uuid:
                self._depth = None
            else:
                up = depth.get(parent)
                if up is None:
                    depth[parent] = up = 0  # not seen: a root as far as any walk goes
                depth[uuid] = up + 1
        parents[uuid] = parent
        if self._pending_summaries and uuid in self._pending_summaries:
            self._set_title(self._pending_summaries.pop(uuid), 2)

    def _path_up(self, leaf: str, parent: str, fresh_parent: bool) -> list[str] | None:
        """The nodes from ``leaf`` up to, not including, ``parent`` when ``parent``
        is an ancestor of ``leaf`` at most :data:`_REWIND_WALK` steps up, else None.

        Walking up from the leaf to the root for every row whose parent is not
        the leaf (an attachment or system row between two messages, i.e. most
        user and assistant rows on disk) made a long transcript quadratic. With
        exact depths, node ``i`` steps up has depth ``depth[leaf] - i``, so the
        parent can only be the node ``depth[leaf] - depth[parent]`` steps up: one
        comparison when it is not above the leaf, a walk of the rewind's length
        when it is. A parent first named by this row cannot be on the leaf's
        path. Without depths, the walk is the original one."""
        parents = self._parents
        depth = self._depth
        if depth is not None:
            if fresh_parent:
                return None
            steps = depth[leaf] - depth[parent]
            if steps <= 0 or steps >= _REWIND_WALK:
                return None
            path: list[str] = []
            node: str | None = leaf
            for _ in range(steps):
                path.append(node)  # type: ignore[arg-type]
                node = parents.get(node)  # type: ignore[arg-type]
            return path if node == parent else None
        abandoned: list[str] = []
        node = leaf
        for _ in range(_REWIND_WALK):
            if node is None:
                return None
            if node == parent:
                return abandoned
            abandoned.append(node)
            node = parents.get(node)
        return None

