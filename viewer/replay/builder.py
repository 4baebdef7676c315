"""Building a replay's checkpoints in a child process.

Pickling the state of a big session holds the interpreter lock for the whole
call (about a second at 100 MB): in a thread that freezes the UI the user is
stepping in. A forked child folds and pickles on its own (at a lower
priority), and a thread of the child compresses each checkpoint and writes it
to a pipe meanwhile; the child snapshots only where thinning is not expected
to drop the snapshot
(:meth:`~reducer.replay.checkpoints.Checkpoints.planned_interval`). Once every frame
is folded, the child sends the final state's units (the pool the later
checkpoints index into, see :mod:`reducer.replay.pool`), folds again and
sends each kept checkpoint once more, taken with those units as pool
indexes: smaller, and restored several times faster. The parent only reads
the pipe (which releases the lock), keeps what arrives, and unpickles the
pool once. The child's sessions are freed when it exits, so the parent's
memory grows by the compressed checkpoints and the pool only.
Where ``fork`` is unavailable (or fails) the thread builds them itself.
"""

from __future__ import annotations

import contextlib
import gc
import mmap
import os
import queue
import struct
import threading
from collections.abc import Callable, Iterator

from cctv.reducer.replay import Replay
from cctv.reducer.replay.checkpoints import PLAIN, POOL, Checkpoints, pack

__all__ = ["build_checkpoints"]

_HEADER = struct.Struct("<QQQ")
"""Before each piece: its kind (``PLAIN``, ``POOL``, ``POOLED``), position and size."""


def _read_exactly(fd: int, size: int, *, mapped: bool = False) -> bytearray | mmap.mmap | None:
    """``size`` bytes from the pipe, read into one buffer (no chunks to join:
    a checkpoint costs the parent its own size, not twice that for a while).

    ``mapped``: the buffer is a memory map of its own, not the heap's. Kept
    checkpoints are dropped out of order as they are thinned; on the heap the
    holes they leave stayed part of the process (+75 MB RSS for 42 MB of
    checkpoints at 100 MB), while a map goes back to the system when dropped."""
    buffer: bytearray | mmap.mmap = mmap.mmap(-1, size) if mapped and size else bytearray(size)
    view = memoryview(buffer)
    got = 0
    while got < size:
        n = os.readv(fd, [view[got:]])
        if not n:
            return None
        got += n
    view.release()
    return buffer


_NICE = 10
"""How much the child yields the processors to the viewer (it is background
work: the viewer's own folds and drawing come first)."""


def _child(replay: Replay, fd: int) -> None:
    gc.disable()  # a short-lived fold: nothing to collect
    with contextlib.suppress(OSError):
        os.nice(_NICE)
    # the parent's checkpoints, mirrored: the same sizes thin them the same way,
    # so no snapshot is taken where the parent would drop it
    grid = Checkpoints(replay.checkpoints.interval, replay.checkpoints.budget_bytes,
                       replay.checkpoints.last_position)
    # Zstandard lets go of the interpreter lock while it compresses: a thread
    # packs and writes each snapshot while the fold goes on to the next one
    ready: queue.Queue[tuple[int, int, bytes] | None] = queue.Queue(1)
    failed: list[BaseException] = []

    def pack_and_write() -> None:
        try:
            with os.fdopen(fd, "wb", buffering=0) as out:
                while (item := ready.get()) is not None:
                    kind, position, pickled = item
                    data = pack(pickled)
                    del item, pickled
                    if kind == PLAIN:  # (the pooled ones only replace them)
                        grid.add(position, data, packed=True)
                    out.write(_HEADER.pack(kind, position, len(data)))
                    out.write(data)
        except BaseException as exc:  # the pipe closed: the parent stopped reading
            failed.append(exc)
            while ready.get() is not None:  # let the fold finish its puts
                pass

    writer = threading.Thread(target=pack_and_write, name="cctv-pack")
    writer.start()
    try:
        for piece in replay.checkpoint_pieces(grid, lambda: bool(failed)):
            ready.put(piece)
            del piece
    finally:
        ready.put(None)
        writer.join()
    if failed:
        raise failed[0]


def build_checkpoints(replay: Replay, cancelled: Callable[[], bool] = lambda: False,
                      *, use_fork: bool = True,
                      on_child: Callable[[int | None], None] = lambda pid: None) -> Iterator[int]:
    """Fill ``replay.checkpoints``; yields each position kept. Run it in a
    worker thread. ``on_child`` is told the child's pid (and ``None`` once it
    is gone), so its owner can kill it to stop at once."""
    if not use_fork or not hasattr(os, "fork"):
        yield from replay.build_checkpoints(cancelled)
        return
    checkpoints = replay.checkpoints
    read_fd, write_fd = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(read_fd)
        os.close(write_fd)
        yield from replay.build_checkpoints(cancelled)
        return
    if pid == 0:  # the child: fold, checkpoint, write, leave without cleanup
        code = 0
        try:
            os.close(read_fd)
            _child(replay, write_fd)
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    os.close(write_fd)
    on_child(pid)
    finished = False
    try:
        while not cancelled():
            header = _read_exactly(read_fd, _HEADER.size)
            if header is None:
                finished = True
                break
            kind, position, size = _HEADER.unpack(header)
            data = _read_exactly(read_fd, size, mapped=kind != POOL)
            if data is None:
                break
            try:
                kept = checkpoints.take(kind, position, data, packed=True, cancelled=cancelled)
            except EOFError:  # cancelled while the pool loaded
                break
            if kept:
                yield position
    finally:
        os.close(read_fd)
        if not finished:
            with contextlib.suppress(OSError):
                os.kill(pid, 9)
        with contextlib.suppress(ChildProcessError):
            _, status = os.waitpid(pid, 0)
            finished = finished and os.waitstatus_to_exitcode(status) == 0
        on_child(None)
    if finished:
        checkpoints.complete = checkpoints.pooled = True
    elif not cancelled():  # the child failed: build what is missing here
        yield from replay.build_checkpoints(cancelled)
