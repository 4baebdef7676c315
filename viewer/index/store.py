"""The index file: one SQLite database (WAL, FTS5) per projects folder.

Tables: ``sessions`` (one row per session file: what the list shows, plus where
its read stopped) and ``texts`` (FTS5 over prompts, replies and tool inputs;
the rowid is ``session id << 32 | n``, so a session's texts are one rowid range).

Never a crash over the file itself: a corrupt file, one written by another
schema or another fold, is deleted and built again; a database another process
holds locked past the busy timeout is replaced by one in memory for this run.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import sqlite3
import threading
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import msgspec

from ..paths import cache_dir
from .rows import Extracted, SessionRow, activity_order

__all__ = ["Hit", "IndexClosed", "IndexStore", "StoredState", "cache_dir", "index_file"]

SCHEMA = 1
_SHIFT = 32
_BUSY_MS = 10_000
_MARK_ON, _MARK_OFF = "\ue000", "\ue001"
"""Private-use characters around a match in a snippet (never in transcripts we show)."""

_DDL = f"""
PRAGMA user_version = {SCHEMA};
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS sessions (
    id INTEGER PRIMARY KEY,
    path TEXT UNIQUE NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    sub_sig TEXT NOT NULL,
    indexed_bytes INTEGER NOT NULL,
    lines INTEGER NOT NULL,
    tail TEXT NOT NULL,
    text_count INTEGER NOT NULL,
    row BLOB NOT NULL
);
CREATE VIRTUAL TABLE IF NOT EXISTS texts USING fts5(
    body, line UNINDEXED, role UNINDEXED, ts UNINDEXED, tokenize = 'unicode61'
);
"""

_ROW_ENCODER = msgspec.msgpack.Encoder()
_ROW_DECODER = msgspec.msgpack.Decoder(SessionRow)


def index_file(root: Path) -> Path:
    """The index of the projects folder ``root``: one file per folder."""
    key = hashlib.blake2b(str(root.resolve()).encode(), digest_size=8).hexdigest()
    return cache_dir(create=False) / f"index-{key}.sqlite"  # the store makes the folder


def fold_fingerprint() -> str:
    """A digest of the reducer's and the index's source: rows folded by another
    version of the code are read again, so the list always matches the viewer."""
    h = hashlib.blake2b(digest_size=8)
    h.update(str(SCHEMA).encode())
    for package in ("cctv.reducer", "cctv.viewer.index"):
        try:
            for name, f in _sources(resources.files(package)):
                h.update(name.encode())
                h.update(f.read_bytes())
        except OSError:
            continue
    for name in ("loader.py", "discovery.py", "subagent_tail.py"):
        try:
            h.update((resources.files("cctv.viewer") / name).read_bytes())
        except OSError:
            continue
    return h.hexdigest()


def _sources(folder: Any, prefix: str = "") -> list[tuple[str, Any]]:
    """The ``.py`` files under ``folder`` (sub-packages too: the fold is
    ``reducer/fold/``), by path, in a stable order."""
    out: list[tuple[str, Any]] = []
    for f in sorted(folder.iterdir(), key=lambda f: f.name):
        if f.is_dir() and f.name != "__pycache__":
            out += _sources(f, f"{prefix}{f.name}/")
        elif f.name.endswith(".py"):
            out.append((prefix + f.name, f))
    return out


@dataclass(frozen=True, slots=True)
class StoredState:
    """Where the index's read of one file stopped."""

    id: int
    size: int
    mtime_ns: int
    sub_sig: str
    indexed_bytes: int
    lines: int
    tail: str


@dataclass(frozen=True, slots=True)
class Hit:
    """One full-text match: a line of a session."""

    path: str
    session_id: str
    title: str
    line: int
    role: str
    timestamp: str | None
    snippet: str
    """The matching text around the words, the matches between :data:`MARKS`."""

    @property
    def plain(self) -> str:
        return self.snippet.replace(_MARK_ON, "").replace(_MARK_OFF, "")


MARKS = (_MARK_ON, _MARK_OFF)


def fts_query(text: str) -> str | None:
    """The words of ``text`` as an FTS5 query: every word, each as a prefix."""
    words = re.findall(r"\w+", text)
    if not words:
        return None
    return " ".join('"' + w.replace('"', '""') + '"*' for w in words)


class IndexClosed(Exception):
    """The index was closed (the app quit) while a refresh was still using it."""


def damaged(exc: sqlite3.Error) -> bool:
    """``exc`` says the index file itself is bad (to be rebuilt)."""
    text = str(exc).lower()
    return any(word in text for word in ("malformed", "not a database", "corrupt",
                                         "disk i/o error"))


def locked(exc: sqlite3.Error) -> bool:
    """``exc`` says another process holds the index past the busy timeout."""
    text = str(exc).lower()
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in text or "busy" in text)


def _locked(method):
    """Run ``method`` holding the store's lock (:class:`IndexClosed` once closed)."""

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        with self.lock:
            if self.closed:
                raise IndexClosed(str(self.path))
            return method(self, *args, **kwargs)

    return wrapper


class IndexStore:
    """An open index. ``note`` says why it was rebuilt or moved to memory, if it was."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.note: str | None = None
        self.fresh = False
        """The file was created (or rebuilt) by this open: a first indexing follows."""
        self.closed = False
        self.lock = threading.RLock()
        """Held by each read and write: one connection, used from the UI and a worker thread."""
        self.db = self._open()

    # --- opening -------------------------------------------------------------------

    def _connect(self, target: str) -> sqlite3.Connection:
        db = sqlite3.connect(target, timeout=_BUSY_MS / 1000, isolation_level=None,
                             check_same_thread=False)
        db.execute(f"PRAGMA busy_timeout = {_BUSY_MS}")
        return db

    def _open(self) -> sqlite3.Connection:
        if self.path is None:
            return self._memory()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            self.note = f"cannot create {self.path.parent} ({exc.strerror}): index kept in memory"
            return self._memory()
        fingerprint = fold_fingerprint()
        for attempt in (1, 2):
            db: sqlite3.Connection | None = None
            try:
                existed = self.path.exists() and self.path.stat().st_size > 0
                db = self._connect(str(self.path))
                db.execute("PRAGMA journal_mode = WAL")
                db.execute("PRAGMA synchronous = NORMAL")
                version = db.execute("PRAGMA user_version").fetchone()[0]
                stale = existed and version != SCHEMA
                if not stale and existed:
                    row = db.execute("SELECT value FROM meta WHERE key = 'fold'").fetchone()
                    stale = row is None or row[0] != fingerprint
                    db.execute("SELECT count(*) FROM sessions").fetchone()
                if stale:
                    db.close()
                    self._remove()
                    self.note = "index written by another version of cctv: rebuilt"
                    continue
                if not existed:
                    with _txn(db):
                        _create(db)
                        db.execute("INSERT OR REPLACE INTO meta VALUES ('fold', ?)", (fingerprint,))
                    self.fresh = True
                return db
            except sqlite3.OperationalError as exc:
                if db is not None:
                    db.close()
                if "locked" in str(exc) or "busy" in str(exc):
                    self.note = f"index {self.path} is locked by another process: kept in memory"
                    return self._memory()
                if attempt == 2:
                    break
                self._remove()
                self.note = f"index unreadable ({exc}): rebuilt"
            except sqlite3.DatabaseError as exc:
                if db is not None:
                    db.close()
                if attempt == 2:
                    break
                self._remove()
                self.note = f"index corrupt ({exc}): rebuilt"
        self.note = (self.note or "") + "; index kept in memory"
        return self._memory()

    def recover(self, exc: sqlite3.Error) -> None:
        """After ``exc`` from the file: rebuild it when it is damaged, else (locked
        past the busy timeout) carry on in memory for this run."""
        with self.lock:
            try:
                self.db.close()
            except sqlite3.Error:
                pass
            text = str(exc)
            if self.path is not None and not locked(exc):
                self._remove()
                self.note = f"index damaged ({text}): rebuilt"
                self.db = self._open()
            else:
                self.note = f"index {self.path} is locked by another process: kept in memory"
                self.db = self._memory()

    def _memory(self) -> sqlite3.Connection:
        self.path = None
        self.fresh = True
        db = self._connect(":memory:")
        _create(db)
        return db

    def _remove(self) -> None:
        assert self.path is not None
        for suffix in ("", "-wal", "-shm"):
            try:
                os.unlink(str(self.path) + suffix)
            except FileNotFoundError:
                pass

    def close(self) -> None:
        """Close the database; a refresh still running stops at its next write."""
        with self.lock:
            self.closed = True
            self.db.close()

    # --- reading -------------------------------------------------------------------

    @_locked
    def states(self) -> dict[str, StoredState]:
        """Where the read of every indexed file stopped, by path."""
        cur = self.db.execute(
            "SELECT path, id, size, mtime_ns, sub_sig, indexed_bytes, lines, tail FROM sessions")
        return {r[0]: StoredState(*r[1:]) for r in cur}

    @_locked
    def rows(self) -> list[SessionRow]:
        """Every session row, newest activity first."""
        rows = [_ROW_DECODER.decode(r[0]) for r in self.db.execute("SELECT row FROM sessions")]
        rows.sort(key=activity_order, reverse=True)
        return rows

    @_locked
    def count(self) -> int:
        return int(self.db.execute("SELECT count(*) FROM sessions").fetchone()[0])

    @_locked
    def search(self, text: str, limit: int = 200) -> list[Hit]:
        """Full-text hits for the words of ``text``, best first; ``[]`` for no words."""
        query = fts_query(text)
        if query is None:
            return []
        try:
            cur = self.db.execute(
                "SELECT rowid, snippet(texts, 0, ?, ?, '…', 12), line, role, ts FROM texts"
                " WHERE texts MATCH ? ORDER BY rank LIMIT ?",
                (_MARK_ON, _MARK_OFF, query, limit))
            found = cur.fetchall()
        except sqlite3.OperationalError:
            return []
        ids = {rowid >> _SHIFT for rowid, *_ in found}
        sessions: dict[int, SessionRow] = {}
        if ids:
            marks = ",".join("?" * len(ids))
            for sid, blob in self.db.execute(
                    f"SELECT id, row FROM sessions WHERE id IN ({marks})", tuple(ids)):
                sessions[sid] = _ROW_DECODER.decode(blob)
        hits: list[Hit] = []
        for rowid, snippet, line, role, ts in found:
            row = sessions.get(rowid >> _SHIFT)
            if row is None:
                continue
            hits.append(Hit(row.path, row.session_id, row.title, int(line), role, ts,
                            " ".join(snippet.split())))
        return hits

    # --- writing -------------------------------------------------------------------

    @_locked
    def forget(self, paths: list[str]) -> None:
        """Drop the rows and texts of files that are gone."""
        with _txn(self.db):
            for path in paths:
                row = self.db.execute("SELECT id FROM sessions WHERE path = ?", (path,)).fetchone()
                if row is None:
                    continue
                self._drop_texts(row[0])
                self.db.execute("DELETE FROM sessions WHERE id = ?", (row[0],))

    def _drop_texts(self, sid: int) -> None:
        self.db.execute("DELETE FROM texts WHERE rowid >= ? AND rowid < ?",
                        (sid << _SHIFT, (sid + 1) << _SHIFT))

    @_locked
    def store(self, size: int, mtime_ns: int, sub_sig: str, result: Extracted,
              appended: bool) -> None:
        """Write one file's read: its row, and its texts (added to the ones it
        had when ``appended``, else replacing them). A read another process
        already stored is left alone."""
        db = self.db
        path = result.row.path
        with _txn(db):
            cur = db.execute("SELECT id, size, mtime_ns, sub_sig, indexed_bytes, text_count"
                             " FROM sessions WHERE path = ?", (path,)).fetchone()
            if cur is not None and cur[1:5] == (size, mtime_ns, sub_sig, result.indexed_bytes):
                return  # someone stored this very read already
            if cur is None:
                sid = db.execute(
                    "INSERT INTO sessions (path, size, mtime_ns, sub_sig, indexed_bytes, lines,"
                    " tail, text_count, row) VALUES (?, 0, 0, '', 0, 0, '', 0, x'')",
                    (path,)).lastrowid
                count = 0
            else:
                sid, count = cur[0], cur[5]
                if not appended:
                    self._drop_texts(sid)
                    count = 0
            base = sid << _SHIFT
            db.executemany(
                "INSERT INTO texts (rowid, body, line, role, ts) VALUES (?, ?, ?, ?, ?)",
                ((base + count + i, t.body, t.line, t.role, t.timestamp)
                 for i, t in enumerate(result.texts)))
            db.execute(
                "UPDATE sessions SET size = ?, mtime_ns = ?, sub_sig = ?, indexed_bytes = ?,"
                " lines = ?, tail = ?, text_count = ?, row = ? WHERE id = ?",
                (size, mtime_ns, sub_sig, result.indexed_bytes, result.lines, result.tail,
                 count + len(result.texts), _ROW_ENCODER.encode(result.row), sid))


def _create(db: sqlite3.Connection) -> None:
    for statement in _DDL.split(";"):
        if statement.strip():
            db.execute(statement)


class _txn:
    """``BEGIN IMMEDIATE`` … ``COMMIT`` (rolled back on an error): one writer at a time."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> sqlite3.Connection:
        self.db.execute("BEGIN IMMEDIATE")
        return self.db

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.db.execute("COMMIT")
        else:
            self.db.execute("ROLLBACK")
