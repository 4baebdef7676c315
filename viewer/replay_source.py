"""Reading a recording for replay: every line decoded (not folded), sub-agent
files included, in replay order. Imports no Textual (``--emit`` uses it)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from reducer.decode import decode_line, detect_format
from reducer.feed import Feed, read_file_lines
from reducer.frames import Entry
from reducer.replay import AgentFile, Replay, ReplayFrame, merge_frames
from reducer.session import Session

from .discovery import subagent_files
from .loader import InputError, check_readable
from .subagent_tail import agent_id_for

__all__ = ["Recording", "load_recording", "split_lines"]


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

    def replay(self, **kwargs) -> Replay:
        """A :class:`Replay` of these frames whose sessions know the format."""
        fmt = self.format

        def new_session() -> Session:
            session = Session()
            session.format = fmt
            return session

        return Replay(self.frames, session_factory=new_session, **kwargs)


def _decode_file(path: Path) -> list[Entry]:
    entries: list[Entry] = []
    for batch in read_file_lines(path):
        entries += [decode_line(data, line_no, offset) for line_no, offset, data in batch]
    return entries


def load_recording(path: str | Path, *, subagents: bool = True) -> Recording:
    """Decode ``path`` (and, for an on-disk transcript, its sub-agent files).
    Raises :class:`~viewer.loader.InputError` when it cannot be read."""
    p = Path(path)
    check_readable(p)
    try:
        entries = _decode_file(p)
    except OSError as exc:
        raise InputError(f"{p}: read failed ({exc.strerror or exc})") from None
    fmt = detect_format([e.raw[:4096] for e in entries[:20]])
    feed = Feed()
    feed.entries = entries
    feed.session.format = fmt
    size = p.stat().st_size
    files: list[tuple[AgentFile, list[Entry]]] = []
    if subagents and fmt == "transcript":
        found = subagent_files(p)
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
            feed.agent_entries.setdefault(agent, []).extend(agent_entries)
            files.append((info, agent_entries))
            size += agent_path.stat().st_size
    return Recording(p, merge_frames(entries, files), feed, fmt, size)


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
