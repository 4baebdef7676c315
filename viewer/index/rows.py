"""What the index keeps per session: plain msgspec structs, cheap to import
(a listing with nothing to read never loads the decoder or the fold)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import msgspec

from cctv.reducer.live_state import HORIZON_S, LiveFacts, LiveState, live_state

from .scan import open_regular

__all__ = ["Extracted", "HEAD_BYTES", "SessionRow", "TAIL_BYTES", "TEXT_LIMIT", "TextRow", "UsageRow",
           "activity_order", "read_marks", "tail_digest"]

TAIL_BYTES = 256
"""Bytes before the indexed end that must be unchanged for an append to be read as one."""
HEAD_BYTES = 4096
"""First bytes that must be unchanged too (a file replaced by a longer one is no append)."""
TEXT_LIMIT = 16_384
"""Characters of one text (a prompt, a reply, a tool's input or result, a
hook's output…) that are searchable: a giant one by its first part."""


def read_marks(path: str | Path, end: int) -> bytes:
    """The bytes that tell a file only grew since a read that stopped at ``end``:
    its first :data:`HEAD_BYTES` and the :data:`TAIL_BYTES` before ``end``
    (raises ``OSError``, also when it is no longer a regular file)."""
    start = max(0, end - TAIL_BYTES)
    with open_regular(path) as fh:
        head = fh.read(min(HEAD_BYTES, end))
        fh.seek(start)
        return head + fh.read(end - start)


def tail_digest(data: bytes) -> str:
    """A digest of a file's first :data:`HEAD_BYTES` and the :data:`TAIL_BYTES`
    before where a read stopped: unchanged when the file only grew since."""
    return hashlib.blake2b(data, digest_size=8).hexdigest()


class SessionRow(msgspec.Struct, kw_only=True):
    """What the list shows about one session (``cctv sessions --json`` keys and the preview's)."""

    session_id: str
    path: str
    project: str
    project_dir: str
    title: str | None
    """``None``: the session has none (drawn as ``(untitled)``)."""
    first_prompt: str | None
    git_branch: str | None
    started: str | None
    last_activity: str | None
    duration_s: float | None
    status: str
    """What the session was doing when its file ended (``reducer.facts.final_state``)."""
    turns: int
    prompts: int
    tool_calls: int
    cost_usd: float | None
    """Recorded by the CLI, or estimated from the tokens (``cost_source``); ``None``: unknown."""
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    model: str | None
    bytes: int
    subagents: int
    mtime: float = 0.0
    """Latest modification time of the session or its sub-agent files (epoch s)."""
    last_reply: str | None = None
    tasks: list[dict[str, str]] = msgspec.field(default_factory=list)
    format: str = "transcript"
    live_facts: LiveFacts | None = None
    """What the session was doing when the read stopped (:meth:`state` adds the clock)."""
    context_pct: int | None = None
    """The main loop's context as a share of the model's window, when the window is known."""
    cost_source: str | None = None
    """``recorded``, ``estimated``, ``mixed``, or ``None`` with no cost (see the README)."""
    context: list[int] = msgspec.field(default_factory=list)
    """Each main-loop turn's context size (what its last request sent)."""
    compacted: list[bool] = msgspec.field(default_factory=list)
    """For each of :attr:`context`: a compaction came before it."""
    context_window: int | None = None

    @property
    def tokens_in(self) -> int:
        """What ``in`` counts on every screen: fresh input, cache reads and cache writes."""
        return self.input_tokens + self.cache_read_tokens + self.cache_write_tokens

    def state(self, now: float, horizon: float = HORIZON_S) -> LiveState | None:
        """Its live state at ``now`` (``None``: read before live states were kept)."""
        return live_state(self.live_facts, now, self.mtime, horizon=horizon) \
            if self.live_facts else None

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
            "duration_s": self.duration_s, "status": self.status, "turns": self.turns,
            "prompts": self.prompts, "tool_calls": self.tool_calls, "cost_usd": self.cost_usd,
            "cost_source": self.cost_source,
            "input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "model": self.model, "bytes": self.bytes, "subagents": self.subagents,
            "live": self.is_live(now, window_s),
        }


class TextRow(msgspec.Struct, array_like=True):
    """One searchable text (see :mod:`reducer.searchable`)."""

    line: int
    """The line of the row that carried it, in :attr:`file`."""
    role: str
    """A :data:`reducer.searchable.Role`."""
    timestamp: str | None
    body: str
    """Its first :data:`TEXT_LIMIT` characters."""
    chars: int
    """The whole text's length in characters."""
    file: str | None = None
    """The sub-agent file holding :attr:`line`, relative to the session file's
    folder; ``None``: the session file."""
    agent: str | None = None
    """The sub-agent whose transcript it is in; ``None``: the main one."""


class UsageRow(msgspec.Struct, array_like=True):
    """One API request of a session, for ``cctv usage``: counted once across
    sessions by its key (a resumed or forked session copies its rows)."""

    key: str
    """``<message id> <request id>``."""
    day: str
    """The UTC day it was made (``YYYY-MM-DD``; ``""`` when its row has no time)."""
    model: str
    input: int
    output: int
    cache_read: int
    cache_write: int
    cost: float | None
    """Its share of the session's cost (``None``: no price for its model)."""
    source: str | None
    """``recorded`` (a share of the CLI's figure) or ``estimated``."""


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
    usage: list[UsageRow] = msgspec.field(default_factory=list)
    """Every request of the session (all of them, whatever ``after_line``)."""


def activity_order(row: SessionRow) -> tuple[str, float, str]:
    """The sort key of "newest activity first" (reversed): the session's own
    last timestamp, then the file's modification time (a copied or restored
    folder has every file new; the rows' timestamps still tell their order)."""
    return (row.last_activity or "", row.mtime, row.path)
