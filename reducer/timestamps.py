"""The one reading of a row's ISO 8601 ``timestamp`` as epoch seconds.

The fold (a call's start and end), replay (each frame's time), item times and the
session index all read timestamps through :func:`parse_timestamp`. Pure: no I/O.
"""

from __future__ import annotations

from datetime import datetime, timezone

__all__ = ["parse_timestamp", "utc_day"]

_UTC = timezone.utc


def parse_timestamp(value: str | None) -> float | None:
    """``"2026-11-29T13:59:18.269Z"`` → epoch seconds; ``None`` when absent or not
    ISO. A time without an offset is UTC (Claude Code writes ``Z``), whatever the
    local zone."""
    if not value:
        return None
    try:
        stamp = datetime.fromisoformat(value)
    except ValueError:
        return None
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=_UTC)
    return stamp.timestamp()


def utc_day(value: str | None) -> str | None:
    """The UTC day (``YYYY-MM-DD``) of an ISO 8601 time or date; ``None`` when
    absent or not ISO."""
    when = parse_timestamp(value)
    return None if when is None else datetime.fromtimestamp(when, _UTC).strftime("%Y-%m-%d")
