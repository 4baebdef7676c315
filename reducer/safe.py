"""Text from a transcript made safe to print: no byte of the input acts on a terminal.

A transcript is untrusted data. Any string read from it (a model name, a cwd,
a tool or agent name, an error, a result, a file name, a command's stderr) may
carry escape sequences that set the terminal's title (OSC 0/2), write the
clipboard (OSC 52), move the cursor, or reorder what is shown (bidi overrides).
:func:`visible` turns each such character into a visible stand-in:

* C0 controls become their Unicode control pictures (ESC → ``␛``, BEL → ``␇``),
  DEL becomes ``␡``: one cell each, so layout stays right;
* C1 controls (U+0080–U+009F) become ``\\x9b``-style escapes;
* bidi overrides, embeddings, isolates and marks, and the line and paragraph
  separators, become ``\\u202e``-style escapes;
* so do the other invisible format characters (Unicode category Cf: zero-width
  space U+200B and joiners, word joiner, soft hyphen, BOM, invisible operators,
  interlinear annotation marks, the tag characters that can spell hidden
  text…), so no name or title can look like another or hide words. A zero-width
  joiner or non-joiner between two letters or symbols of a script or emoji
  that need it (Persian, Devanagari, 👨‍👩‍👧) is kept, as are the tag
  characters of a flag (🏴 followed by tags); between Latin letters, or alone,
  it is shown;
* a byte of a file name that is not UTF-8 (Python holds it as a lone
  surrogate, U+DC80–U+DCFF: ``os.fsdecode``) becomes ``\\xff``-style, the byte
  itself; any other lone surrogate ``\\udXXX``.

Tabs are expanded, a CR before a LF is dropped; newlines are kept, or shown as
one space on a single-line field. Pure Python: the headless commands use it as
it is, the widgets through :mod:`widgets.safe_text`. :func:`escaped` writes the
same characters as ``\\x1b``-style escapes, for files (a Markdown export, the
text handed to a pager).
"""

from __future__ import annotations

import re

__all__ = ["UNSAFE", "escaped", "is_safe", "visible"]

_BIDI = (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x2028, 0x2029)

_FORMAT = ("\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b\u200e\u200f"
           "\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd"
           "\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001")
"""The format characters (Cf, Unicode 15) but the joiners and the tags, which
have their own rules below."""
_ALWAYS = "\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\u2028\u2029" + _FORMAT
_JOINABLE = f"[^\\x00-\\u02ff\\s\u200c\u200d\U000e0020-\U000e007f{_ALWAYS}]"
"""A character a joiner may join: not ASCII or Latin, not a space, control or format character."""
_TAGS = "\U000e0020-\U000e007f"

UNSAFE = re.compile(
    f"[{_ALWAYS}]"
    f"|(?<!{_JOINABLE})[\u200c\u200d]|[\u200c\u200d](?!{_JOINABLE})"
    f"|(?<![\U0001f3f4{_TAGS}])[{_TAGS}]+")
"""What must not reach a terminal as it is (tab and newline excepted): one
character, or a run of tag characters that is not a flag's."""

_TABLE: dict[int, str] = {c: chr(0x2400 + c) for c in range(0x20)}
_TABLE[0x7F] = "\u2421"  # ␡
del _TABLE[0x09], _TABLE[0x0A]

_ATTENTION = re.compile(f"[\t{_ALWAYS}\u200c\u200d{_TAGS}]")
"""Anything :func:`visible` may change: one search tells a string needs no work."""


def _escape(c: int) -> str:
    """``\\x9b``, ``\\u202e``, ``\\U000e0041``; a lone surrogate from a file name, the byte."""
    if 0xDC80 <= c <= 0xDCFF:  # a byte of a name that is not UTF-8
        return f"\\x{c - 0xDC00:02x}"
    if c < 0x100:
        return f"\\x{c:02x}"
    return f"\\u{c:04x}" if c < 0x10000 else f"\\U{c:08x}"


def _stand_in(match: re.Match[str]) -> str:
    return "".join(_TABLE.get(ord(ch)) or _escape(ord(ch)) for ch in match.group())


def _escaped(match: re.Match[str]) -> str:
    return "".join(_escape(ord(ch)) for ch in match.group())


def is_safe(text: str) -> bool:
    """True when ``text`` holds nothing :func:`visible` would change but tabs and newlines."""
    return UNSAFE.search(text) is None


def escaped(text: str) -> str:
    """``text`` with every character :func:`visible` would change (tabs and
    newlines kept) written as a ``\\x1b`` / ``\\u200b`` escape: for files, where
    the escapes are reversible and greppable."""
    return UNSAFE.sub(_escaped, text)


def visible(text: str | None, *, oneline: bool = False, tabs: int = 4) -> str:
    """``text`` with every control, DEL, C1, bidi and format character and lone
    surrogate shown as a visible stand-in (see the module docstring); tabs
    expanded to ``tabs`` columns, ``\\r\\n`` read as ``\\n``. With ``oneline`` a
    newline is shown as a space.

    One regex scan when there is nothing to change; otherwise the cost is in
    proportion to what is replaced (50 MB with one escape: about as fast as a copy)."""
    if not text:
        return ""
    if _ATTENTION.search(text) is None:
        return text.replace("\n", " ") if oneline and "\n" in text else text
    if "\r\n" in text:
        text = text.replace("\r\n", "\n")
    if "\t" in text:
        text = text.expandtabs(tabs)
    if oneline and "\n" in text:
        text = text.replace("\n", " ")
    return UNSAFE.sub(_stand_in, text)
