"""The on-disk conversation chain: ``parentUuid`` links, and rewinds.

A transcript is a tree of rows; the conversation is the path from the root to
the latest leaf (the last user or assistant row). A user or assistant row
whose parent is an earlier point of that path abandons the rows in between
(a rewind): their items are hidden.

The path is kept as a set (:attr:`Chain._on_path`) updated as the leaf moves:
appending a row under the leaf is O(1), and a branch switch costs the rows it
leaves and the rows it joins, each once, so a long transcript stays linear
whatever its rows look like (rows re-parented, parents named before their own
row, cycles).
"""

from __future__ import annotations

from .. import frames as F
from ..state import MAIN
from .core import Core

__all__ = ["Chain", "LOCAL_COMMAND_MARKERS"]

_REWIND_WALK = 100_000
"""How far up the on-disk parent chain any walk goes (a cycle or a broken file)."""

_MISSING = object()
_CYCLE = object()

LOCAL_COMMAND_MARKERS = (
    "<command-name>", "<command-message>", "<local-command-stdout>", "<local-command-stderr>",
    "<bash-input>", "<bash-stdout>", "<bash-stderr>",
)
"""User rows the CLI writes for a local command (``/clear``, ``/doctor``, ``!`` bash…):
they hang as siblings under a caveat row, so they never become the leaf and
never rewind the conversation."""


def _is_local_command(e: F._Row) -> bool:
    if not isinstance(e, F.User):
        return False
    content = e.message.content
    if isinstance(content, list):
        first = next((b for b in content if b.type == "text"), None)
        text = first.text or "" if first is not None else ""
    else:
        text = content
    return text.lstrip().startswith(LOCAL_COMMAND_MARKERS)


class Chain:
    """Rewind detection over the rows' ``parentUuid`` links."""

    def __init__(self, core: Core) -> None:
        self._core = core
        self.rewinds = 0
        """On-disk branches abandoned by a rewind (their items are hidden)."""
        self._parents: dict[str, str | None] = {}
        self._on_path: set[str] | None = set()
        """The rows from the root to :attr:`_leaf`; ``None`` makes the fold
        find rewinds by walking up from the leaf instead (the slow reference
        the tests compare it with)."""
        self._leaving: list[str] = []
        self._leaf: str | None = None

    def knows(self, uuid: str) -> bool:
        """Whether a row of the conversation chain folded so far has this uuid."""
        return uuid in self._parents

    def follow(self, e: F._Row) -> None:
        """Rebuild the on-disk conversation by ``parentUuid``: a user or assistant
        row whose parent is an *ancestor* of the current leaf abandons the rows
        in between (a rewind); their items are hidden. Tool-result rows, local
        commands and rows hanging off later rows never count as rewinds."""
        uuid = e.uuid or ""
        parent = e.parentUuid
        parents = self._parents
        old = parents.get(uuid, _MISSING)
        parents[uuid] = parent
        on_path = self._on_path
        if on_path is not None and old is not parent and old != parent and uuid in on_path:
            # the path's top named as a parent before its own row came, or a row of
            # the path moved: extend the path, or start it again (both rare)
            if old is not _MISSING or self._join(parent) is not None:
                on_path = self._restart_path()
        if not isinstance(e, (F.User, F.Assistant)) or e.isMeta or _is_local_command(e):
            return
        leaf = self._leaf
        self._leaf = uuid
        if leaf is None:
            if on_path is not None:
                self._restart_path()
            return
        if parent == leaf:
            if on_path is not None:
                on_path.add(uuid)
            return
        if on_path is None:  # the reference walk (tests compare the two)
            abandoned = self._walk_up(leaf, parent) if parent is not None else None
        else:
            rewound = parent is not None and parent in on_path
            junction = parent if rewound else self._join(parent)
            if junction is _CYCLE:
                self._on_path = None
                abandoned = self._walk_up(leaf, parent) if parent is not None else None
            else:
                self._leave(leaf, junction)
                on_path.add(uuid)
                abandoned = self._leaving if rewound else None
        if abandoned is None or parent is None:
            return  # the parent is not an ancestor: no rewind
        if isinstance(e, F.User) and isinstance(e.message.content, list) and any(
                b.type == "tool_result" for b in e.message.content):
            return
        hidden = 0
        core = self._core
        for gone in abandoned:
            for item in core.uuid_items(gone):
                if not item.hidden:
                    item.hidden = True
                    hidden += 1
                    core.touch(item)
        if hidden:
            self.rewinds += 1
            core.notice(MAIN, e.line_no, "rewind",
                         f"conversation rewound: {hidden} item(s) of an abandoned branch hidden",
                         level="warning")

    def _ancestors(self, node: str | None) -> set[str] | None:
        """``node`` and the rows above it (at most :data:`_REWIND_WALK`); ``None``
        when they loop (a broken file)."""
        out: set[str] = set()
        parents = self._parents
        for _ in range(_REWIND_WALK):
            if node is None:
                break
            if node in out:
                return None
            out.add(node)
            node = parents.get(node)
        return out

    def _restart_path(self) -> set[str] | None:
        """Rebuild the path from the leaf; a loop in the parents makes the fold
        walk from the leaf for every row instead (exact, slower)."""
        self._on_path = self._ancestors(self._leaf)
        return self._on_path

    def _join(self, node: str | None) -> object:
        """Put ``node`` and its ancestors on the path up to the first row already
        on it, and return that row (``None``: the walk reached a root;
        :data:`_CYCLE`: the new rows loop)."""
        on_path = self._on_path
        assert on_path is not None
        parents = self._parents
        added: set[str] = set()
        for _ in range(_REWIND_WALK):
            if node is None:
                return None
            if node in on_path:
                return _CYCLE if node in added else node
            on_path.add(node)
            added.add(node)
            node = parents.get(node)
        return None

    def _leave(self, leaf: str, junction: str | None) -> None:
        """Take the rows from ``leaf`` up to (not including) ``junction`` off the
        path; :attr:`_leaving` lists them, leaf first."""
        on_path = self._on_path
        assert on_path is not None
        parents = self._parents
        gone: list[str] = []
        node: str | None = leaf
        for _ in range(_REWIND_WALK):
            if node is None or node == junction or node not in on_path:
                break
            on_path.discard(node)
            gone.append(node)
            node = parents.get(node)
        self._leaving = gone

    def _walk_up(self, leaf: str, parent: str) -> list[str] | None:
        """The nodes from ``leaf`` up to, not including, ``parent`` when ``parent``
        is an ancestor of ``leaf`` at most :data:`_REWIND_WALK` steps up, else None."""
        abandoned: list[str] = []
        node: str | None = leaf
        parents = self._parents
        for _ in range(_REWIND_WALK):
            if node is None:
                return None
            if node == parent:
                return abandoned
            abandoned.append(node)
            node = parents.get(node)
        return None
