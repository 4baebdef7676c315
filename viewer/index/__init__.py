"""The session index: every saved session of a projects folder, listed and searchable.

SQLite (standard library, WAL, FTS5) in ``$XDG_CACHE_HOME/cctv`` (default
``~/.cache/cctv``), one file per projects folder, updated incrementally. Read-only
toward the sessions: nothing is ever created, changed or touched in the projects
folder. No Textual here (headless commands use it).
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypeVar

from cctv.reducer.live_state import HORIZON_S

from .rows import SessionRow, activity_order
from .refresh import Progress, RefreshReport, refresh
from .scan import resolve_root
from ..storage import Damaged
from .store import MARKS, Hit, IndexClosed, IndexStore, index_file

__all__ = ["Hit", "IndexClosed", "LIVE_WINDOW_S", "MARKS", "SessionIndex", "SessionRow", "RefreshReport",
           "activity_order", "resolve_root"]

T = TypeVar("T")

LIVE_WINDOW_S = HORIZON_S
"""A session written to within this many seconds is live (the live states' horizon)."""


class SessionIndex:
    """The index of one projects folder.

    ``use_index=False`` keeps it in memory for this run only (``--no-index``):
    every file is read directly and nothing is written to the cache.
    ``rows=False``: only searched (``cctv search``), its rows are not all
    decoded on open (see :class:`~viewer.index.store.IndexStore`).
    """

    def __init__(self, root: Path, *, use_index: bool = True, workers: int | None = None,
                 rows: bool = True) -> None:
        self.root = Path(os.path.abspath(root))  # rows name their files by absolute path
        self.workers = workers
        self.store = IndexStore(index_file(root) if use_index else None, rows=rows)

    @property
    def note(self) -> str | None:
        """Why the index file was rebuilt or kept in memory, if it was."""
        return self.store.note

    @property
    def fresh(self) -> bool:
        """Nothing was indexed before this run (a first indexing is coming)."""
        return self.store.fresh

    def rows(self) -> list[SessionRow]:
        """Every indexed session, newest activity first."""
        return self._surviving(self.store.rows, refill=True)

    def refresh(self, progress: Progress | None = None,
                only: Iterable[Path] | None = None) -> RefreshReport:
        """Read what changed in the projects folder (``only``: in these session
        files). An index file that fails (damaged, full, read-only, locked past
        the busy timeout) is rebuilt or replaced by one in memory, and the
        refresh starts again: never an error."""
        return self._surviving(lambda: refresh(self.store, self.root, progress, self.workers,
                                               only))

    def empty(self) -> int:
        """Files with no rows: not sessions, not listed."""
        return self._surviving(self.store.empty)

    def search(self, text: str, limit: int | None = None, role: str | None = None) -> list[Hit]:
        """Full-text hits across every text of every session (sub-agents' too),
        best first: all of them, or the first ``limit``; only texts of ``role``
        when given."""
        return self._surviving(lambda: self.store.search(text, limit, role), refill=True)

    def hit_count(self, text: str, role: str | None = None) -> int:
        """How many hits :meth:`search` finds without a limit."""
        return self._surviving(lambda: self.store.hit_count(text, role), refill=True)

    def usage(self, by: str, since: str | None) -> list[tuple]:
        """Requests summed by day, model or session (:meth:`IndexStore.usage`)."""
        return self._surviving(lambda: self.store.usage(by, since), refill=True)

    def rows_by_id(self) -> dict[int, SessionRow]:
        """Every indexed session by its id in the index."""
        return self._surviving(self.store.rows_by_id, refill=True)

    def _surviving(self, call: Callable[[], T], *, refill: bool = False) -> T:
        """``call()``; after an error from the index file, the file is rebuilt or
        moved to memory (:meth:`IndexStore.recover`) and ``call()`` made again.
        ``refill``: an answer from the index (rows, hits) waits, when it was
        rebuilt empty, for the files to be read into it again, so damage found
        by a search is never taken for "no hits"."""
        try:
            return call()
        except (sqlite3.Error, Damaged) as exc:
            self.store.recover(exc)  # IndexClosed when the app quit meanwhile
        if refill and self.store.fresh and not self.store.count():
            refresh(self.store, self.root, None, self.workers)
        return call()

    def close(self) -> None:
        self.store.close()

    @staticmethod
    def now() -> float:
        return time.time()
