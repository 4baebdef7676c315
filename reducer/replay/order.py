"""The frames of a session in the order a replay applies them."""

from __future__ import annotations

import heapq
import re
from collections.abc import Sequence
from typing import NamedTuple

from ..frames import Entry
from ..timestamps import parse_timestamp

__all__ = ["AgentFile", "ReplayFrame", "merge_frames", "row_time"]

_TIMESTAMP = re.compile(rb'"timestamp"\s*:\s*"([^"]{10,40})"')


class AgentFile(NamedTuple):
    """A sub-agent transcript file, announced by the first frame read from it."""

    agent: str
    """The agent id its rows fold into (the tool_use id that started it)."""
    file_id: str
    agent_type: str | None = None
    description: str = ""


class ReplayFrame(NamedTuple):
    """One decoded line, where it goes, and when it was recorded."""

    entry: Entry
    agent: str | None = None
    """``None`` for the main source; the sub-agent id for a sub-agent file's rows."""
    at: float | None = None
    """The row's ``timestamp`` as epoch seconds, when it has one."""
    opens: AgentFile | None = None
    """Set on the first frame of a sub-agent file."""


def row_time(entry: Entry) -> float | None:
    """Epoch seconds of a row's ISO ``timestamp`` (decoded, or found in the raw
    bytes of rows the decoder does not model), ``None`` when it has none."""
    text = getattr(entry, "timestamp", None)
    if text is None:
        raw = entry.raw
        if b'"timestamp"' not in raw:
            return None
        match = _TIMESTAMP.search(raw)
        if match is None:
            return None
        text = match.group(1).decode("ascii", "replace")
    return parse_timestamp(text) if isinstance(text, str) else None


def _timed(entries: Sequence[Entry], agent: str | None,
           opens: AgentFile | None) -> list[ReplayFrame]:
    frames: list[ReplayFrame] = []
    for i, entry in enumerate(entries):
        frames.append(ReplayFrame(entry, agent, row_time(entry), opens if i == 0 else None))
    return frames


def merge_frames(main: Sequence[Entry],
                 agent_files: Sequence[tuple[AgentFile, Sequence[Entry]]] = ()) -> list[ReplayFrame]:
    """The main source's entries, with each sub-agent file's rows merged in by
    recorded time (each file keeps its own order; a row without a time keeps
    the time of the row before it; at equal times the main source goes first)."""
    main_frames = _timed(main, None, None)
    if not agent_files:
        return main_frames
    streams = [main_frames] + [_timed(entries, info.agent, info) for info, entries in agent_files
                               if entries]

    def keyed(rank: int, frames: list[ReplayFrame]):
        last = float("-inf")
        for seq, frame in enumerate(frames):
            if frame.at is not None:
                last = max(last, frame.at)
            yield (last, rank, seq, frame)

    merged = heapq.merge(*(keyed(rank, s) for rank, s in enumerate(streams)))
    return [frame for *_, frame in merged]
