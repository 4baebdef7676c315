"""The words and figures of a turn's footer, built once for the transcript's card
(which styles them and adds the turn's problem) and the Markdown export:
``turn 3 · 12s (api 4.1s) · $0.0213 · in 1.2k out 300 · 2 tools``. Pure."""

from __future__ import annotations

from .facts import Tokens
from .format import WORDS, compact_count, format_cost, format_duration, plural
from .state import Turn

__all__ = ["turn_footer", "turn_failure"]


def turn_footer(turn: Turn, *, api_time: bool = True, calls: str = "tool") -> list[str]:
    """A finished turn's facts, in order: its number, how long it took (with
    ``api_time``, how long the API took of it), its cost, the tokens in (cache
    reads and writes too: :attr:`reducer.facts.Tokens.total_in`) and out, and its tool calls counted as ``calls``."""
    parts = [f"turn {turn.number}"]
    if turn.duration_ms is not None:
        took = format_duration(turn.duration_ms / 1000)
        if api_time and turn.duration_api_ms:
            took += f" (api {format_duration(turn.duration_api_ms / 1000)})"
        parts.append(took)
    if turn.cost_usd is not None:
        parts.append(format_cost(turn.cost_usd))
    used = Tokens.of(turn.usage)
    if used.total_in or used.output:
        parts.append(f"{WORDS['in']} {compact_count(used.total_in)} {WORDS['out']} {compact_count(used.output)}")
    if turn.tool_calls:
        parts.append(plural(turn.tool_calls, calls))
    return parts


_ERROR_CLASSES = {
    "error_max_turns": "max turns reached",
    "error_during_execution": "error during execution",
    "error_max_budget_usd": "budget reached",
    "error_max_structured_output_retries": "structured output retries exhausted",
}


def turn_failure(turn: Turn) -> str | None:
    """Why a finished turn failed, in words (``None``: it did not): its result's
    subtype, with the terminal reason when it says more (``error during
    execution (aborted_streaming)``); an error on a ``success`` result is the
    API's (``API error 429``)."""
    if turn.outcome != "failed" and not (turn.subtype and turn.subtype != "success"):
        return None
    subtype = turn.subtype or "error"
    if subtype == "success":
        return "API error" + (f" {turn.api_error_status}" if turn.api_error_status else "")
    label = _ERROR_CLASSES.get(subtype, subtype.replace("_", " "))
    reason = turn.terminal_reason
    if reason and reason != "completed" and reason.replace("_", " ") not in label:
        label += f" ({reason})"
    return label
