"""The folded state as a plain dict (``cctv summary --json``) and as text."""

from __future__ import annotations

from collections import Counter
from typing import Any

from .context import context_series, context_window
from .costs import Cost, cost_text
from .facts import TaskFacts, session_facts
from .format import WORDS as W, clip, exact_count, plural, title_text
from .safe import visible
from .fold import Session

__all__ = ["summarize", "format_summary"]


def _task(entry: TaskFacts) -> dict[str, Any]:
    return {"task_id": entry.task_id, "agent_id": entry.agent_id, "kind": entry.kind,
            "task_type": entry.task_type, "description": entry.description,
            "status": entry.status, "state": entry.state, "backgrounded": entry.backgrounded,
            "tool_use_id": entry.tool_use_id,
            "duration_s": None if entry.duration_s is None else round(entry.duration_s, 3)}


def summarize(session: Session) -> dict[str, Any]:
    """The documented ``cctv summary --json`` object: the session's figures
    (:func:`reducer.facts.session_facts`) and what was read."""
    facts = session_facts(session)
    figures = facts.as_json()
    window = context_window(session)
    return {
        "format": session.format,
        "session_id": session.session_id,
        "session_ids": list(session.session_ids),
        "title": figures.pop("title"),
        "cli_version": session.cli_version,
        "model": session.model,
        "cwd": session.cwd,
        "lines": session.lines,
        "malformed": [{"line": n, "reason": r} for n, r in session.malformed],
        "malformed_count": session.malformed_count,
        "unknown": [{"line": n, "kind": k} for n, k in session.unknown],
        "kinds": dict(sorted(session.kinds.items())),
        **figures,
        "tasks": [_task(entry) for entry in facts.tasks],
        "heartbeats": session.heartbeats,
        "hooks": {
            "runs": len(session.hooks),
            "failed": sum(1 for h in session.hooks.values() if h.status == "failed"),
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
        "context_window": window,
        "context": [{"turn": p.turn, "tokens": p.tokens,
                     "share": None if p.share is None else round(p.share, 4),
                     "compacted": p.compacted} for p in context_series(session, window)],
        "is_error": session.is_error,
        "api_retries": session.api_retries,
        "rate_limit": (session.rate_limit_state.as_dict()
                       if session.rate_limit_state.events else None),
    }


def _agent_line(agent: dict[str, Any]) -> str:
    """A sub-agent of :func:`summarize`'s ``agents``, indented by its depth."""
    own = cost_text(Cost(agent["cost_usd"], agent["cost_source"]))
    tree = cost_text(Cost(agent["subtree_cost_usd"], "estimated"))
    name = agent["agent_type"] or "agent"
    duration = agent["duration_s"]
    about = clip(agent["description"], 40, one_line=True)
    return (f"  {'  ' * agent['depth']}└ {name} “{about}”  {own}"
            + (f" (with its agents {tree})" if tree != own else "")
            + f"  {plural(agent['tool_calls'], W['tool_calls'])}"
            + ("" if duration is None else f"  {duration:.1f}s"))


def format_summary(data: dict[str, Any]) -> str:
    """A few readable lines from :func:`summarize`'s dict, every string from the
    session shown with its control characters made visible (:func:`reducer.safe.visible`)."""
    tc = data["tool_calls"]
    names = ", ".join(f"{n} {c}" for n, c in sorted(tc["by_name"].items(), key=lambda x: -x[1]))
    tasks = data["tasks"]
    running = sum(1 for t in tasks if t["status"] in ("pending", "running"))
    usage = data["usage"]
    fresh, read, write = (usage["input_tokens"], usage["cache_read_input_tokens"],
                          usage["cache_creation_input_tokens"])
    shown = cost_text(Cost(data["cost_usd"], data.get("cost_source")))
    unpriced = data.get("cost_unpriced")
    if unpriced:
        shown += f" ({unpriced})" if data["cost_usd"] is None else f" + ? ({unpriced})"
    lines = [
        title_text(data["title"]),
        f"  session  {data['session_id'] or '?'}  ({data['format']}, CLI {data['cli_version'] or '?'},"
        f" model {data['model'] or '?'})",
        f"  lines    {exact_count(data['lines'])}  malformed {exact_count(data.get('malformed_count', len(data['malformed'])))}"
        f"  unknown kinds {len(data['unknown'])}",
        f"  status   {data.get('status') or '?'}",
        f"  turns    {data['turns']} ({plural(data.get('prompts', 0), W['prompts'])})"
        f"  cost {shown}"
        + ("  ERROR" if data["is_error"] else ""),
        f"  tokens   {W['in']} {exact_count(fresh + read + write)}"
        f" ({W['uncached']} {exact_count(fresh)}, {W['cache read']} {exact_count(read)},"
        f" {W['cache write']} {exact_count(write)})  {W['out']} {exact_count(usage['output_tokens'])}",
        f"  tools    {plural(tc['total'], W['tool_calls'])} ({tc['failed']} failed, {tc['denied']} denied,"
        f" {tc['interrupted']} interrupted, {tc['unpaired']} without result)"
        f"{': ' + names if names else ''}",
        f"  agents   {plural(data['subagents'], W['subagents'])}  {plural(len(tasks), W['tasks'])} ({running} running)"
        f"  heartbeats {data['heartbeats']}",
        *(_agent_line(agent) for agent in data.get("agents", [])[1:]),
        f"  hooks    {plural(data['hooks']['runs'], 'run')} ({data['hooks']['failed']} failed),"
        f" {plural(data['hooks']['stop_summaries'], 'stop summary', 'stop summaries')}"
        f"  thinking {exact_count(data['thinking_tokens'])} tok",
    ]
    comps = data["compactions"]
    if comps:
        pre = sum(c["pre_tokens"] or 0 for c in comps)
        posts = [c["post_tokens"] for c in comps]
        post = "?" if any(p is None for p in posts) else exact_count(sum(posts))
        triggers = Counter(c["trigger"] or "?" for c in comps)
        how = ", ".join(f"{n} {t}" for t, n in sorted(triggers.items()))
        lines.append(f"  compact  {len(comps)} ({how}): {exact_count(pre)} → {post} tokens")
    if data.get("failed_compactions"):
        lines.append(f"  compact  {len(data['failed_compactions'])} failed")
    retries, limit = data.get("api_retries", 0), data.get("rate_limit")
    if retries or limit:
        text = f"  api      {plural(retries, 'retry', 'retries')}"
        if limit:
            util = limit["utilization"]
            text += (f"  rate limit {limit['status'] or '?'} ({limit['type'] or '?'}"
                     + (f", {util * 100:.0f}%" if util is not None else "")
                     + (f", overage {limit['overage_status']}" if limit["overage_status"] else "")
                     + ")")
        lines.append(text)
    if data["permission_denials"]:
        lines.append(f"  denied   {plural(data['permission_denials'], 'permission denial')}")
    for m in data["malformed"][:20]:
        lines.append(f"  line {m['line']}: {m['reason']}")
    total = data.get("malformed_count", len(data["malformed"]))
    if total > 20:
        lines.append(f"  … and {plural(total - 20, 'more malformed line', 'more malformed lines', grouped=True)}")
    return visible("\n".join(lines))
