"""The folded state as a plain dict (``cctv summary --json``) and as text."""

from __future__ import annotations

from collections import Counter
from typing import Any

from .format import exact_count, format_cost
from .safe import visible
from .session import Session
from .state import MAIN

__all__ = ["summarize", "format_summary"]


def summarize(session: Session) -> dict[str, Any]:
    """The documented ``cctv summary --json`` object."""
    calls = session.calls.values()
    by_name = Counter(c.name for c in calls)
    return {
        "format": session.format,
        "session_id": session.session_id,
        "session_ids": list(session.session_ids),
        "title": session.title,
        "cli_version": session.cli_version,
        "model": session.model,
        "cwd": session.cwd,
        "lines": session.lines,
        "malformed": [{"line": n, "reason": r} for n, r in session.malformed],
        "unknown": [{"line": n, "kind": k} for n, k in session.unknown],
        "kinds": dict(sorted(session.kinds.items())),
        "turns": len(session.turns),
        "tool_calls": {
            "total": len(session.calls),
            "failed": sum(1 for c in calls if c.status == "failed"),
            "denied": sum(1 for c in calls if c.status == "denied"),
            "interrupted": sum(1 for c in calls if c.status == "interrupted"),
            "unpaired": sum(1 for c in calls if c.result_line_no is None),
            "by_name": dict(sorted(by_name.items())),
        },
        "tasks": [
            {
                "task_id": t.task_id,
                "task_type": t.task_type,
                "description": t.description,
                "status": t.status,
                "backgrounded": t.backgrounded,
                "tool_use_id": t.tool_use_id,
            }
            for t in session.tasks.values()
        ],
        "subagents": sum(1 for a in session.agents if a != MAIN),
        "heartbeats": session.heartbeats,
        "hooks": {
            "runs": len(session.hooks),
            "failed": sum(1 for h in session.hooks.values() if h.status in ("error", "cancelled")),
            "stop_summaries": session.stop_summaries,
        },
        "thinking_tokens": session.thinking_tokens,
        "compactions": [
            {"trigger": c.trigger, "pre_tokens": c.pre_tokens, "post_tokens": c.post_tokens}
            for c in session.compactions
            if not c.failed
        ],
        "failed_compactions": [c.error for c in session.compactions if c.failed],
        "permission_denials": len(session.permission_denials),
        "cost_usd": round(session.cost_usd, 6),
        "usage": session.usage.as_dict(),
        "is_error": session.is_error,
    }


def format_summary(data: dict[str, Any]) -> str:
    """A few readable lines from :func:`summarize`'s dict, every string from the
    session shown with its control characters made visible (:func:`reducer.safe.visible`)."""
    tc = data["tool_calls"]
    names = ", ".join(f"{n} {c}" for n, c in sorted(tc["by_name"].items(), key=lambda x: -x[1]))
    tasks = data["tasks"]
    running = sum(1 for t in tasks if t["status"] not in ("completed", "failed", "killed", "stopped"))
    usage = data["usage"]
    lines = [
        f"{data['title'] or '(untitled)'}",
        f"  session  {data['session_id'] or '?'}  ({data['format']}, CLI {data['cli_version'] or '?'},"
        f" model {data['model'] or '?'})",
        f"  lines    {exact_count(data['lines'])}  malformed {len(data['malformed'])}"
        f"  unknown kinds {len(data['unknown'])}",
        f"  turns    {data['turns']}  cost {format_cost(data['cost_usd'])}"
        f"  tokens in {exact_count(usage['input_tokens'])} out {exact_count(usage['output_tokens'])}"
        f" cache r/w {exact_count(usage['cache_read_input_tokens'])}"
        f"/{exact_count(usage['cache_creation_input_tokens'])}"
        + ("  ERROR" if data["is_error"] else ""),
        f"  tools    {tc['total']} calls ({tc['failed']} failed, {tc['denied']} denied,"
        f" {tc['unpaired']} without result){': ' + names if names else ''}",
        f"  agents   {data['subagents']} sub-agents  tasks {len(tasks)} ({running} running)"
        f"  heartbeats {data['heartbeats']}",
        f"  hooks    {data['hooks']['runs']} runs ({data['hooks']['failed']} failed),"
        f" {data['hooks']['stop_summaries']} stop summaries"
        f"  thinking {exact_count(data['thinking_tokens'])} tok",
    ]
    for c in data["compactions"]:
        lines.append(f"  compact  {c['trigger']}: {c['pre_tokens']} → {c['post_tokens']} tokens")
    if data["permission_denials"]:
        lines.append(f"  denied   {data['permission_denials']} permission denials")
    for m in data["malformed"][:20]:
        lines.append(f"  line {m['line']}: {m['reason']}")
    if len(data["malformed"]) > 20:
        lines.append(f"  … and {len(data['malformed']) - 20} more malformed lines")
    return visible("\n".join(lines))
