"""The words and figures of a turn's footer, built once for the transcript's card
(which styles them and adds the turn's problem) and the Markdown export:
``turn 3 · 12s (api 4.1s) · $0.0213 · in 1.2k out 300 · 2 tools``. Pure."""

from __future__ import annotations

from .format import compact_count, format_cost, format_duration, plural
from .state import Turn

__all__ = ["turn_footer"]


def turn_footer(turn: Turn, *, api_time: bool = True, calls: str = "tool") -> list[str]:
    """A finished turn's facts, in order: its number, how long it took (with
    ``api_time``, how long the API took of it), its cost, the tokens in (cache
    reads and writes too) and out, and its tool calls counted as ``calls``."""
    parts = [f"turn {turn.index + 1}"]
    if turn.duration_ms is not None:
        took = format_duration(turn.duration_ms / 1000)
        if api_time and turn.duration_api_ms:
            took += f" (api {format_duration(turn.duration_api_ms / 1000)})"
        parts.append(took)
    if turn.cost_usd is not None:
        parts.append(format_cost(turn.cost_usd))
    u = turn.usage
    tokens_in = u.input_tokens + u.cache_creation_input_tokens + u.cache_read_input_tokens
    if tokens_in or u.output_tokens:
        parts.append(f"in {compact_count(tokens_in)} out {compact_count(u.output_tokens)}")
    if turn.tool_calls:
        parts.append(plural(turn.tool_calls, calls))
    return parts
