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

from datetime import datetime
from pathlib import Path
from typing import Any

from reducer import frames as F
from reducer.feed import Feed
from reducer.lines import LineSplitter
from reducer.state import MAIN, PromptItem, TextItem, ToolItem
from reducer.summary import prompt_count

from ..loader import load_subagents
from .rows import HEAD_BYTES, TAIL_BYTES, Extracted, SessionRow, TextRow, tail_digest

__all__ = ["extract", "TEXT_LIMIT"]

TEXT_LIMIT = 16_384
"""Characters of one prompt, reply or tool input that are searchable."""
PREVIEW_LIMIT = 2_000
_CHUNK = 8 << 20


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
        prompts=prompt_count(session),
        tool_calls=len(session.calls),
        cost_usd=round(session.cost_usd, 6) if cost_known and session.cost_usd is not None else None,
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
