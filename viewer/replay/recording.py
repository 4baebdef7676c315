"""Reading a recording for replay: every line decoded (not folded), sub-agent
files included, in replay order. Imports no Textual (``--emit`` uses it)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from cctv.reducer.collector import collector_paused, promote_to_oldest
from cctv.reducer.decode import decode_line, detect_format
from cctv.reducer.entry_log import EntryLog
from cctv.reducer.feed import Feed, read_file_lines
from cctv.reducer.frames import Entry
from cctv.reducer.lines import LineSplitter
from cctv.reducer.replay import AgentFile, Markers, Replay, ReplayFrame, Timeline, merge_frames, pace
from cctv.reducer.fold import Session

from ..discovery import subagent_files
from ..loader import InputError, check_readable
from ..subagent_tail import agent_id_for

__all__ = ["Recording", "RestOfRecording", "load_recording", "split_lines"]


@dataclass(slots=True)
class Recording:
    """A session file decoded for replay."""

    path: Path
    frames: list[ReplayFrame]
    feed: Feed
    """Holds the decoded lines (for the raw view); its session is the replay's."""
    format: str
    size: int
    """Bytes of the main file and its sub-agent files."""
    rest_at: tuple[int, int] | None = None
    """Where the lines not decoded yet start (byte offset, lines before it),
    when only the head of a big file was read (:func:`load_recording`'s
    ``head_bytes``); ``None`` when every line is in :attr:`frames`."""
    agent_files: list[tuple[AgentFile, list[Entry]]] = field(default_factory=list)
    """An on-disk transcript's sub-agent files (merged in by time)."""

    @property
    def complete(self) -> bool:
        return self.rest_at is None

    def read_rest(self) -> RestOfRecording:
        """Decode the lines after the head, and pace and mark the whole
        recording (slow: run it in a worker). Apply it with :meth:`take_rest`."""
        assert self.rest_at is not None
        offset, line_no = self.rest_at
        splitter = LineSplitter(line_no=line_no, offset=offset)
        entries: list[Entry] = []
        with _bulk():
            with open(self.path, "rb") as fh:
                fh.seek(offset)
                while chunk := fh.read(8 << 20):
                    entries += [decode_line(d, n, o) for n, o, d in splitter.feed(chunk)]
            last = splitter.flush()
            if last is not None:
                entries.append(decode_line(last.data, last.line_no, last.offset))
            if self.agent_files:  # merged by time: the head's frames come out the same
                frames = merge_frames([*self.feed.entries, *entries], self.agent_files)
            else:
                frames = self.frames + merge_frames(entries)
            return RestOfRecording(entries, frames, pace(frames), Markers(frames))

    def take_rest(self, rest: RestOfRecording, replay: Replay) -> None:
        """Add the decoded rest to this recording and to ``replay``."""
        self.feed.entries.extend(rest.entries)
        self.frames = rest.frames
        self.rest_at = None
        replay.grow(rest.frames, rest.timeline, rest.markers)

    def replay(self, **kwargs) -> Replay:
        """A :class:`Replay` of these frames whose sessions know the format."""
        fmt = self.format

        def new_session() -> Session:
            session = Session()
            session.format = fmt
            return session

        return Replay(self.frames, session_factory=new_session, **kwargs)


@contextmanager
def _bulk() -> Iterator[None]:
    """A bulk decode makes ~a million objects that all stay: keep the cyclic
    collector off meanwhile (its passes would stall the UI thread too), then
    move them to the oldest generation unexamined, as the feed does."""
    try:
        with collector_paused():
            yield
    finally:
        promote_to_oldest()


@dataclass(slots=True)
class RestOfRecording:
    """What :meth:`Recording.read_rest` read: the new entries and the whole
    recording's frames, timeline and markers."""

    entries: list[Entry]
    frames: list[ReplayFrame]
    timeline: Timeline
    markers: Markers


def _end_of_line(path: Path, line_no: int) -> int:
    """The byte offset just after line ``line_no`` of ``path`` (its size when
    the file has fewer lines)."""
    seen = 0
    offset = 0
    with open(path, "rb") as fh:
        while chunk := fh.read(8 << 20):
            count = chunk.count(b"\n")
            if seen + count >= line_no:
                at = -1
                for _ in range(line_no - seen):
                    at = chunk.index(b"\n", at + 1)
                return offset + at + 1
            seen += count
            offset += len(chunk)
    return offset


def _decode_head(path: Path, head_bytes: int) -> tuple[list[Entry], tuple[int, int] | None]:
    """The lines that end within the first ``head_bytes`` of ``path``, and
    where the rest starts (``None`` when that is the whole file)."""
    with open(path, "rb") as fh:
        head = fh.read(head_bytes)
        more = bool(fh.read(1))
    cut = head.rfind(b"\n") + 1
    if not more or cut == 0:  # all of it, or not one whole line in the head
        return _decode_file(path), None
    splitter = LineSplitter()
    lines = splitter.feed(head[:cut])
    entries = [decode_line(d, n, o) for n, o, d in lines]
    return entries, (cut, len(lines))


def _decode_file(path: Path) -> list[Entry]:
    entries: list[Entry] = []
    for batch in read_file_lines(path):
        entries += [decode_line(data, line_no, offset) for line_no, offset, data in batch]
    return entries


def load_recording(path: str | Path, *, subagents: bool = True,
                   head_bytes: int | None = None, through_line: int | None = None) -> Recording:
    """Decode ``path`` (and, for an on-disk transcript, its sub-agent files).

    With ``head_bytes``, a file longer than that is read only up to there
    (the first frames show at once; with ``through_line``, up to that many
    bytes after that line); :meth:`Recording.read_rest` reads the rest.
    Raises :class:`~viewer.loader.InputError` when the file cannot be read."""
    p = Path(path)
    check_readable(p)
    rest_at: tuple[int, int] | None = None
    try:
        if head_bytes:
            if through_line:
                head_bytes += _end_of_line(p, through_line)
            entries, rest_at = _decode_head(p, head_bytes)
        else:
            entries = _decode_file(p)
    except OSError as exc:
        raise InputError(f"{p}: read failed ({exc.strerror or exc})") from None
    fmt = detect_format([e.raw[:4096] for e in entries[:20]])
    found = subagent_files(p) if subagents and fmt == "transcript" else []
    if rest_at is not None and any(not meta.get("toolUseId") for _, meta in found):
        # which tool result named which agent file is learnt from every row
        entries, rest_at = _decode_file(p), None
    feed = Feed()
    feed.entries = EntryLog.of(entries)
    feed.session.format = fmt
    size = p.stat().st_size
    files: list[tuple[AgentFile, list[Entry]]] = []
    if found:
        known: dict[str, str] = {}
        if any(not meta.get("toolUseId") for _, meta in found):
            probe = Session()  # which tool result named which agent file: fold once
            for entry in entries:
                probe.apply(entry)
            known = probe.agent_file_ids
        for agent_path, meta in found:
            try:
                agent_entries = _decode_file(agent_path)
            except OSError:
                continue
            agent = agent_id_for(agent_path, meta, known)
            info = AgentFile(agent, agent_path.stem.removeprefix("agent-"),
                             meta.get("agentType"), str(meta.get("description") or ""))
            feed.agent_entries.setdefault(agent, EntryLog()).extend(agent_entries)
            files.append((info, agent_entries))
            size += agent_path.stat().st_size
    frames = merge_frames(entries, files)
    if rest_at is not None and files:
        # sub-agent rows recorded after the head's last row come with the rest
        last_main = max((i for i, f in enumerate(frames) if f.agent is None), default=-1)
        frames = frames[:last_main + 1]
    return Recording(p, frames, feed, fmt, size, rest_at, files)


def split_lines(data: bytes) -> list[bytes]:
    """``data`` cut after each ``\\n``, every byte kept (the last piece has no
    newline when the data does not end with one); the pieces join back to ``data``."""
    pieces: list[bytes] = []
    start = 0
    find = data.find
    while (nl := find(b"\n", start)) >= 0:
        pieces.append(data[start:nl + 1])
        start = nl + 1
    if start < len(data):
        pieces.append(data[start:])
    return pieces
