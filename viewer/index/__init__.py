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
from pathlib import Path

from .rows import SessionRow, activity_order
from .refresh import Progress, RefreshReport, refresh
from .scan import resolve_root
from .store import MARKS, Hit, IndexClosed, IndexStore, damaged, index_file, locked

__all__ = ["Hit", "IndexClosed", "LIVE_WINDOW_S", "MARKS", "SessionIndex", "SessionRow", "RefreshReport",
           "activity_order", "resolve_root"]

LIVE_WINDOW_S = 300.0
"""A session written to within this many seconds is marked live."""


class SessionIndex:
    """The index of one projects folder.

    ``use_index=False`` keeps it in memory for this run only (``--no-index``):
    every file is read directly and nothing is written to the cache.
    """

    def __init__(self, root: Path, *, use_index: bool = True, workers: int | None = None) -> None:
        self.root = Path(os.path.abspath(root))  # rows name their files by absolute path
        self.workers = workers
        self.store = IndexStore(index_file(root) if use_index else None)

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
        return self.store.rows()

    def refresh(self, progress: Progress | None = None) -> RefreshReport:
        """Read what changed in the projects folder. An index file that fails
        (damaged, or locked past the busy timeout) is rebuilt or replaced by
        one in memory, and the refresh starts again: never an error."""
        try:
            return refresh(self.store, self.root, progress, self.workers)
        except sqlite3.Error as exc:
            if not (damaged(exc) or locked(exc)) or self.store.closed:
                raise
            self.store.recover(exc)
            return refresh(self.store, self.root, progress, self.workers)

    def search(self, text: str, limit: int = 200) -> list[Hit]:
        """Full-text hits across every session's prompts, replies and tool inputs."""
        return self.store.search(text, limit)

    def close(self) -> None:
        self.store.close()

    @staticmethod
    def now() -> float:
        return time.time()
