"""One verdict for a file that is not a Claude Code session at all.

A binary, an HTML page or another program's log decodes to nothing but
malformed lines (or frames of no kind cctv knows). Listing each of its 2,806
lines helps nobody: ``cctv check``, ``cctv summary`` and the viewer say one
sentence instead, from this one function.
"""

from __future__ import annotations

from collections.abc import Iterable

from .decode import not_json

__all__ = ["not_a_session", "session_verdict"]


def not_a_session(lines: int, malformed: int, unknown: int,
                  reasons: Iterable[tuple[int, str]] = ()) -> str | None:
    """``"not a Claude Code session: …"`` when no line of the file is a known frame.

    ``lines`` counts the non-blank lines read, ``malformed`` those that are not
    a usable frame, ``unknown`` the JSON objects of no known kind. ``reasons``:
    ``(line, reason)`` of the malformed lines (as many as are known; the others
    count as not JSON), so that JSON failing the schema (``"isMeta": null``)
    is told apart from lines that are not JSON, and the first is quoted.
    ``None`` when at least one line is a frame cctv knows (or there are no
    lines: an empty file is a session that has not started yet).
    """
    if lines <= 0 or malformed + unknown < lines:
        return None
    schema = [(n, r) for n, r in reasons if not not_json(r)]
    garbage = malformed - len(schema)
    if malformed == lines and not schema:
        return f"not a Claude Code session: {malformed:,} of {lines:,} lines are not JSON"
    if malformed == lines and not garbage:
        line, reason = schema[0]
        return (f"not a Claude Code session: {malformed:,} of {lines:,} lines are JSON that"
                f" does not fit the schema (line {line}: {reason})")
    if unknown == lines:
        return f"not a Claude Code session: {unknown:,} of {lines:,} lines are JSON of no kind cctv knows"
    counts = [(garbage, "not JSON"), (len(schema), "not fitting the schema"),
              (unknown, "of unknown kinds")]
    parts = ", ".join(f"{n:,} {what}" for n, what in counts if n)
    return f"not a Claude Code session: none of its {lines:,} lines is a frame ({parts})"


def session_verdict(session: object) -> str | None:
    """:func:`not_a_session` from a folded session's own counts (the viewer's path:
    a live fold keeps counts, not every entry)."""
    kinds = getattr(session, "kinds", {})
    lines = getattr(session, "lines", 0) - kinds.get("blank", 0)
    malformed = getattr(session, "malformed_count", kinds.get("malformed", 0))
    unknown = len(getattr(session, "unknown", ()))
    return not_a_session(lines, malformed, unknown, getattr(session, "malformed", ()))
