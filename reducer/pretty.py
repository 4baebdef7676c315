"""Pretty-printed frame bytes for the raw view.

Pure functions that turn bytes into strings; they do not parse frames into
state (that is :mod:`reducer.decode` and :mod:`reducer.fold`). The raw view
calls :func:`raw_view`. The number formatters are in :mod:`reducer.format`.
Nothing here imports Textual or Rich.
"""

from __future__ import annotations

from dataclasses import dataclass

import msgspec

from .decode import nesting_exceeds
from .format import human_bytes
from .frames import MAX_DEPTH

__all__ = [
    "PRETTY_LIMIT", "RawView", "pretty_json", "escape_bytes", "raw_view",
]

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


_OPEN = frozenset(b"{[")
_CLOSE = frozenset(b"}]")
_SPACE = frozenset(b" \t\r\n")


def pretty_head(raw: bytes, limit: int) -> bytes | None:
    """The first ``limit`` bytes or so of ``msgspec.json.format(raw, indent=2)``,
    made from the start of ``raw`` only (a giant line is not formatted whole:
    that took its size twice over, and seconds). None when the start is not
    JSON as far as it goes, or nests deeper than :data:`MAX_DEPTH`."""
    out = bytearray()
    depth = 0
    i = 0
    end = len(raw)
    while i < end and len(out) < limit:
        c = raw[i]
        if c == 0x22:  # a string, byte for byte, to its closing quote
            j = i + 1
            while True:
                j = raw.find(b'"', j)
                if j < 0:
                    j = end - 1
                    break
                k = j - 1
                while raw[k] == 0x5C:
                    k -= 1
                if (j - 1 - k) % 2 == 0:
                    break
                j += 1
            out += raw[i:min(j + 1, i + limit)]
            i = j + 1
            continue
        i += 1
        if c in _SPACE:
            continue
        if c in _OPEN:
            k = i
            while k < end and raw[k] in _SPACE:
                k += 1
            if k < end and raw[k] in _CLOSE:
                out += bytes((c, raw[k]))  # {} or []
                i = k + 1
                continue
            depth += 1
            if depth > MAX_DEPTH:
                return None
            out.append(c)
            out += b"\n" + b"  " * depth
        elif c in _CLOSE:
            depth -= 1
            out += b"\n" + b"  " * depth
            out.append(c)
        elif c == 0x2C:  # ,
            out += b",\n" + b"  " * depth
        elif c == 0x3A:  # :
            out += b": "
        elif c in b"-+.0123456789eEtruefalsn":
            out.append(c)
        else:
            return None
    return bytes(out)


HEAD_ONLY = 1 << 20
"""A line longer than this is shown from a head pretty-printed from its start
(:func:`pretty_head`), not formatted whole."""


def _giant_view(raw: bytes, notes: list[str], limit: int, size: int) -> RawView | None:
    """The view of a line over :data:`HEAD_ONLY`: a pretty head, or its first bytes."""
    start = raw[:limit * 4]
    try:
        start.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.end < len(start) - 3 or exc.reason != "unexpected end of data":
            notes.append(f"not valid UTF-8 (first bad byte at offset {exc.start}); "
                         "bad bytes shown as \\xNN")
    formatted = pretty_head(start, limit)
    if formatted is None:
        return None
    head, _ = _cut(formatted, limit)
    notes.append(f"truncated: showing the first {human_bytes(len(head))} pretty-printed "
                 f"of a {human_bytes(size)} line; copy (y) takes the whole line")
    return RawView(escape_bytes(head, keep_newlines=True), True, True, tuple(notes))


def raw_view(raw: bytes, *, reason: str | None = None, limit: int = PRETTY_LIMIT,
             size: int | None = None) -> RawView:
    """Pretty JSON for a line when it is JSON, else its bytes escaped; never raises.

    ``reason`` is the decoder's complaint about a malformed line, shown first.
    At most ``limit`` bytes of it are shown (pretty JSON is cut at a line end);
    of a line over :data:`HEAD_ONLY` only the start is read. ``size`` is the
    line's length when ``raw`` is only its start."""
    notes: list[str] = []
    size = len(raw) if size is None else size
    if size > HEAD_ONLY and not reason and limit < HEAD_ONLY:
        view = _giant_view(raw, notes, limit, size)
        if view is not None:
            return view
        notes = []
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
