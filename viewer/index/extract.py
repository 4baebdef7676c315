"""One session file in, one list row and its searchable texts out.

The file (and its sub-agent files) is read by the viewer's own decoder and fold
(:class:`reducer.feed.Feed`, :func:`viewer.loader.load_subagents`), so the list
can never show another title or count than the viewer. Runs in worker
processes during a first indexing: everything here is picklable and imports no
Textual.

A file caught mid-write is read to its last complete line; the rest is read
next time, when the line is whole.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from pathlib import Path
from typing import Any

import msgspec

from reducer import frames as F
from reducer.feed import Feed
from reducer.lines import LineSplitter
from reducer.state import MAIN, PromptItem, TextItem, ToolItem

from ..loader import load_subagents

__all__ = ["Extracted", "SessionRow", "TextRow", "extract", "tail_digest", "TEXT_LIMIT"]

TEXT_LIMIT = 16_384
"""Characters of one prompt, reply or tool input that are searchable."""
PREVIEW_LIMIT = 2_000
TAIL_BYTES = 256
"""Bytes before the indexed end that must be unchanged for an append to be read as one."""
HEAD_BYTES = 4096
"""First bytes that must be unchanged too (a file replaced by a longer one is no append)."""
_CHUNK = 8 << 20


class SessionRow(msgspec.Struct, kw_only=True):
    """What the list shows about one session (``cctv sessions --json`` keys and the preview's)."""

    session_id: str
    path: str
    project: str
    project_dir: str
    title: str
    first_prompt: str | None
    git_branch: str | None
    started: str | None
    last_activity: str | None
    duration_s: float | None
    prompts: int
    tool_calls: int
    cost_usd: float | None
    input_tokens: int
    output_tokens: int
    model: str | None
    bytes: int
    subagents: int
    mtime: float = 0.0
    """Latest modification time of the session or its sub-agent files (epoch s)."""
    last_reply: str | None = None
    tasks: list[dict[str, str]] = msgspec.field(default_factory=list)
    format: str = "transcript"

    def is_live(self, now: float, window_s: float) -> bool:
        """Written to within the last ``window_s`` seconds."""
        return now - self.mtime < window_s

    def as_json(self, now: float, window_s: float) -> dict[str, Any]:
        """The documented object of ``cctv sessions --json``."""
        return {
            "session_id": self.session_id, "path": self.path, "project": self.project,
            "project_dir": self.project_dir, "title": self.title,
            "first_prompt": self.first_prompt, "git_branch": self.git_branch,
            "started": self.started, "last_activity": self.last_activity,
            "duration_s": self.duration_s, "prompts": self.prompts,
            "tool_calls": self.tool_calls, "cost_usd": self.cost_usd,
            "input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
            "model": self.model, "bytes": self.bytes, "subagents": self.subagents,
            "live": self.is_live(now, window_s),
        }


class TextRow(msgspec.Struct, array_like=True):
    """One searchable prompt, reply or tool input."""

    line: int
    role: str  # "user" | "assistant" | "tool"
    timestamp: str | None
    body: str


class Extracted(msgspec.Struct, kw_only=True):
    """The result of reading one file: its row, its new texts, where the read stopped."""

    row: SessionRow
    texts: list[TextRow]
    indexed_bytes: int
    """Bytes read: the end of the last complete line."""
    lines: int
    """Lines read (texts of lines up to here are in the index)."""
    tail: str
    """:func:`tail_digest` of the bytes just before ``indexed_bytes``."""


def tail_digest(data: bytes) -> str:
    """A digest of a file's first :data:`HEAD_BYTES` and the :data:`TAIL_BYTES`
    before where a read stopped: unchanged when the file only grew since."""
    return hashlib.blake2b(data, digest_size=8).hexdigest()


def _read_complete_lines(path: Path, feed: Feed) -> tuple[int, bytes]:
    """Feed the file's complete lines; return the bytes read and their
    :data:`HEAD_BYTES` first and :data:`TAIL_BYTES` last ones (see :func:`prefix_digest`)."""
    splitter = LineSplitter()
    tail = b""
    head = b""
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            if len(head) < HEAD_BYTES:
                head += chunk[: HEAD_BYTES - len(head)]
            batch = splitter.feed(chunk)
            if batch:
                feed.feed(batch)
            tail = (tail + chunk)[-(TAIL_BYTES + len(splitter.pending)):]
    pending = len(splitter.pending)
    end = splitter.offset - pending
    if pending:
        tail = tail[:-pending]
    return end, head[: min(HEAD_BYTES, end)] + tail[-TAIL_BYTES:]


def _flat(value: Any, out: list[str], budget: int) -> int:
    """Strings inside a tool input (keys dropped), up to ``budget`` characters."""
    if budget <= 0:
        return budget
    if isinstance(value, str):
        out.append(value[:budget])
        return budget - len(value)
    if isinstance(value, dict):
        for v in value.values():
            budget = _flat(v, out, budget)
    elif isinstance(value, (list, tuple)):
        for v in value:
            budget = _flat(v, out, budget)
    elif value is not None and not isinstance(value, bool):
        out.append(str(value))
        budget -= len(out[-1])
    return budget


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _iso_seconds(stamp: str | None) -> float | None:
    if not stamp:
        return None
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def extract(path: str, project_dir: str, size: int, mtime: float, after_line: int = 0) -> Extracted:
    """Read one session file (and its sub-agents) into its row and its texts of
    lines after ``after_line`` (the lines an earlier read already indexed)."""
    p = Path(path)
    feed = Feed()
    end, tail = _read_complete_lines(p, feed)
    session = feed.session
    subagents = load_subagents(feed, p) if session.format == "transcript" else 0
    entries = feed.entries

    def stamp(line_no: int) -> str | None:
        if 1 <= line_no <= len(entries):
            return getattr(entries[line_no - 1], "timestamp", None)
        return None

    first_ts = last_ts = None
    cost_known = session.results > 0
    for entry in entries:
        ts = getattr(entry, "timestamp", None)
        if ts:
            first_ts = first_ts or ts
            last_ts = ts
        elif isinstance(entry, F.CostState) and entry.totalCostUSD is not None:
            cost_known = True
    texts: list[TextRow] = []
    first_prompt: str | None = None
    last_reply: str | None = None
    for item in session.agents[MAIN].items:
        if isinstance(item, PromptItem):
            role, body = "user", item.text
            typed = body.strip()
            if typed and (first_prompt is None or first_prompt.startswith("/")) \
                    and not (first_prompt and typed.startswith("/")):
                first_prompt = typed  # a slash command only when nothing else was typed
        elif isinstance(item, TextItem):
            role, body = "assistant", item.text
            if body.strip():
                last_reply = body
        elif isinstance(item, ToolItem):
            parts = [item.call.name]
            _flat(item.call.input, parts, TEXT_LIMIT)
            role, body = "tool", " ".join(parts)
        else:
            continue
        if item.line_no > after_line and body.strip():
            texts.append(TextRow(item.line_no, role, stamp(item.line_no), _clip(body, TEXT_LIMIT)))
    start, last = _iso_seconds(first_ts), _iso_seconds(last_ts)
    usage = session.usage
    row = SessionRow(
        session_id=session.session_id or p.stem,
        path=path,
        project=session.cwd or Path(project_dir).name,
        project_dir=project_dir,
        title=session.title or "(untitled)",
        first_prompt=_clip(first_prompt, PREVIEW_LIMIT) if first_prompt else None,
        git_branch=session.git_branch,
        started=first_ts,
        last_activity=last_ts,
        duration_s=round(last - start, 3) if start is not None and last is not None else None,
        prompts=sum(1 for t in session.turns if t.prompt),
        tool_calls=len(session.calls),
        cost_usd=round(session.cost_usd, 6) if cost_known else None,
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        model=session.model,
        bytes=size,
        subagents=subagents,
        mtime=mtime,
        last_reply=_clip(last_reply, PREVIEW_LIMIT) if last_reply else None,
        tasks=[{"description": t.description or t.task_type or t.task_id, "status": t.status}
               for t in session.tasks.values()][:50],
        format=session.format,
    )
    return Extracted(row=row, texts=texts, indexed_bytes=end, lines=len(entries),
                     tail=tail_digest(tail))
