"""One verdict for a file that is not a Claude Code session at all.

A binary, an HTML page or another program's log decodes to nothing but
malformed lines (or frames of no kind cctv knows). Listing each of its 2,806
lines helps nobody: ``cctv check``, ``cctv summary`` and the viewer say one
sentence instead, from this one function.
"""

from __future__ import annotations

__all__ = ["not_a_session", "session_verdict"]


def not_a_session(lines: int, malformed: int, unknown: int) -> str | None:
    """``"not a Claude Code session: …"`` when no line of the file is a known frame.

    ``lines`` counts the non-blank lines read, ``malformed`` those that are not
    a usable frame, ``unknown`` the JSON objects of no known kind. ``None``
    when at least one line is a frame cctv knows (or there are no lines: an
    empty file is a session that has not started yet).
    """
    if lines <= 0 or malformed + unknown < lines:
        return None
    if malformed == lines:
        return f"not a Claude Code session: {malformed:,} of {lines:,} lines are not JSON"
    if unknown == lines:
        return f"not a Claude Code session: {unknown:,} of {lines:,} lines are JSON of no kind cctv knows"
    return (f"not a Claude Code session: none of its {lines:,} lines is a frame"
            f" ({malformed:,} not JSON, {unknown:,} of unknown kinds)")


def session_verdict(session: object) -> str | None:
    """:func:`not_a_session` from a folded session's own counts (the viewer's path:
    a live fold keeps counts, not every entry)."""
    kinds = getattr(session, "kinds", {})
    lines = getattr(session, "lines", 0) - kinds.get("blank", 0)
    malformed = getattr(session, "malformed_count", kinds.get("malformed", 0))
    unknown = len(getattr(session, "unknown", ()))
    return not_a_session(lines, malformed, unknown)
