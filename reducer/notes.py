"""Harness texts the CLI writes into a transcript, read into their parts.

On disk a background task's end is a ``<task-notification>`` block (a user
message, or a queued command's prompt) with its fields as XML-like tags. These
helpers read it into a :class:`TaskNote` and word it as one line; and they take
the CLI's hand-back frame off a sub-agent's result so what shows is its answer.
Pure functions of strings: no state, no I/O.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from .format import format_duration, plural, short_id

__all__ = ["TaskNote", "parse_task_notification", "task_note_line", "AgentReply", "agent_reply"]

_FIELD = re.compile(r"<([a-z][a-z-]*)>(.*?)</\1>", re.S)
_USAGE = re.compile(r"(total_tokens|tool_uses|duration_ms):\s*(\d+(?:\.\d+)?)")


class TaskNote(NamedTuple):
    """The fields of a ``<task-notification>``."""

    task_id: str
    status: str
    summary: str = ""
    result: str = ""
    tool_use_id: str | None = None
    output_file: str | None = None
    total_tokens: int | None = None
    tool_uses: int | None = None
    duration_ms: float | None = None


def parse_task_notification(text: str) -> TaskNote | None:
    """The notification in ``text`` (``None`` when there is no task id in it)."""
    start = text.find("<task-notification>")
    if start < 0:
        return None
    end = text.find("</task-notification>", start)
    body = text[start: end if end >= 0 else len(text)]
    fields: dict[str, str] = {}
    for name, value in _FIELD.findall(body):
        fields.setdefault(name, value.strip())
    if not fields.get("task-id"):
        return None
    usage = {k: float(v) for k, v in _USAGE.findall(fields.get("usage", ""))}
    return TaskNote(
        task_id=fields["task-id"], status=fields.get("status") or "completed",
        summary=fields.get("summary", ""), result=fields.get("result", ""),
        tool_use_id=fields.get("tool-use-id"), output_file=fields.get("output-file"),
        total_tokens=int(usage["total_tokens"]) if "total_tokens" in usage else None,
        tool_uses=int(usage["tool_uses"]) if "tool_uses" in usage else None,
        duration_ms=usage.get("duration_ms"))


def task_note_line(note: TaskNote) -> str:
    """``a3a5… completed · 1,217 tokens · 1 tool · 3.2s · Agent "x" completed``."""
    parts = [f"{short_id(note.task_id)} {note.status}"]
    if note.total_tokens is not None:
        parts.append(f"{note.total_tokens:,} tokens")
    if note.tool_uses is not None:
        parts.append(plural(note.tool_uses, "tool"))
    if note.duration_ms is not None:
        parts.append(format_duration(note.duration_ms / 1000))
    if note.summary:
        parts.append(" ".join(note.summary.split()))
    return " · ".join(parts)


class AgentReply(NamedTuple):
    """What a sub-agent call's result says, without the CLI's framing."""

    answer: str
    """The agent's own words ("" while it has not answered)."""
    launched: bool = False
    """The call only launched the agent in the background."""
    output_file: str | None = None


_HAND_BACK = "[Subagent hand-back]"
_LAUNCHED = "Async agent launched successfully"


def agent_reply(text: str) -> AgentReply:
    """The answer in a sub-agent call's result text: the report inside the CLI's
    ``[Subagent hand-back]`` frame (its indentation undone), without the trailing
    ``agentId: …`` and ``<usage>`` lines; an async launch has no answer yet."""
    if text.lstrip().startswith(_LAUNCHED):
        match = re.search(r"^output_file:\s*(\S.*)$", text, re.M)
        return AgentReply("", True, match.group(1).strip() if match else None)
    if _HAND_BACK in text:
        rest = text[text.index(_HAND_BACK):]
        cut = rest.find("The report follows:")
        rest = rest[cut + len("The report follows:"):] if cut >= 0 else rest.split("\n", 1)[-1]
        lines = []
        for line in rest.split("\n"):
            if line and not line[0].isspace() and (line.startswith(("agentId:", "<usage>"))):
                break  # the frame's own lines start at column zero
            lines.append(line[2:] if line.startswith("  ") else line)
        return AgentReply("\n".join(lines).strip("\n"))
    lines = [ln for ln in text.split("\n")
             if not ln.startswith(("agentId:", "<usage>", "</usage>", "<tools-used"))]
    return AgentReply("\n".join(lines).strip("\n"))
