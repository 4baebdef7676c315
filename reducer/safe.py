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
* a byte of a file name that is not UTF-8 (Python holds it as a lone
  surrogate, U+DC80–U+DCFF: ``os.fsdecode``) becomes ``\\xff``-style, the byte
  itself; any other lone surrogate ``\\udXXX``.

Tabs are expanded, a CR before a LF is dropped; newlines are kept, or shown as
one space on a single-line field. Pure Python: the headless commands use it as
it is, the widgets through :mod:`widgets.safe_text`.
"""

from __future__ import annotations

import re

__all__ = ["visible", "is_safe", "UNSAFE"]

_BIDI = (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x2028, 0x2029)

UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff" + "".join(chr(c) for c in _BIDI)
                    + "]")
"""One character that must not reach a terminal as it is (tab and newline excepted)."""

_TABLE: dict[int, str] = {c: chr(0x2400 + c) for c in range(0x20)}
_TABLE[0x7F] = "\u2421"  # ␡
_TABLE.update({c: f"\\x{c:02x}" for c in range(0x80, 0xA0)})
_TABLE.update({c: f"\\u{c:04x}" for c in _BIDI})
del _TABLE[0x09], _TABLE[0x0A]

_ATTENTION = re.compile(UNSAFE.pattern[:-1] + "\t]")


def _stand_in(match: re.Match[str]) -> str:
    c = ord(match.group())
    if 0xD800 <= c <= 0xDFFF:  # a lone surrogate: a byte of a name that is not UTF-8
        return f"\\x{c - 0xDC00:02x}" if 0xDC80 <= c <= 0xDCFF else f"\\u{c:04x}"
    return _TABLE[c]


def is_safe(text: str) -> bool:
    """True when ``text`` holds nothing :func:`visible` would change but tabs and newlines."""
    return UNSAFE.search(text) is None


def visible(text: str | None, *, oneline: bool = False, tabs: int = 4) -> str:
    """``text`` with every control, DEL, C1, bidi character and lone surrogate
    shown as a visible stand-in (see the module docstring); tabs expanded to ``tabs`` columns,
    ``\\r\\n`` read as ``\\n``. With ``oneline`` a newline is shown as a space.

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
