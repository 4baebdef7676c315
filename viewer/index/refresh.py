"""Bring the index up to date with the projects folder, reading only what changed.

A file is read again only when its size, modification time or sub-agent files
changed. When the bytes the index already read are still there (same size or
longer, the same last bytes before where the read stopped) the file grew: its
texts past the last indexed line are added to the ones kept. Otherwise (shorter,
rewritten) it is read whole. Files that are gone leave the index. The row
itself (title, counts, totals) is always the fold of the whole file, as the
viewer folds it; a transcript folds at ~300 MB/s, so that stays well under a
second even for a big session that grew.

Many files to read (a first indexing) are read by a pool of worker processes,
one per core; the parent only writes SQLite.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .rows import Extracted, SessionRow, read_marks, tail_digest
from .scan import SessionFile, scan, session_file
from .store import IndexStore, StoredState

__all__ = ["Progress", "RefreshReport", "refresh", "POOL_MIN_FILES", "POOL_MIN_BYTES"]

POOL_MIN_FILES = 8
POOL_MIN_BYTES = 8 << 20
"""Below this much to read, worker processes cost more than they save."""

Progress = Callable[[int, int], None]
"""Called with (bytes read so far, bytes to read) as files are indexed."""


@dataclass(slots=True)
class RefreshReport:
    """What one refresh did."""

    files: int = 0
    read: int = 0
    appended: int = 0
    removed: int = 0
    bytes_read: int = 0
    seconds: float = 0.0
    errors: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    """What the scan passed over, a line each: a folder that cannot be read, a
    ``*.jsonl`` that is a FIFO, a device or a socket."""
    rows: list[SessionRow] = field(default_factory=list)
    """The rows of the sessions read (new or changed)."""
    gone: list[str] = field(default_factory=list)
    """The paths of the sessions no longer there."""


@dataclass(frozen=True, slots=True)
class _Job:
    file: SessionFile
    after_line: int

    @property
    def appended(self) -> bool:
        return self.after_line > 0


def _grew(file: SessionFile, state: StoredState) -> bool:
    """The bytes the index read are still the file's first bytes (an append).
    A state whose values are not of their types (a damaged index) is no append."""
    end = state.indexed_bytes
    if type(end) is not int or type(state.lines) is not int or type(state.tail) is not str:
        return False
    if file.size < end or end == 0:
        return False
    try:
        return tail_digest(read_marks(file.path, end)) == state.tail
    except OSError:
        return False


def plan(files: list[SessionFile], states: dict[str, StoredState]) -> tuple[list[_Job], list[str]]:
    """The files to read (and from which line on their texts are new) and the paths gone."""
    jobs: list[_Job] = []
    for f in files:
        state = states.get(f.path)
        if state is None:
            jobs.append(_Job(f, 0))
        elif (state.size, state.mtime_ns, state.sub_sig) != (f.size, f.mtime_ns, f.sub_sig):
            # texts are added past the last line read only when the main file just
            # grew: a sub-agent file that changed is read again with all its texts
            appended = state.sub_sig == f.sub_sig and _grew(f, state)
            jobs.append(_Job(f, state.lines if appended else 0))
    present = {f.path for f in files}
    return jobs, [p for p in states if p not in present]


KEEP_READ_WINDOW_S = 300.0
"""A file written to this recently is live: the browser keeps its read, to read
only what it appends at the next refresh (see :func:`viewer.index.extract.extract`)."""


def _run(job: _Job, keep: bool = False) -> Extracted:
    from .extract import extract  # the decoder and the fold: only when a file is read

    f = job.file
    mtime = max(f.mtime_ns, f.sub_mtime_ns) / 1e9
    return extract(f.path, f.project_dir, f.size, mtime, job.after_line, keep=keep)


def refresh(store: IndexStore, root: Path, progress: Progress | None = None,
            workers: int | None = None, only: Iterable[Path] | None = None) -> RefreshReport:
    """Update ``store`` from the files under ``root`` (``only``: from these
    session files alone, which file events named); never raises over a file's content."""
    started = time.perf_counter()
    report = RefreshReport()
    states = store.states()
    if only is None:
        files = scan(root, report.skipped)
    else:
        named = {str(p) for p in only}
        files = [f for p in only if (f := session_file(p)) is not None]
        states = {p: s for p, s in states.items() if p in named}
    report.files = len(files)
    jobs, gone = plan(files, states)
    if gone:
        store.forget(gone)
        report.removed = len(gone)
        report.gone = gone
    total = sum(j.file.size for j in jobs)
    done = 0
    if progress is not None:
        progress(0, total)

    def stored(job: _Job, result: Extracted) -> None:
        nonlocal done
        store.store(job.file.size, job.file.mtime_ns, job.file.sub_sig, result, job.appended)
        report.read += 1
        report.rows.append(result.row)
        report.appended += job.appended
        done += job.file.size
        if progress is not None:
            progress(done, total)

    count = workers if workers is not None else min(2, os.cpu_count() or 1)
    if count > 1 and len(jobs) >= POOL_MIN_FILES and total >= POOL_MIN_BYTES:
        _in_pool(jobs, count, stored, report)
    else:
        now = time.time()
        for job in jobs:
            live = now - max(job.file.mtime_ns, job.file.sub_mtime_ns) / 1e9 < KEEP_READ_WINDOW_S
            try:
                result = _run(job, keep=live)
            except Exception as exc:  # noqa: BLE001 - one bad file never stops the rest
                report.errors.append(f"{job.file.path}: {type(exc).__name__}: {exc}")
                continue
            stored(job, result)
    report.bytes_read = done
    report.seconds = time.perf_counter() - started
    return report


@contextlib.contextmanager
def _real_stderr() -> Iterator[None]:
    """Starting worker processes passes ``sys.stderr``'s descriptor on; inside
    the terminal UI ``sys.stderr`` is a capture object without one."""
    saved = sys.stderr
    try:
        usable = saved.fileno() >= 0
    except (AttributeError, OSError, ValueError):
        usable = False
    if not usable:
        sys.stderr = sys.__stderr__
    try:
        yield
    finally:
        sys.stderr = saved


def _quiet_worker() -> None:
    """Workers never write to the terminal the UI draws on."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)
    os.dup2(devnull, 1)
    os.close(devnull)


def _in_pool(jobs: list[_Job], count: int, stored: Callable[[_Job, Extracted], None],
             report: RefreshReport) -> None:
    """Read ``jobs`` in ``count`` worker processes, biggest first (so the last
    ones to finish are small), storing each result as it comes."""
    import multiprocessing
    from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait

    ordered = sorted(jobs, key=lambda j: j.file.size, reverse=True)
    context = multiprocessing.get_context("spawn")  # no fork of a threaded app
    with _real_stderr(), ProcessPoolExecutor(max_workers=count, mp_context=context,
                                             initializer=_quiet_worker) as pool:
        pending: dict[Future[Extracted], _Job] = {}
        queue = iter(ordered)
        for job in queue:
            pending[pool.submit(_run, job)] = job
            if len(pending) >= count * 4:
                break
        while pending:
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                job = pending.pop(future)
                try:
                    result = future.result()
                except Exception as exc:  # noqa: BLE001 - one bad file never stops the rest
                    report.errors.append(f"{job.file.path}: {type(exc).__name__}: {exc}")
                else:
                    stored(job, result)  # an index error stops the refresh (the caller recovers)
                nxt = next(queue, None)
                if nxt is not None:
                    pending[pool.submit(_run, nxt)] = nxt
