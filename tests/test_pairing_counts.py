"""Every tool call paired with its result, counted twice: by the fold, and
straight from the JSON by the code below, which shares nothing with the fold
but the files it reads (the session file and, on disk, the sub-agent files
beside it). For the main agent and for the sub-agents apart, over every
recording in the fixtures: total, failed, denied, interrupted, unpaired.

The JSON count reads the CLI's own marks: tool_use ids against tool_result
ids, ``is_error``, the interrupted flag of the structured result, the
``[Request interrupted…]`` row that follows a refusal text, a result that
lists the call in ``permission_denials``, a ``permission_denied`` frame, a
``can_use_tool`` request, a refusal text (``permission … denied``, a
PreToolUse hook's error), a turn that ended aborted with the call still
open, a background task that was killed or failed."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from cctv.reducer.state import MAIN
from cctv.viewer.discovery import subagent_files
from cctv.viewer.loader import load_path
from conftest import FIXTURES

KINDS = ("total", "failed", "denied", "interrupted", "unpaired")


def sessions() -> list[Path]:
    """Every recording a person can open: not the sub-agent files an on-disk
    session reads itself, not a workflow's journal."""
    return sorted(p for p in FIXTURES.rglob("*.jsonl")
                  if "subagents" not in p.parts and p.name != "journal.jsonl")


@dataclass
class _Call:
    side: str
    """``main`` or ``sub``."""
    result: dict | None = None
    """``{is_error, text, interrupted, line}`` of its tool_result."""
    asked: bool = False
    open_at_abort: bool = False
    task_end: str | None = None


@dataclass
class _Count:
    calls: dict[str, _Call] = field(default_factory=dict)
    denied: set[str] = field(default_factory=set)
    interrupt_rows: list[int] = field(default_factory=list)
    background: dict[str, str] = field(default_factory=dict)
    """task id → the call id whose structured result named it (a background command)."""
    turn_calls: list[str] = field(default_factory=list)
    """Main-agent calls since the latest result."""


def _text(content) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_text(b.get("text") if b.get("type") == "text" else b.get("content"))
                         for b in content if isinstance(b, dict))
    return ""


def _rows(path: Path) -> list[tuple[int, dict]]:
    """(line number, object) of each line that is a JSON object."""
    out = []
    for n, line in enumerate(path.read_bytes().splitlines(), 1):
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if isinstance(row, dict):
            out.append((n, row))
    return out


def _read(count: _Count, path: Path, in_sub_file: bool) -> None:
    for n, row in _rows(path):
        kind, sub = row.get("type"), row.get("subtype")
        side = "sub" if in_sub_file or row.get("parent_tool_use_id") or row.get("isSidechain") \
            else "main"
        message = row.get("message") if isinstance(row.get("message"), dict) else {}
        content = message.get("content")
        if kind == "assistant" and isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and block.get("type") in ("tool_use", "server_tool_use") \
                        and block.get("id") and block["id"] not in count.calls:
                    count.calls[block["id"]] = _Call(side)
                    if side == "main":
                        count.turn_calls.append(block["id"])
        elif kind == "user":
            results = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"] \
                if isinstance(content, list) else []
            if not results and side == "main" and _text(content).lstrip().startswith(
                    "[Request interrupted"):
                count.interrupt_rows.append(n)
            structured = row.get("tool_use_result", row.get("toolUseResult"))
            for block in results:
                call = count.calls.setdefault(block.get("tool_use_id") or "", _Call(side))
                if call.result is not None:
                    continue
                head = structured if isinstance(structured, dict) and len(results) == 1 else {}
                call.result = {"is_error": bool(block.get("is_error")),
                               "text": _text(block.get("content")).lstrip(),
                               "interrupted": head.get("interrupted") is True, "line": n}
                task = head.get("backgroundTaskId")
                if task:
                    count.background[task] = block.get("tool_use_id") or ""
        elif kind == "result":
            for denial in row.get("permission_denials") or ():
                count.denied.add(denial.get("tool_use_id") or "")
            if row.get("is_error") or str(row.get("terminal_reason") or "").startswith("aborted"):
                for call_id in count.turn_calls:
                    count.calls[call_id].open_at_abort = count.calls[call_id].result is None
            count.turn_calls = []
        elif kind == "system" and sub == "permission_denied":
            count.denied.add(row.get("tool_use_id") or "")
        elif kind == "control_request" and (row.get("request") or {}).get("subtype") == "can_use_tool":
            call = count.calls.get(row["request"].get("tool_use_id") or "")
            if call is not None and call.result is None:
                call.asked = True
        elif kind == "system" and sub in ("task_updated", "task_notification"):
            state = (row.get("patch") or {}).get("status") if sub == "task_updated" else row.get("status")
            call = count.calls.get(count.background.get(row.get("task_id"), ""))
            if call is not None and state in ("killed", "stopped", "failed"):
                call.task_end = state


def _refused(text: str) -> bool:
    low = text[:300].lower()
    return ("permission" in low and any(w in low for w in ("denied", "not granted",
                                                           "haven't granted", "rejected"))) \
        or "user doesn't want to proceed" in low or "the user denied" in low \
        or (text.startswith("PreToolUse") and " hook error: " in text[:200])


def _status(call_id: str, call: _Call, count: _Count) -> str | None:
    """failed, denied, interrupted, or None (done, running, or no result)."""
    result = call.result
    if result is None:
        return "interrupted" if call.open_at_abort else None
    if call_id in count.denied:
        return "denied"
    if result["interrupted"] or result["text"].startswith("[Request interrupted"):
        return "interrupted"
    if result["is_error"]:
        if "user doesn't want to proceed" in result["text"][:300].lower() and any(
                0 < row - result["line"] <= 2 for row in count.interrupt_rows):
            return "interrupted"  # the refusal text the CLI writes for an interrupt
        return "denied" if call.asked or _refused(result["text"]) else "failed"
    if call.task_end is not None:
        return "failed" if call.task_end == "failed" else "interrupted"
    return None


def json_counts(path: Path) -> dict[str, Counter[str]]:
    """The five counts per side (``main``, ``sub``), from the JSON alone."""
    count = _Count()
    _read(count, path, False)
    for agent_path, _meta in subagent_files(path):
        _read(count, agent_path, True)
    out: dict[str, Counter[str]] = {"main": Counter(), "sub": Counter()}
    for call_id, call in count.calls.items():
        tally = out[call.side]
        tally["total"] += 1
        if call.result is None:
            tally["unpaired"] += 1
        status = _status(call_id, call, count)
        if status is not None:
            tally[status] += 1
    return out


def fold_counts(path: Path) -> dict[str, Counter[str]]:
    """The same five counts per side, as the fold has them."""
    out: dict[str, Counter[str]] = {"main": Counter(), "sub": Counter()}
    for call in load_path(path).session.calls.values():
        tally = out["main" if call.agent == MAIN else "sub"]
        tally["total"] += 1
        if call.result_line_no is None:
            tally["unpaired"] += 1
        if call.status in ("failed", "denied", "interrupted"):
            tally[call.status] += 1
    return out


@pytest.mark.parametrize("path", sessions(), ids=lambda p: str(p.relative_to(FIXTURES)))
def test_tool_calls_pair_with_their_results_as_the_json_says(path: Path) -> None:
    assert fold_counts(path) == json_counts(path)


def test_the_counts_look_at_sub_agent_calls_and_every_kind() -> None:
    """The parametrised test above is not vacuous: across the fixtures there are
    sub-agent calls without a result (three files hold some), and every count."""
    totals: Counter[tuple[str, str]] = Counter()
    unpaired_sub_files = 0
    for path in sessions():
        counts = json_counts(path)
        for side, tally in counts.items():
            for kind in KINDS:
                totals[side, kind] += tally[kind]
        unpaired_sub_files += counts["sub"]["unpaired"] > 0
    assert unpaired_sub_files >= 3
    for kind in KINDS:
        assert totals["main", kind] > 0, kind
    assert totals["sub", "total"] > 100 and totals["sub", "failed"] > 0
