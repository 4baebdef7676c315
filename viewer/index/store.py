"""The index file: one SQLite database (WAL, FTS5) per projects folder.

Tables: ``sessions`` (one row per session file: what the list shows, plus where
its read stopped), ``texts`` (FTS5 over prompts, replies and tool inputs;
the rowid is ``session id << 32 | n``, so a session's texts are one rowid range)
and ``usage`` (every API request of a session, for ``cctv usage``).

Never a crash over the file itself (:class:`viewer.storage.Database`): a
damaged file (its tables not cctv's, a row that does not decode), one written
by another schema or another fold, is deleted and built again; one that cannot
be written (read-only, full) is used from memory for this run, as is an empty
one in memory when another process holds the file locked past the busy timeout.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import sqlite3
import sys
import threading
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import msgspec

from ..paths import cache_dir
from ..storage import Damaged, Database, Schema, transaction
from .rows import Extracted, SessionRow, activity_order

__all__ = ["Hit", "IndexClosed", "IndexStore", "StoredState", "index_file"]

SCHEMA = 3
_SHIFT = 32
_BUSY_MS = 10_000
_MARK_ON, _MARK_OFF = "\ue000", "\ue001"
"""Private-use characters around a match in a snippet (never in transcripts we show)."""

_DDL = """
CREATE TABLE IF NOT EXISTS sessions (
    id INTEGER PRIMARY KEY,
    path BLOB UNIQUE NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    sub_sig TEXT NOT NULL,
    indexed_bytes INTEGER NOT NULL,
    lines INTEGER NOT NULL,
    tail TEXT NOT NULL,
    text_count INTEGER NOT NULL,
    row BLOB NOT NULL,
    raw BLOB
);
CREATE TABLE IF NOT EXISTS usage (
    session INTEGER NOT NULL,
    key TEXT NOT NULL,
    day TEXT NOT NULL,
    model TEXT NOT NULL,
    input INTEGER NOT NULL,
    output INTEGER NOT NULL,
    cache_read INTEGER NOT NULL,
    cache_write INTEGER NOT NULL,
    cost REAL,
    source TEXT
);
CREATE INDEX IF NOT EXISTS usage_session ON usage (session);
CREATE VIRTUAL TABLE IF NOT EXISTS texts USING fts5(
    body, line UNINDEXED, role UNINDEXED, ts UNINDEXED, tokenize = 'unicode61'
);
"""
"""``path`` is the file's name as the file system has it (bytes: any name, UTF-8
or not); ``raw`` holds, for the rare row whose strings are not all UTF-8 (a
session named by its file), those strings' exact bytes."""

_ROW_ENCODER = msgspec.msgpack.Encoder()
_ROW_DECODER = msgspec.msgpack.Decoder(SessionRow)
_RAW_DECODER = msgspec.msgpack.Decoder(dict[str, bytes])
_FS_ENCODING = sys.getfilesystemencoding()
"""How the file system's names are bytes (``os.fsdecode`` with ``surrogateescape``)."""


def index_file(root: Path) -> Path:
    """The index of the projects folder ``root``: one file per folder."""
    key = hashlib.blake2b(os.fsencode(root.resolve()), digest_size=8).hexdigest()
    return cache_dir() / f"index-{key}.sqlite"  # the store makes the folder


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
    title: str | None
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
    """An open index (a :class:`~viewer.storage.Database`). ``note`` says why it
    was rebuilt or moved to memory, if it was.

    Opened, its tables are checked, its full-text index looked at and, with
    ``rows`` (the list will be shown), every row decoded (and kept for the
    first :meth:`rows`); a search alone decodes only its hits' rows, each checked then."""

    def __init__(self, path: Path | None, *, rows: bool = True) -> None:
        self.closed = False
        self.lock = threading.RLock()
        """Held by each read and write: one connection, used from the UI and a worker thread."""
        check = _checked_rows if rows else _checked_texts
        self.database = Database(path, Schema(SCHEMA, _DDL, fold_fingerprint(), check),
                                 what="index", busy_ms=_BUSY_MS)

    @property
    def db(self) -> sqlite3.Connection:
        return self.database.conn

    @property
    def path(self) -> Path | None:
        """The index file, or ``None`` when the index is in memory."""
        return self.database.path

    @property
    def note(self) -> str | None:
        return str(self.database.note) if self.database.note is not None else None

    @property
    def fresh(self) -> bool:
        """The index was made empty (or rebuilt) by this open: a first indexing follows."""
        return self.database.fresh

    def recover(self, exc: BaseException) -> None:
        """After ``exc`` from the file: rebuild it when it is damaged, else (full,
        read-only, locked past the busy timeout) carry on in memory for this run."""
        with self.lock:
            if self.closed:
                raise IndexClosed(str(self.path)) from exc
            self.database.failed(exc)

    def close(self) -> None:
        """Close the database; a refresh still running stops at its next write."""
        with self.lock:
            self.closed = True
            self.database.close()

    # --- reading -------------------------------------------------------------------

    @_locked
    def states(self) -> dict[str, StoredState]:
        """Where the read of every indexed file stopped, by path."""
        cur = self.db.execute(
            "SELECT path, id, size, mtime_ns, sub_sig, indexed_bytes, lines, tail FROM sessions")
        try:  # a value of another type than stored is taken for a change: read again
            return {r[0].decode(_FS_ENCODING, "surrogateescape"): StoredState(*r[1:]) for r in cur}
        except AttributeError:
            raise Damaged("a session's file name is not a name") from None

    @_locked
    def rows(self) -> list[SessionRow]:
        """Every session row, newest activity first."""
        checked = self.database.checked  # read on open (every row decoded to check it)
        if isinstance(checked, list):
            self.database.checked = None  # once: a write may follow
            rows = checked
        else:
            rows = _all_rows(self.db)
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
        except sqlite3.OperationalError as exc:
            if "fts5: syntax error" in str(exc):
                return []  # words FTS5 will not take as a query: no hits
            raise
        ids = {rowid >> _SHIFT for rowid, *_ in found}
        sessions: dict[int, SessionRow] = {}
        if ids:
            marks = ",".join("?" * len(ids))
            for sid, blob, raw in self.db.execute(
                    f"SELECT id, row, raw FROM sessions WHERE id IN ({marks})", tuple(ids)):
                sessions[sid] = _row(blob, raw)
        hits: list[Hit] = []
        for rowid, snippet, line, role, ts in found:
            row = sessions.get(rowid >> _SHIFT)
            if row is None:
                continue
            if not (isinstance(snippet, str) and isinstance(line, int) and isinstance(role, str)
                    and (ts is None or isinstance(ts, str))):
                raise Damaged(f"a text of the index has the wrong type (line {line!r})")
            hits.append(Hit(row.path, row.session_id, row.title, line, role, ts,
                            " ".join(snippet.split())))
        return hits

    @_locked
    def usage(self, by: str, since: str | None) -> list[tuple[Any, ...]]:
        """Requests summed by ``by`` (``day``, ``model``, else ``session``: the
        id of its row here), each request once across sessions (the first session's copy), made on ``since``
        (``YYYY-MM-DD``) or later: (group, requests, input, output, cache read,
        cache write, priced cost, requests of recorded cost, requests of estimated
        cost, unpriced models comma-joined)."""
        group = {"day": "day", "model": "model", "session": "session"}.get(by, "session")
        where = "WHERE day >= ?" if since else ""
        cur = self.db.execute(
            f"SELECT {group}, count(*), sum(input), sum(output), sum(cache_read), sum(cache_write),"
            " sum(cost), sum(source = 'recorded'), sum(source = 'estimated'),"
            " group_concat(DISTINCT CASE WHEN cost IS NULL THEN model END)"
            " FROM (SELECT min(session) AS session, key, day, model, input, output, cache_read,"
            f"  cache_write, cost, source FROM usage GROUP BY key) {where} GROUP BY {group}",
            (since,) if since else ())
        return cur.fetchall()

    @_locked
    def rows_by_id(self) -> dict[int, SessionRow]:
        """Every session row by its id in the index."""
        return {sid: _row(blob, raw) for sid, blob, raw in
                self.db.execute("SELECT id, row, raw FROM sessions")}

    # --- writing -------------------------------------------------------------------

    @_locked
    def forget(self, paths: list[str]) -> None:
        """Drop the rows and texts of files that are gone."""
        self.database.checked = None
        with transaction(self.db):
            for path in paths:
                row = self.db.execute("SELECT id FROM sessions WHERE path = ?",
                                      (os.fsencode(path),)).fetchone()
                if row is None:
                    continue
                self._drop_texts(row[0])
                self.db.execute("DELETE FROM usage WHERE session = ?", (row[0],))
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
        self.database.checked = None
        path = os.fsencode(result.row.path)
        blob, raw = _encoded(result.row)
        with transaction(db):
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
                if not isinstance(sid, int) or not isinstance(count, int):
                    raise Damaged("a session's id or text count is not a number")
                if not appended:
                    self._drop_texts(sid)
                    count = 0
            base = sid << _SHIFT
            db.executemany(
                "INSERT INTO texts (rowid, body, line, role, ts) VALUES (?, ?, ?, ?, ?)",
                ((base + count + i, t.body, t.line, t.role, t.timestamp)
                 for i, t in enumerate(result.texts)))
            db.execute("DELETE FROM usage WHERE session = ?", (sid,))
            db.executemany(
                "INSERT INTO usage (session, key, day, model, input, output, cache_read,"
                " cache_write, cost, source) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                ((sid, *msgspec.structs.astuple(u)) for u in result.usage))
            db.execute(
                "UPDATE sessions SET size = ?, mtime_ns = ?, sub_sig = ?, indexed_bytes = ?,"
                " lines = ?, tail = ?, text_count = ?, row = ?, raw = ? WHERE id = ?",
                (size, mtime_ns, sub_sig, result.indexed_bytes, result.lines, result.tail,
                 count + len(result.texts), blob, raw, sid))


def _encoded(row: SessionRow) -> tuple[bytes, bytes | None]:
    """A row as stored: its msgpack, and (only for a row with strings that are not
    UTF-8: names read from the file system) those strings' exact bytes. The
    msgpack then holds them with their odd bytes written out (``\\udcff``)."""
    try:
        return _ROW_ENCODER.encode(row), None
    except UnicodeEncodeError:
        pass
    odd: dict[str, str] = {}
    for name in row.__struct_fields__:
        value = getattr(row, name)
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                odd[name] = value
    raw = {name: value.encode("utf-8", "surrogatepass") for name, value in odd.items()}
    readable = {name: value.encode("utf-8", "backslashreplace").decode() for name, value in odd.items()}
    return _ROW_ENCODER.encode(msgspec.structs.replace(row, **readable)), _ROW_ENCODER.encode(raw)


def _checked_rows(db: sqlite3.Connection) -> list[SessionRow]:
    """Every stored row, and the full-text index looked at (:func:`_checked_texts`);
    :class:`Damaged` when a row does not decode or the look fails."""
    rows = _all_rows(db)
    _checked_texts(db)
    return rows


def _checked_texts(db: sqlite3.Connection) -> None:
    """One stored text must be found by one of its words (FTS5 with a damaged
    structure answers every search with nothing, silently); :class:`Damaged` if not."""
    sample = db.execute("SELECT rowid, body FROM texts LIMIT 1").fetchone()
    words = re.findall(r"\w+", sample[1]) if sample is not None and isinstance(sample[1], str) else []
    if words:
        word = max(words[:50], key=len)  # a rare word: a short list of texts to look through
        found = db.execute("SELECT count(*) FROM texts WHERE texts MATCH ? AND rowid = ?",
                           ('"' + word.replace('"', '""') + '"', sample[0])).fetchone()[0]
        if not found:
            raise Damaged("its full-text index does not find what it holds")


def _all_rows(db: sqlite3.Connection) -> list[SessionRow]:
    """Every stored row (:class:`Damaged` when one does not decode)."""
    return [_row(blob, raw) for blob, raw in db.execute("SELECT row, raw FROM sessions")]


def _row(blob: bytes, raw: bytes | None) -> SessionRow:
    """A stored row back (its strings exactly as they were); :class:`Damaged` when
    it does not decode."""
    try:
        row = _ROW_DECODER.decode(blob)
        if raw is None:
            return row
        exact = {name: data.decode("utf-8", "surrogatepass")
                 for name, data in _RAW_DECODER.decode(raw).items()
                 if name in row.__struct_fields__}
        return msgspec.structs.replace(row, **exact)
    except (msgspec.DecodeError, TypeError, UnicodeDecodeError) as exc:
        raise Damaged(f"a session row failed to decode ({exc})") from None
