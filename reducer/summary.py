"""The folded state as a plain dict (``cctv summary --json``) and as text."""

from __future__ import annotations

from collections import Counter
from typing import Any

from .context import context_series, context_window
from .costs import Cost, agent_figures, cost_of, cost_text
from .format import clip, exact_count, plural
from .safe import visible
from .fold import Session
from .state import MAIN, ActivityKind, TextItem

__all__ = ["summarize", "format_summary", "final_status"]


_AFTERWORDS = frozenset({"system", "harness", "info", "command output"})
"""Notices the CLI writes after the model's last word: they do not reopen a turn."""


def final_status(session: Session) -> ActivityKind:
    """What the session was doing when its input ended.

    A turn that ended (a ``result``, a ``turn_duration``, a final assistant
    message with a stop reason) is ``idle``; so is one whose last entry is the
    model's text of a CLI that writes no stop reason (1.0.x) or the output of a
    local command. ``background`` when a background task still runs; else what
    :attr:`Session.activity` says (``requesting``, ``running``: the input was cut
    mid-turn)."""
    kind = session.activity.kind
    if kind == "requesting":
        turn = session.turns[-1] if session.turns else None
        items = (i for i in reversed(session.main.items) if not i.hidden
                 and i.kind not in ("hook", "stop_summary"))
        last = next(items, None)
        if last is not None and last.kind == "notice" and turn is not None and turn.answered:
            # after the model's answer, the CLI's own rows (a hook result, ! bash output)
            last = next((i for i in items if i.kind != "notice"
                         or i.category not in _AFTERWORDS), None)
        if turn is None or turn.closed or (
                isinstance(last, TextItem) and not last.streaming) or (
                last is not None and last.kind == "notice" and last.category == "harness"
                and not turn.answered):
            kind = "idle"
    if kind == "idle" and any(t.running and t.backgrounded for t in session.tasks.values()):
        return "background"
    return kind


def prompt_count(session: Session) -> int:
    """Human prompts, slash commands included: the one count the summary, the
    session index and the browser show (a stream-json prompt is not echoed on
    stdout, but each one ends in a result)."""
    return sum(1 for t in session.turns if t.started_by in ("prompt", "command")
               or t.started_by is None and t.subtype is not None)


def summarize(session: Session) -> dict[str, Any]:
    """The documented ``cctv summary --json`` object."""
    calls = session.calls.values()
    by_name = Counter(c.name for c in calls)
    cost = cost_of(session)
    window = context_window(session)
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
        "malformed_count": session.malformed_count,
        "unknown": [{"line": n, "kind": k} for n, k in session.unknown],
        "kinds": dict(sorted(session.kinds.items())),
        "status": final_status(session),
        "turns": session.model_turns,
        "prompts": prompt_count(session),
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
                "state": t.state,
                "backgrounded": t.backgrounded,
                "tool_use_id": t.tool_use_id,
            }
            for t in session.tasks.values()
        ],
        "subagents": sum(1 for a in session.agents if a != MAIN),
        "agents": [a.as_dict() for a in agent_figures(session)],
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
        "cost_usd": None if cost.usd is None else round(cost.usd, 6),
        "cost_source": cost.source,
        "cost_unpriced": cost.reason,
        "usage": session.usage.as_dict(),
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
            + f"  {plural(agent['tool_calls'], 'tool call')}"
            + ("" if duration is None else f"  {duration:.1f}s"))


def format_summary(data: dict[str, Any]) -> str:
    """A few readable lines from :func:`summarize`'s dict, every string from the
    session shown with its control characters made visible (:func:`reducer.safe.visible`)."""
    tc = data["tool_calls"]
    names = ", ".join(f"{n} {c}" for n, c in sorted(tc["by_name"].items(), key=lambda x: -x[1]))
    tasks = data["tasks"]
    running = sum(1 for t in tasks if t["status"] in ("pending", "running"))
    usage = data["usage"]
    cost = data["cost_usd"]
    source, unpriced = data.get("cost_source"), data.get("cost_unpriced")
    shown = cost_text(Cost(cost, source))
    if unpriced:
        shown += f" ({unpriced})" if cost is None else f" + ? ({unpriced})"
    lines = [
        f"{data['title'] or '(untitled)'}",
        f"  session  {data['session_id'] or '?'}  ({data['format']}, CLI {data['cli_version'] or '?'},"
        f" model {data['model'] or '?'})",
        f"  lines    {exact_count(data['lines'])}  malformed {exact_count(data.get('malformed_count', len(data['malformed'])))}"
        f"  unknown kinds {len(data['unknown'])}",
        f"  status   {data.get('status') or '?'}",
        f"  turns    {data['turns']} ({data.get('prompts', 0)} prompts)"
        f"  cost {shown}"
        f"  tokens in {exact_count(usage['input_tokens'])} out {exact_count(usage['output_tokens'])}"
        f" cache r/w {exact_count(usage['cache_read_input_tokens'])}"
        f"/{exact_count(usage['cache_creation_input_tokens'])}"
        + ("  ERROR" if data["is_error"] else ""),
        f"  tools    {tc['total']} calls ({tc['failed']} failed, {tc['denied']} denied,"
        f" {tc['unpaired']} without result){': ' + names if names else ''}",
        f"  agents   {data['subagents']} sub-agents  tasks {len(tasks)} ({running} running)"
        f"  heartbeats {data['heartbeats']}",
        *(_agent_line(agent) for agent in data.get("agents", [])[1:]),
        f"  hooks    {data['hooks']['runs']} runs ({data['hooks']['failed']} failed),"
        f" {data['hooks']['stop_summaries']} stop summaries"
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
        text = f"  api      {retries} retries"
        if limit:
            util = limit["utilization"]
            text += (f"  rate limit {limit['status'] or '?'} ({limit['type'] or '?'}"
                     + (f", {util * 100:.0f}%" if util is not None else "")
                     + (f", overage {limit['overage_status']}" if limit["overage_status"] else "")
                     + ")")
        lines.append(text)
    if data["permission_denials"]:
        lines.append(f"  denied   {data['permission_denials']} permission denials")
    for m in data["malformed"][:20]:
        lines.append(f"  line {m['line']}: {m['reason']}")
    total = data.get("malformed_count", len(data["malformed"]))
    if total > 20:
        lines.append(f"  … and {exact_count(total - 20)} more malformed lines")
    return visible("\n".join(lines))
