"""Folded sessions kept in the cache: a big session is reopened, not folded again.

A checkpoint is the state of a :class:`~reducer.feed.Feed` after the complete
lines of one session file (before its sub-agent files, which are folded
after it, as a cold read does), pickled and packed with the machinery of
:mod:`reducer.replay.snapshot`. It lives in the cache's ``checkpoints/`` area
(:class:`~viewer.storage.CacheArea`: written whole, least recently used
removed past :data:`BUDGET`); nothing is ever written beside the session.

An entry is named for the file's place (device, inode and path), so the same
file found grown still finds it; what it covers is told by its
:class:`Header`: the file's size and modification time when it was taken, a
digest of its first bytes and of the bytes before where it stopped
(:func:`~viewer.index.rows.read_marks`), and the version of the code that
folded it (:func:`~viewer.index.store.fold_fingerprint`). Opened again, a file

- unchanged (same size, time and marks) is restored, nothing read;
- grown (its marks still there) is restored and only the new bytes folded;
- anything else (rewritten, truncated, another version of cctv, an entry that
  does not unpack) starts over: the entry is dropped and made anew.

No Textual here.
"""

from __future__ import annotations

import functools
import gc
import hashlib
import os
import stat
import struct
import threading
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any, TextIO

import msgspec

from cctv.reducer.collector import collector_paused, promote_to_oldest
from cctv.reducer.decode import decode_line
from cctv.reducer.feed import Feed, FeedState
from cctv.reducer.format import plural, tilde
from cctv.reducer.frames import Entry
from cctv.reducer.lines import LineSplitter, RawLine
from cctv.reducer.replay.snapshot import checkpoint, pack, restore_with_extra
from cctv.reducer.safe import visible
from cctv.widgets.home import home

from .index.rows import read_marks, tail_digest
from .storage import CacheArea, DiskError

__all__ = ["AREA", "BUDGET", "FORMAT", "MIN_BYTES", "Header", "LineRereader", "Opened",
           "Restored", "entry_name", "load_checkpoint", "open_feed", "run_cache",
           "save_checkpoint", "save_in_child", "worth_keeping"]

FORMAT = 1
"""The layout of an entry (raised when :class:`Header` or :class:`~reducer.feed.FeedState` change)."""

BUDGET = 2_000_000_000
"""Bytes the checkpoints may take in the cache; the least recently used go past it."""

MIN_BYTES = 8_000_000
"""Sessions smaller than this fold in less time than a checkpoint saves: none is kept."""

AREA = CacheArea("checkpoints", max_bytes=BUDGET, what="session checkpoints")

_MAGIC = b"cctv-checkpoint\n"
_LENGTH = struct.Struct("<I")
_CHUNK = 8 << 20


class Header(msgspec.Struct, frozen=True):
    """What an entry covers, and what made it."""

    format: int
    stamp: str
    """:func:`~viewer.index.store.fold_fingerprint` of the code that folded it."""
    dev: int
    ino: int
    size: int
    """The file's size when the checkpoint was taken."""
    mtime_ns: int
    end: int
    """Bytes folded: the end of the last complete line."""
    lines: int
    """Lines folded (the next one is ``lines + 1``)."""
    marks: str
    """:func:`~viewer.index.rows.tail_digest` of the file's first bytes and the bytes before ``end``."""


class Opened(msgspec.Struct):
    """A session file folded: its feed, and how the checkpoint served."""

    feed: Feed
    how: str
    """``restored`` (unchanged), ``appended`` (restored, the new bytes folded),
    ``folded`` (no usable checkpoint: read whole)."""
    read_from: int
    """Where the read of the file started (0 unless restored)."""


def entry_name(path: str | os.PathLike[str], st: os.stat_result, collapsed: bool = False) -> str:
    """The entry's file name for the file at ``path``: its place, not its
    contents. ``collapsed``: the fold the viewer makes, which keeps one line
    of a run of malformed lines (``Feed(keep_malformed_runs=False)``); the
    headless commands keep them all, so each has its own entry."""
    h = hashlib.blake2b(digest_size=16)
    h.update(os.fsencode(os.path.abspath(path)))
    h.update(f"\0{st.st_dev}\0{st.st_ino}".encode())
    return h.hexdigest() + ("-view" if collapsed else "") + ".ckpt"


@functools.cache
def _stamp() -> str:
    from .index.store import fold_fingerprint

    return fold_fingerprint()


# --- writing --------------------------------------------------------------------------------


def save_checkpoint(path: Path, feed: Feed, end: int, lines: int, extra: Any = None) -> Path | None:
    """Keep ``feed``'s state (the first ``lines`` lines of ``path``, ``end``
    bytes), and ``extra`` (what its reader derived from those lines, kept
    with it), as the file's checkpoint; ``None`` when the file cannot be read or
    the cache cannot take it (noted). The file is ``stat``-ed before its marks
    are read: a file written meanwhile has a later time, and its entry will
    not be taken as unchanged."""
    try:
        st = os.stat(path)
        marks = tail_digest(read_marks(path, end))
    except OSError:
        return None
    header = Header(FORMAT, _stamp(), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns,
                    end, lines, marks)
    payload = pack(checkpoint(feed.session, (feed.state(), extra)))
    head = msgspec.msgpack.encode(header)
    try:
        return AREA.put(entry_name(path, st, not feed.keep_malformed_runs),
                        _MAGIC + _LENGTH.pack(len(head)) + head + payload)
    except DiskError:
        return None


def save_in_child(path: Path, feed: Feed, end: int, lines: int,
                  extra: Any = None) -> threading.Thread | None:
    """:func:`save_checkpoint` in a forked child, the caller going on at once:
    the child has the state as it is now (its pages shared until either side
    writes to them), and the pickler's memo (half the file's size again at
    100 MB) and its second or so of work are the child's, not the caller's.
    Returns the daemon thread that reaps the child (join it to wait for the
    entry; quitting does not wait for it); ``None`` when no child could be
    made (then nothing is kept)."""
    import zstandard  # noqa: F401 - imported here: an import lock another thread holds would hang the child

    _stamp()  # (cached: read here, not in the child)
    try:
        pid = os.fork()
    except OSError:
        return None
    if pid:
        reaper = threading.Thread(target=os.waitpid, args=(pid, 0), daemon=True,
                                  name=f"checkpoint writer {pid}")
        reaper.start()
        return reaper
    status = 1
    try:  # the child: nothing of the parent's but the state and this call
        gc.disable()  # a collection would touch, and so copy, every page of the heap
        status = 0 if save_checkpoint(path, feed, end, lines, extra) is not None else 1
    finally:
        os._exit(status)


# --- reading --------------------------------------------------------------------------------


def _parse(data: bytes) -> tuple[Header, memoryview] | None:
    """The header and packed state of an entry's bytes; ``None`` when it is not one."""
    if not data.startswith(_MAGIC) or len(data) < len(_MAGIC) + _LENGTH.size:
        return None
    at = len(_MAGIC)
    (length,) = _LENGTH.unpack_from(data, at)
    at += _LENGTH.size
    try:
        header = msgspec.msgpack.decode(data[at:at + length], type=Header)
    except msgspec.MsgspecError:
        return None
    return header, memoryview(data)[at + length:]


class Restored(msgspec.Struct):
    """A checkpoint read back: the feed, what it covers, and the ``extra`` kept with it."""

    feed: Feed
    header: Header
    extra: Any


_early: dict[str, tuple[os.stat_result, Future[Restored | None]]] = {}
"""The viewer's checkpoints being read ahead (:func:`load_early`), by path."""


def load_early(path: Path) -> None:
    """Start reading the viewer's checkpoint of ``path`` in a thread now, while
    the app is still imported and built (the pauses in its start-up are the
    restore's), for a file big enough to have one; :func:`load_checkpoint`
    takes it over."""
    try:
        st = os.stat(path)
    except OSError:
        return
    if not stat.S_ISREG(st.st_mode) or st.st_size < MIN_BYTES:
        return
    future: Future[Restored | None] = Future()

    def read() -> None:
        try:
            future.set_result(_load(path, st, keep_raw=False, keep_entries=True, collapsed=True))
        except BaseException as error:  # noqa: BLE001 - handed to the one who waits for it
            future.set_exception(error)

    _early[os.fspath(path)] = (st, future)
    threading.Thread(target=read, name="cctv-restore", daemon=True).start()


def load_checkpoint(path: Path, st: os.stat_result, *, keep_raw: bool, keep_entries: bool,
                    collapsed: bool = False) -> Restored | None:
    """The feed kept for ``path`` and what it covers, when the file is still
    the one it was taken of (unchanged or grown); ``None`` otherwise. An
    entry that is damaged, of another version or of another file is dropped.
    ``collapsed``: the viewer's fold (see :func:`entry_name`). What
    :func:`load_early` read ahead is taken when it was for this file (the
    same one, not shorter) and these options."""
    early = _early.pop(os.fspath(path), None)
    if early is not None and collapsed and keep_entries and not keep_raw:
        seen, future = early
        if (seen.st_dev, seen.st_ino) == (st.st_dev, st.st_ino) and st.st_size >= seen.st_size:
            return future.result()
    return _load(path, st, keep_raw=keep_raw, keep_entries=keep_entries, collapsed=collapsed)


def _load(path: Path, st: os.stat_result, *, keep_raw: bool, keep_entries: bool,
          collapsed: bool) -> Restored | None:
    name = entry_name(path, st, collapsed)
    data = AREA.get(name)
    if data is None:
        return None
    parsed = _parse(data)
    header = parsed[0] if parsed is not None else None
    if header is None or header.format != FORMAT or header.stamp != _stamp() \
            or (header.dev, header.ino) != (st.st_dev, st.st_ino) or not _still_there(path, st, header):
        AREA.discard(name)
        return None
    assert parsed is not None
    try:
        with collector_paused() as paused:  # a million objects, all kept: halves the time
            session, kept = restore_with_extra(parsed[1], packed=True)
            if paused:
                promote_to_oldest()
    except Exception:  # noqa: BLE001 - a damaged entry (zstd, pickle, a class gone): made anew
        AREA.discard(name)
        return None
    if not (isinstance(kept, tuple) and len(kept) == 2 and isinstance(kept[0], FeedState)):
        AREA.discard(name)
        return None
    state, extra = kept
    feed = Feed.resumed(session, state, keep_raw=keep_raw, keep_entries=keep_entries,
                        keep_malformed_runs=not collapsed)
    feed.entries.reader = LineRereader(path, keep_raw)
    return Restored(feed, header, extra)


def _still_there(path: Path, st: os.stat_result, header: Header) -> bool:
    """Whether the file still holds what the checkpoint folded (it may have grown)."""
    if st.st_size < header.size:
        return False  # truncated
    if st.st_size == header.size and st.st_mtime_ns != header.mtime_ns:
        return False  # written again in place
    try:
        return tail_digest(read_marks(path, header.end)) == header.marks
    except OSError:
        return False


# --- a file folded, from its checkpoint when it has one -----------------------------------


def open_feed(path: Path, *, keep_raw: bool = False, keep_entries: bool = True,
              save: bool = True) -> Opened:
    """Fold the main file at ``path`` (not its sub-agent files): from its
    checkpoint when it has a usable one, folding only what was appended;
    a new checkpoint is kept when a big file was read (``save``).
    Raises ``OSError`` when the file cannot be read."""
    st = os.stat(path)
    found = load_checkpoint(path, st, keep_raw=keep_raw, keep_entries=keep_entries) \
        if st.st_size >= MIN_BYTES else None
    if found is None:
        feed, splitter, how = Feed(keep_raw=keep_raw, keep_entries=keep_entries), LineSplitter(), "folded"
    else:
        feed, header = found.feed, found.header
        splitter = LineSplitter(line_no=header.lines, offset=header.end)
        how = "restored" if st.st_size == header.end else "appended"
    start = splitter.offset
    for batch in _batches(path, splitter):
        feed.feed(batch)
    end, lines = splitter.offset - splitter.pending_size, splitter.line_no
    if save and worth_keeping(start, end):
        save_checkpoint(path, feed, end, lines)
    last = splitter.flush()
    if last is not None:  # a last line without its newline: folded, never checkpointed
        feed.feed([last])
    return Opened(feed, how, start)


def worth_keeping(start: int, end: int) -> bool:
    """Whether a fold of a file's bytes ``start``–``end`` (from its checkpoint,
    or 0) is worth a new checkpoint: a big file, and enough read since."""
    return end >= MIN_BYTES and end - start >= max(1, MIN_BYTES // 8)


def _batches(path: Path, splitter: LineSplitter) -> Iterator[list[RawLine]]:
    """The complete lines of ``path`` past where ``splitter`` stands, in big batches."""
    with open(path, "rb") as fh:
        fh.seek(splitter.offset)
        while chunk := fh.read(_CHUNK):
            batch = splitter.feed(chunk)
            if batch:
                yield batch


class LineRereader:
    """Reads lines of a session file again by their place (an
    :class:`~reducer.entry_log.EntryLog`'s lines folded from a checkpoint)."""

    def __init__(self, path: Path, keep_raw: bool) -> None:
        self.path = path
        self.keep_raw = keep_raw

    def entry(self, line_no: int, offset: int) -> Entry | None:
        return next(self.entries([(line_no, offset)]))

    def entries(self, places: Iterable[tuple[int, int]]) -> Iterator[Entry | None]:
        try:
            fh = open(self.path, "rb")
        except OSError:
            for _ in places:
                yield None
            return
        with fh:
            for line_no, offset in places:
                try:
                    fh.seek(offset)
                    data = fh.readline()
                except OSError:
                    yield None
                    continue
                data = data[:-1] if data.endswith(b"\n") else data
                data = data[:-1] if data.endswith(b"\r") else data
                yield decode_line(data, line_no, offset, self.keep_raw)


def run_cache(clear: bool, out: TextIO) -> int:
    """``cctv cache``: where the checkpoints are, how many, how big; ``clear``
    removes them."""
    count, size = AREA.usage()
    folder = tilde(str(AREA.folder), home())
    if clear:
        freed = AREA.clear()
        left, _ = AREA.usage()
        print(visible(f"removed {plural(count - left, 'checkpoint')} ({_mb(freed)}) from {folder}"
                      + (f"; {left} could not be removed" if left else ""), oneline=True), file=out)
        return 1 if left else 0
    print(visible(f"{folder}: {plural(count, 'checkpoint')}, {_mb(size)} of {_mb(AREA.max_bytes or 0)}"
                  f" (sessions of {_mb(MIN_BYTES)} or more; the least recently used go first)",
                  oneline=True), file=out)
    for entry in AREA.entries():
        print(visible(f"  {entry.name}  {_mb(entry.size)}  used "
                      f"{time.strftime('%Y-%m-%d %H:%M', time.localtime(entry.used))}",
                      oneline=True), file=out)
    return 0


def _mb(size: int) -> str:
    return f"{size / 1e6:,.1f} MB"

