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

from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from reducer import frames as F
from reducer.feed import Feed
from reducer.lines import LineSplitter
from reducer.session import Session
from reducer.state import MAIN, Item, PromptItem, TextItem, ToolItem
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


def _searchable(item: Item) -> tuple[str, str] | None:
    """(role, text) of an item whose text is searchable: a prompt, a reply, a tool input."""
    if isinstance(item, PromptItem):
        return "user", item.text
    if isinstance(item, TextItem):
        return "assistant", item.text
    if isinstance(item, ToolItem):
        parts = [item.call.name]
        _flat(item.call.input, parts, TEXT_LIMIT)
        return "tool", " ".join(parts)
    return None


def _main_line(session: Session, agent_id: str) -> int:
    """The line of the main file that a hit in sub-agent ``agent_id`` opens: its
    call's (the outermost one for a sub-agent of a sub-agent)."""
    line = 0
    seen: set[str] = set()
    while agent_id != MAIN and agent_id not in seen:
        seen.add(agent_id)
        call = session.calls.get(agent_id)
        agent = session.agents.get(agent_id)
        if call is not None:
            line = call.line_no
            agent_id = call.agent
        elif agent is not None and agent.parent:
            agent_id = agent.parent
        else:
            break
    return line


def _subagent_texts(session: Session, after_line: int,
                    stamp: Callable[[int], str | None]) -> list[TextRow]:
    """The searchable texts of every sub-agent, as ``sub-agent <role>`` rows.

    An item read from the main file (CLI 1.0.x's inline sub-agents, stream-json)
    keeps its own line; one read from a sub-agent's file is found at the line
    of the call that started it. ``after_line``: the main file grew and no
    sub-agent file changed (see :func:`viewer.index.refresh.plan`), so only
    main-file lines past it are new."""
    out: list[TextRow] = []
    for agent_id, agent in session.agents.items():
        if agent_id == MAIN:
            continue
        call_line = _main_line(session, agent_id)
        for item in agent.items:
            text = _searchable(item)
            if text is None or not text[1].strip():
                continue
            in_main = item.source == MAIN
            line = item.line_no if in_main else call_line
            if (in_main and line <= after_line) or (not in_main and after_line):
                continue
            out.append(TextRow(line, f"sub-agent {text[0]}", stamp(line) if in_main else None,
                               _clip(text[1], TEXT_LIMIT)))
    return out


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
        text = _searchable(item)
        if text is None:
            continue
        role, body = text
        if role == "user":
            typed = body.strip()
            if typed and (first_prompt is None or first_prompt.startswith("/")) \
                    and not (first_prompt and typed.startswith("/")):
                first_prompt = typed  # a slash command only when nothing else was typed
        elif role == "assistant" and body.strip():
            last_reply = body
        if item.line_no > after_line and body.strip():
            texts.append(TextRow(item.line_no, role, stamp(item.line_no), _clip(body, TEXT_LIMIT)))
    texts += _subagent_texts(session, after_line, stamp)
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
