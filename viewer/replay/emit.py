"""``cctv replay PATH --emit``: the recording's lines on stdout at their recorded pace.

Byte for byte: the output is the file's bytes (line ends and a missing final
newline included). Lines before ``--from LINE`` are written at once, so a
reader downstream has the state up to there; from that line on each line is
written at its deadline. Deadlines are absolute, from one monotonic start
(:class:`reducer.replay.Pacer`), so a late wake-up never delays the lines
after it. Imports no Textual.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, TextIO

from cctv.reducer.decode import decode_line
from cctv.reducer.replay import Pacer, merge_frames, pace
from cctv.reducer.safe import visible

from ..loader import InputError, check_readable
from .recording import split_lines

__all__ = ["EmitPlan", "plan_emit", "emit", "run_emit"]

_BURST = 4096
"""Most lines written in one go when they are all due."""


@dataclass(slots=True)
class EmitPlan:
    """The lines of a file and the paced offset of each."""

    lines: list[bytes]
    offsets: list[float]
    source: str
    skipped: float
    """Idle seconds removed."""
    first: int = 0
    """Index of the first paced line (``--from``)."""
    lateness: list[float] = field(default_factory=list)
    """After :func:`emit`: how late each paced line was written, in seconds."""


def plan_emit(path: str | Path, *, skip_idle: bool = True, from_line: int = 1) -> EmitPlan:
    """Read ``path`` and pace its lines. Raises :class:`InputError`."""
    p = Path(path)
    check_readable(p)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise InputError(f"{p}: read failed ({exc.strerror or exc})") from None
    lines = split_lines(data)
    offset = 0
    entries = []
    for line_no, piece in enumerate(lines, 1):
        body = piece[:-1] if piece.endswith(b"\n") else piece
        if body.endswith(b"\r"):
            body = body[:-1]
        entries.append(decode_line(body, line_no, offset))
        offset += len(piece)
    timeline = pace(merge_frames(entries))
    offsets, skipped = timeline.paced(skip_idle)
    first = min(max(from_line, 1), max(len(lines), 1)) - 1
    return EmitPlan(lines, list(offsets), timeline.source, skipped, first)


def emit(plan: EmitPlan, out: BinaryIO, *, speed: float = 1.0,
         clock: Callable[[], float] = time.monotonic,
         sleep: Callable[[float], None] = time.sleep) -> None:
    """Write the plan's lines to ``out``, each at its paced deadline."""
    lines = plan.lines
    if plan.first:
        out.write(b"".join(lines[:plan.first]))
        out.flush()
    pacer = Pacer(plan.offsets, clock, speed)
    pacer.start(plan.first)
    late = plan.lateness
    late.clear()
    deadline = pacer.deadline
    n = len(lines)
    i = plan.first
    while i < n:
        wait = deadline(i) - clock()
        if wait > 0:
            sleep(wait)
        # every line already due goes out in one write (a burst of frames
        # recorded in the same instant is not flushed line by line)
        now = clock()
        j = i + 1
        while j < n and j - i < _BURST and deadline(j) <= now:
            j += 1
        out.write(b"".join(lines[i:j]) if j - i > 1 else lines[i])
        out.flush()
        written = clock()
        late.extend(written - deadline(k) for k in range(i, j))
        i = j


def run_emit(path: str, *, speed: float, from_line: int, skip_idle: bool, out: BinaryIO,
             err: TextIO) -> int:
    """The ``--emit`` command: 0 when done, 2 when the file cannot be read."""
    try:
        plan = plan_emit(path, skip_idle=skip_idle, from_line=from_line)
    except InputError as exc:
        print(visible(f"cctv replay: {exc}", oneline=True), file=err)
        return 2
    emit(plan, out, speed=speed)
    return 0
