"""Pretty-printed frame bytes for the raw view.

Pure functions that turn bytes into strings; they do not parse frames into
state (that is :mod:`reducer.decode` and :mod:`reducer.session`). The raw view
calls :func:`raw_view`. The number formatters are in :mod:`reducer.format`.
Nothing here imports Textual or Rich.
"""

from __future__ import annotations

from dataclasses import dataclass

import msgspec

from .decode import nesting_exceeds
from .frames import MAX_DEPTH

__all__ = [
    "PRETTY_LIMIT", "RawView", "pretty_json", "escape_bytes", "raw_view",
    "human_bytes", "compact_count", "format_duration", "format_cost", "short_path",
]

# the formatters live in reducer.format; re-exported here for older imports
from .format import compact_count, format_cost, format_duration, human_bytes, short_path  # noqa: E402

PRETTY_LIMIT = 200_000
"""Characters of pretty-printed JSON the raw view shows before it truncates."""

# C0 controls (except tab) and DEL shown as escapes, so a line can never drive the terminal.
_CONTROL_ESCAPES = {c: f"\\x{c:02x}" for c in (*range(0x00, 0x09), *range(0x0A, 0x20), 0x7F)}
_CONTROL_ESCAPES_KEEP_NL = {c: e for c, e in _CONTROL_ESCAPES.items() if c != 0x0A}


def pretty_json(raw: bytes, indent: int = 2) -> str:
    """The JSON in ``raw`` re-indented, every value byte for byte as it was
    (string escapes and number spellings are kept; nothing is decoded).

    Bytes that are not UTF-8 become U+FFFD. Raises ``msgspec.DecodeError``
    when ``raw`` is not JSON."""
    return msgspec.json.format(raw, indent=indent).decode("utf-8", "replace")


def escape_bytes(raw: bytes, *, keep_newlines: bool = False) -> str:
    """``raw`` as safe printable text: invalid UTF-8 bytes as ``\\xNN``,
    control characters (newlines too, unless ``keep_newlines``) as ``\\xNN``;
    everything else as it is."""
    table = _CONTROL_ESCAPES_KEEP_NL if keep_newlines else _CONTROL_ESCAPES
    return raw.decode("utf-8", "backslashreplace").translate(table)


@dataclass(frozen=True, slots=True)
class RawView:
    """What the raw view shows for one line."""

    text: str
    """The text to draw: pretty JSON, or the escaped bytes of a line that is not JSON."""
    is_json: bool
    """True when :attr:`text` is pretty-printed JSON (highlight it)."""
    truncated: bool
    """True when :attr:`text` is only the start of it."""
    notes: tuple[str, ...] = ()
    """One-line remarks: why the line is not JSON, invalid UTF-8, truncation."""


def _cut(data: bytes, limit: int) -> tuple[bytes, bool]:
    """The first ``limit`` bytes of ``data``, ended at a line end when one is near."""
    if len(data) <= limit:
        return data, False
    cut = data.rfind(b"\n", 0, limit)
    return data[: cut if cut > limit // 2 else limit], True


def raw_view(raw: bytes, *, reason: str | None = None, limit: int = PRETTY_LIMIT) -> RawView:
    """Pretty JSON for a line when it is JSON, else its bytes escaped; never raises.

    ``reason`` is the decoder's complaint about a malformed line, shown first.
    At most ``limit`` bytes of it are shown (pretty JSON is cut at a line end)."""
    notes: list[str] = []
    if reason:
        notes.append(f"malformed: {reason}")
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        notes.append(f"not valid UTF-8 (first bad byte at offset {exc.start}); "
                     "bad bytes shown as \\xNN")
    if not raw or raw.isspace():
        return RawView("(empty line)", False, False, tuple(notes))
    formatted = None
    if nesting_exceeds(raw):
        # msgspec's formatter recurses once per level: a deep line is shown as its bytes
        notes.append(f"nested more than {MAX_DEPTH} levels deep: shown as it was read")
    else:
        try:
            formatted = msgspec.json.format(raw, indent=2)
        except (msgspec.DecodeError, RecursionError) as exc:
            if not reason:
                notes.append(f"not JSON: {exc}")
    if formatted is not None:
        head, truncated = _cut(formatted, limit)
        text = escape_bytes(head, keep_newlines=True)
        if truncated:
            notes.append(f"truncated: showing the first {human_bytes(len(head))} "
                         f"of {human_bytes(len(formatted))} pretty-printed; "
                         "copy (y) takes the whole line")
        return RawView(text, True, truncated, tuple(notes))
    # not JSON, or not text: show the bytes themselves, safely
    head = raw[: limit]
    text = escape_bytes(head)
    truncated = len(raw) > len(head)
    if truncated:
        notes.append(f"truncated: showing the first {human_bytes(len(head))} "
                     f"of {human_bytes(len(raw))}; copy (y) takes the whole line")
    return RawView(text, False, truncated, tuple(notes))
