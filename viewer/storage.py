"""cctv's own files, on a disk that may fail.

Everything cctv writes for itself goes through here: the session index (a
:class:`Database`), crash logs, the files handed to the pager, the editor and
the image viewer, screenshots and exports that fall back to the cache, a
command's spilled stderr and the folded sessions of :mod:`viewer.fold_cache`
(each a :class:`CacheArea`). The disk is treated as unreliable: it may be read-only, full, locked
by another process, damaged, or hold something foreign where cctv's file
should be. None of that is a crash. Each becomes a :class:`DiskNote`, one line
saying what happened and what cctv does instead (an index kept in memory, one
rebuilt, files put in a temporary folder), recorded once per process
(:func:`take_notes`): the app shows each as one notification, the headless
commands print it on stderr.

No Textual here.
"""

from __future__ import annotations

import enum
import errno
import hashlib
import os
import sqlite3
import stat
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import msgspec

from cctv.reducer.format import clip

from .paths import cache_dir

__all__ = ["CacheArea", "Damaged", "Database", "DiskError", "DiskNote", "Entry", "Schema",
           "Trouble", "file_key", "forget_notes", "take_notes", "tell", "trouble_of"]


# --- what went wrong, in one line ---------------------------------------------------------


class Trouble(enum.Enum):
    """What is wrong with a file or folder of the cache, as a user would say it."""

    READ_ONLY = "is on a read-only file system"
    FULL = "is on a full disk"
    DENIED = "is not writable (permission denied)"
    LOCKED = "is locked by another process"
    DAMAGED = "is damaged"
    FOREIGN = "is not a file cctv wrote"
    FAILED = "could not be written"


class DiskNote(msgspec.Struct, frozen=True):
    """One line: what happened to a file of the cache, and what cctv does instead."""

    what: str
    instead: str

    def __str__(self) -> str:
        return f"{self.what}: {self.instead}"


class DiskError(Exception):
    """A write to the cache that could not be made anywhere; ``note`` says why."""

    def __init__(self, note: DiskNote) -> None:
        super().__init__(str(note))
        self.note = note


class Damaged(Exception):
    """Raised by a reader of the cache when what it read makes no sense (a row
    that fails to decode): the file is damaged, to be rebuilt."""


_FULL_ERRNOS = {errno.ENOSPC, errno.EDQUOT}
_DENIED_ERRNOS = {errno.EACCES, errno.EPERM}
_FOREIGN_ERRNOS = {errno.EISDIR, errno.ENOTDIR, errno.EEXIST, errno.ELOOP, errno.ENXIO}


def _look(folder: Path) -> Trouble | None:
    """What ``folder``'s file system says about writing there (read-only, full), if anything."""
    for place in (folder, *folder.parents):
        try:
            st = os.statvfs(place)
        except OSError:
            continue
        if st.f_flag & os.ST_RDONLY:
            return Trouble.READ_ONLY
        if st.f_bfree == 0 or (st.f_bavail == 0 and os.geteuid() != 0):
            return Trouble.FULL
        return None
    return None


def trouble_of(exc: BaseException, where: Path) -> Trouble:
    """What ``exc`` (from writing or reading at ``where``) says is wrong."""
    if isinstance(exc, Damaged):
        return Trouble.DAMAGED
    if isinstance(exc, OSError):
        if exc.errno == errno.EROFS:
            return Trouble.READ_ONLY
        if exc.errno in _FULL_ERRNOS:
            return Trouble.FULL
        if exc.errno in _FOREIGN_ERRNOS:
            return Trouble.FOREIGN
        if exc.errno in _DENIED_ERRNOS:
            return _look(where) or Trouble.DENIED
        return _look(where) or Trouble.FAILED
    if isinstance(exc, sqlite3.Error):
        return _sqlite_trouble(exc, where)
    return Trouble.FAILED


def _sqlite_trouble(exc: sqlite3.Error, where: Path) -> Trouble:
    name = getattr(exc, "sqlite_errorname", "") or ""
    text = str(exc).lower()
    if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "locked" in text or "busy" in text:
        return Trouble.LOCKED
    if name == "SQLITE_FULL" or "disk is full" in text:
        return Trouble.FULL
    if name.startswith("SQLITE_READONLY") or "readonly" in text:
        return _look(where) or Trouble.DENIED
    if name.startswith(("SQLITE_CANTOPEN", "SQLITE_IOERR", "SQLITE_PERM")) \
            or "unable to open" in text or "i/o error" in text:
        found = _look(where)
        if found is not None:
            return found
        if not os.access(where if where.is_dir() else where.parent, os.W_OK):
            return Trouble.DENIED
    return Trouble.DAMAGED  # corrupt, not a database, a table missing or replaced


def _described(trouble: Trouble, path: Path, exc: BaseException | None = None) -> str:
    what = f"{path} {trouble.value}"
    if trouble in (Trouble.DAMAGED, Trouble.FAILED) and exc is not None:
        what += f" ({clip(str(exc), 120, one_line=True) or type(exc).__name__})"
    return what


# --- the notes, each told once --------------------------------------------------------------

_NOTES: list[DiskNote] = []
_TAKEN = 0
_NOTES_LOCK = threading.Lock()


def tell(note: DiskNote) -> DiskNote:
    """Record ``note`` (once: the same line again is not recorded twice)."""
    with _NOTES_LOCK:
        if note not in _NOTES:
            _NOTES.append(note)
    return note


def take_notes() -> list[DiskNote]:
    """The notes recorded since the last call: what the app shows (once each)."""
    global _TAKEN
    with _NOTES_LOCK:
        new = _NOTES[_TAKEN:]
        _TAKEN = len(_NOTES)
    return new


def forget_notes() -> None:
    """Start over, as a new process would (for tests)."""
    global _TAKEN
    with _NOTES_LOCK:
        _NOTES.clear()
        _TAKEN = 0


# --- plain files: areas of the cache --------------------------------------------------------

_TEMP: Path | None = None
_TEMP_LOCK = threading.Lock()


def _temp_root() -> Path | None:
    """A private folder of this process under ``$TMPDIR``: where files go when the
    cache cannot take them (made on first use, mode 0700); ``None`` when none
    can be made."""
    import tempfile  # only when the cache fails

    global _TEMP
    with _TEMP_LOCK:
        if _TEMP is None or not _TEMP.is_dir():
            try:
                _TEMP = Path(tempfile.mkdtemp(prefix="cctv-"))
            except OSError:
                return None
        return _TEMP


def file_key(path: str | os.PathLike[str], *extra: str | bytes | int) -> str:
    """A name for what the file at ``path`` holds now: its identity (device,
    inode, size, modification time, and the path's bytes) and ``extra`` (say,
    the version of the code that made an entry from it), as 32 hex digits.
    Raises ``OSError`` when the file cannot be ``stat``-ed."""
    st = os.stat(path)
    h = hashlib.blake2b(digest_size=16)
    h.update(os.fsencode(path))
    for part in (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, *extra):
        h.update(b"\0" + (part if isinstance(part, bytes) else str(part).encode()))
    return h.hexdigest()


class Entry(msgspec.Struct, frozen=True):
    """One file of an area: its name, path, size and when it was last used."""

    name: str
    path: Path
    size: int
    used: float


class CacheArea:
    """A folder of the cache (``$XDG_CACHE_HOME/cctv/<name>``) whose files are
    entries: written whole (never seen half-written), read back, and the least
    recently used removed past a budget (``max_files``, ``max_bytes``).

    When the cache cannot take a file (read-only, full after removing this
    area's old entries, not writable, not a folder), it goes to a private
    temporary folder instead, and a note says so; when that fails too,
    :class:`DiskError`."""

    def __init__(self, name: str, *, max_files: int | None = None,
                 max_bytes: int | None = None, what: str = "files") -> None:
        self.name = name
        self.max_files = max_files
        self.max_bytes = max_bytes
        self.what = what
        """What the area holds, for the notes ("crash logs", "images for the viewer")."""

    @property
    def folder(self) -> Path:
        """The area's folder in the cache (made by the first write)."""
        return cache_dir(self.name)

    def _folders(self) -> Iterator[Path]:
        yield self.folder
        temp = _temp_root()
        if temp is not None:
            yield temp / self.name

    def _written(self) -> list[Path]:
        """The folders this process may have written the area's entries to."""
        return [self.folder] + ([_TEMP / self.name] if _TEMP is not None else [])

    def writable_folder(self) -> Path:
        """A folder to write this area's files in, made if needed: the cache's,
        else the temporary one (noted). Raises :class:`DiskError`."""
        return self._somewhere(_writable)

    def put(self, name: str, data: bytes) -> Path:
        """Write ``data`` as the entry ``name`` (replacing it whole) and return its
        path; old entries past the budget go. A full disk first costs this
        area's least recently used entries. Raises :class:`DiskError`."""
        path = self._somewhere(lambda folder: self._write(folder, name, data))
        self._prune(path.parent, keep=path, size=len(data))
        return path

    def _somewhere(self, write: Callable[[Path], Path]) -> Path:
        """``write(folder)`` in the cache's folder, else in the temporary one
        (noted: what went wrong, where the files go instead); :class:`DiskError`
        when neither takes it."""
        failure: tuple[Trouble, Path, OSError] | None = None
        for folder in self._folders():
            try:
                folder.mkdir(parents=True, exist_ok=True)
                done = write(folder)
            except OSError as exc:
                failure = failure or (trouble_of(exc, folder), folder, exc)
                continue
            if failure is not None:
                trouble, where, _ = failure
                tell(DiskNote(_described(trouble, where), f"{self.what} go to {folder} instead"))
            return done
        assert failure is not None
        trouble, where, exc = failure
        raise DiskError(DiskNote(_described(trouble, where, exc), f"{self.what} cannot be saved"))

    def _write(self, folder: Path, name: str, data: bytes) -> Path:
        try:
            return _write_whole(folder / name, data)
        except OSError as exc:
            if exc.errno not in _FULL_ERRNOS or not self._evict(folder, len(data)):
                raise
            return _write_whole(folder / name, data)  # room was made: once more

    def get(self, name: str) -> bytes | None:
        """The entry ``name`` (``None`` when there is none, or it cannot be read);
        marks it used."""
        for folder in self._written():
            path = folder / name
            try:
                data = _read_regular(path)
            except OSError:
                continue
            try:
                os.utime(path)
            except OSError:
                pass  # a read-only cache still gives what it has
            return data
        return None

    def discard(self, name: str) -> None:
        """Remove the entry ``name`` (one found damaged by its reader)."""
        for folder in self._written():
            _remove(folder / name)

    def entries(self) -> list[Entry]:
        """The area's entries in the cache, most recently used first."""
        return _entries_in(self.folder)

    def usage(self) -> tuple[int, int]:
        """(entries, bytes) the area holds in the cache."""
        entries = self.entries()
        return len(entries), sum(e.size for e in entries)

    def clear(self) -> int:
        """Remove every entry; the bytes freed."""
        return sum(e.size for e in self.entries() if _remove(e.path))

    def _prune(self, folder: Path, keep: Path, size: int) -> None:
        """Remove the least recently used entries but ``keep`` (of ``size`` bytes)
        until the area is within its budget."""
        if self.max_files is None and self.max_bytes is None:
            return
        entries = [e for e in _entries_in(folder) if e.path != keep]
        total = sum(e.size for e in entries) + size
        for n, old in enumerate(reversed(entries)):  # the least recently used first
            over_count = self.max_files is not None and len(entries) - n >= self.max_files
            over_bytes = self.max_bytes is not None and total > self.max_bytes
            if not (over_count or over_bytes):
                break
            if _remove(old.path):
                total -= old.size

    def _evict(self, folder: Path, need: int) -> bool:
        """Remove this area's least recently used entries to make ``need`` bytes; any freed?"""
        freed = 0
        for old in reversed(_entries_in(folder)):
            if freed >= need:
                break
            if _remove(old.path):
                freed += old.size
        return freed > 0


def _entries_in(folder: Path) -> list[Entry]:
    """The files of ``folder`` (no half-written ones), most recently used first."""
    out: list[Entry] = []
    try:
        with os.scandir(folder) as it:
            found = list(it)
    except OSError:
        return out
    for entry in found:
        try:
            if entry.name.endswith(".part") or not entry.is_file(follow_symlinks=False):
                continue
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        out.append(Entry(entry.name, Path(entry.path), st.st_size, st.st_mtime))
    out.sort(key=lambda e: e.used, reverse=True)
    return out


def _writable(folder: Path) -> Path:
    """``folder``, when this process may write in it (``OSError`` otherwise)."""
    if not os.access(folder, os.W_OK):
        raise PermissionError(errno.EACCES, "permission denied", str(folder))
    return folder


def _write_whole(path: Path, data: bytes) -> Path:
    """``data`` into ``path`` through a temporary file renamed over it: a reader
    never sees half of it. Raises ``OSError`` (the temporary file removed)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.part")
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except OSError:
        _remove(tmp)
        raise
    return path


def _read_regular(path: Path) -> bytes:
    """The bytes of ``path`` when it is a regular file (never blocks on a FIFO)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        return fh.read()


def _remove(path: Path) -> bool:
    """Remove the file ``path`` (or the link); False when it cannot be."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return True


def _move_aside(path: Path) -> Path | None:
    """Rename what is at ``path`` (not a file cctv wrote) out of the way; where it went."""
    aside = path.with_name(f"{path.name}.moved-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}")
    try:
        os.replace(path, aside)
    except OSError:
        return None
    return aside


# --- SQLite files ---------------------------------------------------------------------------


class Schema(msgspec.Struct, frozen=True):
    """What a database of the cache must hold: its tables, their version, and a
    stamp of what wrote its contents (say, a digest of the code that folded them).
    A file whose tables differ in any way from the ones it was made with (one
    dropped, replaced, added) is damaged."""

    version: int
    ddl: str
    """``CREATE`` statements separated by ``;`` (a ``meta`` table is added)."""
    stamp: str
    check: Callable[[sqlite3.Connection], object] | None = None
    """Reads what an existing file holds on open, raising :class:`Damaged` when
    it makes no sense (a row that fails to decode); what it returns is kept as
    :attr:`Database.checked` (so it need not be read twice)."""

    def create(self, db: sqlite3.Connection) -> None:
        for statement in (_META, *self.ddl.split(";")):
            if statement.strip():
                db.execute(statement)
        db.execute(f"PRAGMA user_version = {int(self.version)}")



_META = "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)"
"""What wrote the file (``stamp``) and a digest of the tables it was made with (``tables``)."""


def tables_fingerprint(db: sqlite3.Connection) -> str:
    """A digest of every table, index and trigger of ``db`` (FTS5's own tables included)."""
    rows = db.execute("SELECT type, name, tbl_name, sql FROM sqlite_master"
                      " ORDER BY type, name").fetchall()
    return hashlib.blake2b(repr(rows).encode(), digest_size=8).hexdigest()


_BUSY_MS = 10_000


class Database:
    """One SQLite file of the cache, or its stand-in in memory.

    Opened, it is checked (its version, its tables against :class:`Schema`,
    the stamp of what wrote it); a stale or damaged file is deleted and made
    anew. A file that cannot be written (read-only, full, not writable) is read
    into memory when it is sound, and used from there for this run; one that
    another process holds locked is replaced by an empty one in memory.
    :meth:`failed` does the same for an error met later. ``note`` says what
    was done, if anything; the notes are also :func:`tell`-ed."""

    def __init__(self, path: Path | None, schema: Schema, *, what: str = "index",
                 busy_ms: int = _BUSY_MS) -> None:
        self.path = path
        self.schema = schema
        self.what = what
        self.busy_ms = busy_ms
        self.note: DiskNote | None = None
        self.fresh = False
        """Made empty by this open (a first indexing follows)."""
        self.checked: object = None
        """What :attr:`Schema.check` read from the file on open (``None``: nothing)."""
        self.conn = self._open()

    # --- opening ---------------------------------------------------------------------

    def _connect(self, target: str, *, uri: bool = False) -> sqlite3.Connection:
        db = sqlite3.connect(target, timeout=self.busy_ms / 1000, isolation_level=None,
                             check_same_thread=False, uri=uri)
        db.execute(f"PRAGMA busy_timeout = {int(self.busy_ms)}")
        return db

    def _noted(self, what: str, instead: str) -> None:
        self.note = tell(DiskNote(what, instead))

    def _open(self) -> sqlite3.Connection:
        path = self.path
        if path is None:
            return self._memory()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            self._noted(_described(trouble_of(exc, path.parent), path.parent),
                        f"the {self.what} is kept in memory for this run")
            return self._memory()
        for attempt in (1, 2):
            if not self._clear_foreign(path):
                return self._memory()
            db: sqlite3.Connection | None = None
            try:
                existed = path.exists() and path.stat().st_size > 0
                db = self._connect(str(path))
                db.execute("PRAGMA journal_mode = WAL")
                db.execute("PRAGMA synchronous = NORMAL")
                problem = self._problem(db) if existed else None
                if problem is None:
                    if not existed:
                        with transaction(db):
                            self.schema.create(db)
                            db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)",
                                           (("stamp", self.schema.stamp),
                                            ("tables", tables_fingerprint(db))))
                        self.fresh = True
                    return db
                db.close()
                if not self._rebuilt(f"{self.what} {path} {problem}"):
                    return self._memory()
            except (sqlite3.Error, OSError) as exc:
                if db is not None:
                    db.close()
                trouble = trouble_of(exc, path)
                if trouble is not Trouble.DAMAGED or attempt == 2:
                    return self._instead(trouble, exc)
                if not self._rebuilt(_described(trouble, path, exc)):
                    return self._memory()
        return self._memory()

    def _rebuilt(self, what: str) -> bool:
        """Remove the file ``what`` says is unusable, to make it anew (noted);
        False when it cannot be removed (noted too: memory instead)."""
        if self._remove_files():
            self._noted(what, f"the {self.what} is rebuilt")
            return True
        self._noted(what, f"it cannot be replaced: the {self.what} is kept in memory for this run")
        return False

    def _problem(self, db: sqlite3.Connection) -> str | None:
        """Why an existing file is not to be used as it is, or ``None``."""
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version != self.schema.version:
            return "was written by another version of cctv"
        meta = dict(db.execute("SELECT key, value FROM meta WHERE key IN ('stamp', 'tables')"))
        if meta.get("stamp") != self.schema.stamp:
            return "was written by another version of cctv"
        if meta.get("tables") != tables_fingerprint(db):
            return "is damaged (its tables are not the ones cctv makes)"
        if self.schema.check is not None:
            try:
                self.checked = self.schema.check(db)
            except Damaged as exc:
                return f"is damaged ({exc})"
        return None

    def _clear_foreign(self, path: Path) -> bool:
        """Move a directory, FIFO, device… found where the file should be out of the
        way (noted); False when it cannot be moved."""
        for target in (path, *_side_files(path)):
            try:
                mode = os.stat(target).st_mode
            except FileNotFoundError:
                continue
            except OSError:
                mode = 0
            if stat.S_ISREG(mode):
                continue
            aside = _move_aside(target)
            if aside is None:
                self._noted(f"{self.what} {target} is not a file (a {_kind(mode)})",
                            f"the {self.what} is kept in memory for this run")
                return False
            self._noted(f"{self.what} {target} was a {_kind(mode)}",
                        f"moved to {aside.name}; the {self.what} is rebuilt")
        return True

    def _remove_files(self) -> bool:
        assert self.path is not None
        return all(_remove(p) for p in (self.path, *_side_files(self.path)))

    def _instead(self, trouble: Trouble, exc: BaseException) -> sqlite3.Connection:
        """The file cannot be used (``trouble``): memory, with its contents when
        they can still be read."""
        assert self.path is not None
        path = self.path
        copied = trouble is not Trouble.LOCKED and self._copy_from(path)
        if trouble is Trouble.DAMAGED:
            instead = f"it could not be rebuilt; the {self.what} is kept in memory for this run"
        elif copied:
            instead = f"the {self.what} is read from it and kept in memory for this run"
        else:
            instead = f"the {self.what} is kept in memory for this run"
        self._noted(_described(trouble, path, exc), instead)
        if copied:
            self.path = None
            return copied
        return self._memory()

    def _copy_from(self, path: Path) -> sqlite3.Connection | None:
        """A copy in memory of the sound file at ``path`` (read without writing), or ``None``."""
        try:
            if not path.is_file() or path.stat().st_size == 0:
                return None
            src = self._connect(f"file:{_uri_path(path)}?mode=ro&immutable=1", uri=True)
        except (sqlite3.Error, OSError):
            return None
        try:
            if self._problem(src) is not None:
                return None
            mem = self._connect(":memory:")
            src.backup(mem)
            return mem
        except sqlite3.Error:
            return None
        finally:
            src.close()

    def _memory(self) -> sqlite3.Connection:
        self.path = None
        self.fresh = True
        self.checked = None
        db = self._connect(":memory:")
        self.schema.create(db)
        return db

    # --- after an error ----------------------------------------------------------------

    def failed(self, exc: BaseException) -> None:
        """After ``exc`` from reading or writing the file: rebuild it when it is
        damaged; otherwise (full, read-only, locked) carry on in memory, with
        what the file holds when it can still be read."""
        where = self.path
        if where is None:
            raise exc  # memory itself failed: nothing else to fall back on
        old = self.conn
        self.checked = None
        copy: sqlite3.Connection | None = None
        trouble = trouble_of(exc, where)
        if trouble not in (Trouble.DAMAGED, Trouble.LOCKED):
            copy = _copy_open(old, self._connect)
        try:
            old.close()
        except sqlite3.Error:
            pass
        if trouble is Trouble.DAMAGED:
            self.conn = self._open() if self._rebuilt(_described(trouble, where, exc)) \
                else self._memory()
            return
        instead = (f"the {self.what} is kept in memory for this run" if copy is None
                   else f"the {self.what} is read from it and kept in memory for this run")
        self._noted(_described(trouble, where), instead)
        if copy is not None:
            self.path = None
            self.conn = copy
        else:
            self.conn = self._memory()

    def close(self) -> None:
        self.conn.close()


def _copy_open(db: sqlite3.Connection, connect) -> sqlite3.Connection | None:
    """What an open database holds, copied into memory (``None`` when it cannot be read)."""
    try:
        if db.in_transaction:
            db.execute("ROLLBACK")
        mem = connect(":memory:")
        db.backup(mem)
        return mem
    except sqlite3.Error:
        return None


def _side_files(path: Path) -> tuple[Path, Path]:
    return path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "directory"
    if stat.S_ISFIFO(mode):
        return "FIFO"
    if stat.S_ISSOCK(mode):
        return "socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device"
    return "file of another kind"


def _uri_path(path: Path) -> str:
    from urllib.parse import quote

    return quote(os.fsencode(path.resolve()), safe="/")


class transaction:
    """``BEGIN IMMEDIATE`` … ``COMMIT``, rolled back on an error (one writer at a time)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> sqlite3.Connection:
        self.db.execute("BEGIN IMMEDIATE")
        return self.db

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.db.execute("COMMIT")
            return
        try:
            self.db.execute("ROLLBACK")
        except sqlite3.Error:
            pass  # the error that got here is the one to tell
