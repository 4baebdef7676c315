"""Decoding a giant line without holding its bytes and its text at once.

A line of tens of MB is nearly always one giant JSON string (a tool's output, a
base64 image, a pasted prompt) inside a small frame. Decoded the plain way,
the line's bytes and the decoded string are both whole in memory for a moment:
twice the line. Here the line is split instead:

* :func:`long_strings` finds the string values of at least ``min_len`` bytes
  (by ``bytes.find``, not a regex: a few calls per string);
* :func:`skeleton` is the line with each of them replaced by a short
  placeholder: a :class:`GiantLine` (``bytes``), which decodes the plain way;
* :func:`read_string` decodes one string's JSON read through a
  ``readinto(offset, view)`` callback a piece at a time, growing the ``str`` in
  place, so only the text and one piece are ever in memory (the caller reads
  the bytes again from its file once it has dropped the line: :func:`plan`,
  then :func:`complete`, which checks they are the same bytes);
* :func:`fill` puts the decoded strings back into the decoded entry
  (``GiantLine.strings``: placeholder → text), before it is folded.

The result is the entry the plain decode gives (tests compare both). Pure: no
I/O here, the caller passes ``readinto``.
"""

from __future__ import annotations

import secrets
import zlib
from collections.abc import Callable, Iterator

import msgspec

__all__ = ["GiantLine", "plan", "complete", "long_strings", "skeleton", "read_string", "fill", "Span", "Plan", "ReadInto", "memory_reader", "string_pieces", "in_raw_fields",
           "MAX_QUOTES", "PIECE"]

Span = tuple[int, int]
"""The bytes of a string's JSON content: ``line[start:end]``, without its quotes."""

MAX_QUOTES = 100_000
"""More quote characters than this (a frame of many small strings, or JSON in a
string, all ``\\"``): not split, it decodes the plain way."""

PIECE = 1 << 20
"""Bytes of JSON string decoded at a time."""

_NONCE = secrets.token_hex(8)
_STR = msgspec.json.Decoder(str)
_BACKSLASH = 0x5C
_WS = b" \t\r\n"
_HIGH = (b"d8", b"d9", b"da", b"db")


class GiantLine(bytes):
    """The skeleton of a giant line: its bytes with each long string replaced by
    a placeholder, and ``strings``, the decoded text of each placeholder."""

    strings: dict[str, str]
    """A placeholder's decoded text; or, for a string inside a ``Raw`` field
    (JSON the decoder keeps undecoded), its JSON token, quotes and all, as ``bytes``."""
    size: int
    """The length of the line this is the skeleton of."""


_MARK = f"cctv-giant-{_NONCE}-".encode()


def placeholder(n: int) -> str:
    """The text standing for the ``n``-th long string of a line."""
    return f"\x00cctv-giant-{_NONCE}-{n}\x00"


def _escaped(line: bytes | bytearray, at: int, start: int) -> bool:
    """Whether the quote at ``at`` is preceded by an odd run of backslashes."""
    n = 0
    i = at - 1
    while i >= start and line[i] == _BACKSLASH:
        n += 1
        i -= 1
    return n % 2 == 1


def long_strings(line: bytes | bytearray, min_len: int) -> list[Span] | None:
    """The content spans of the string *values* of at least ``min_len`` bytes
    (keys are left alone), or None when the line is not worth splitting (more
    than :data:`MAX_QUOTES` quotes) or is not well-formed enough to tell."""
    spans: list[Span] = []
    find = line.find
    quotes = 0
    pos = 0
    end = len(line)
    while True:
        opening = find(b'"', pos)
        if opening < 0:
            return spans
        start = opening + 1
        close = find(b'"', start)
        quotes += 2
        while close >= 0 and _escaped(line, close, start):
            close = find(b'"', close + 1)
            quotes += 1
            if quotes > MAX_QUOTES:
                return None
        if close < 0 or quotes > MAX_QUOTES:
            return None
        pos = close + 1
        if close - start >= min_len:
            after = pos
            while after < end and line[after] in _WS:
                after += 1
            if after < end and line[after] == 0x3A:  # ':' a key
                continue
            spans.append((start, close))


def skeleton(line: bytes | bytearray, spans: list[Span]) -> GiantLine:
    """``line`` with the content of each span replaced by its placeholder
    (``strings`` still empty: :func:`read_string` fills it)."""
    parts: list[bytes] = []
    pos = 0
    for n, (start, end) in enumerate(spans):
        parts.append(bytes(line[pos:start]))
        parts.append(msgspec.json.encode(placeholder(n))[1:-1])
        pos = end
    parts.append(bytes(line[pos:]))
    out = GiantLine(b"".join(parts))
    out.strings = {}
    out.size = len(line)
    return out


def _safe_cut(buf: bytearray, start: int, cut: int) -> int:
    """Where the JSON string content ``buf[start:cut]`` can end, for its rest to
    go with the next piece: not inside a UTF-8 sequence nor an escape
    (``\\n``, ``\\u00e9``, a ``\\ud83d\\ude00`` pair)."""
    lead = cut - 1
    while lead >= start and 0x80 <= buf[lead] < 0xC0 and cut - lead < 4:
        lead -= 1
    if lead >= start and buf[lead] >= 0xC0:
        need = 2 if buf[lead] < 0xE0 else 3 if buf[lead] < 0xF0 else 4
        if lead + need > cut:
            cut = lead
    while True:
        back = buf.rfind(b"\\", max(start, cut - 6), cut)
        if back < 0:
            return cut
        run = back
        while run > start and buf[run - 1] == _BACKSLASH:
            run -= 1
        if (back - run) % 2:
            return cut  # the second half of an escaped backslash
        is_u = buf[back + 1:back + 2] == b"u"
        if back + (6 if is_u else 2) > cut or (
                is_u and back + 6 == cut and buf[back + 2:back + 4].lower() in _HIGH):
            cut = back  # an escape cut in two, or a high surrogate without its low one
            continue
        return cut


ReadInto = Callable[[int, memoryview], int]
"""``readinto(offset, view)``: fill ``view`` with the line's bytes at ``offset``; how many."""


def string_pieces(readinto: ReadInto, start: int, end: int, piece: int = PIECE,
                  check: Callable[[memoryview], None] | None = None) -> Iterator[str]:
    """The decoded text of the JSON string content at ``[start, end)`` of a
    line, a piece at a time, read through ``readinto`` into one buffer (each
    piece of bytes is passed to ``check`` too). Raises ``msgspec.DecodeError``
    (bad escape, bad UTF-8) or ``ValueError`` (a short read: the line changed)."""
    buf = bytearray(piece + 16)
    carry = b""
    for pos in range(start, end, piece):
        size = min(piece, end - pos)
        held = len(carry)
        if held + size + 2 > len(buf):
            buf = bytearray(held + size + 2)  # a carry longer than usual (tiny pieces)
        buf[0] = 0x22  # the opening quote
        buf[1:1 + held] = carry
        stop = 1 + held + size
        with memoryview(buf) as view:
            if readinto(pos, view[1 + held:stop]) != size:
                raise ValueError("the line changed while it was read")
            if check is not None:
                check(view[1 + held:stop])
        cut = stop if pos + size >= end else _safe_cut(buf, 1, stop)
        carry = bytes(buf[cut:stop])
        buf[cut] = 0x22  # the closing quote
        with memoryview(buf) as view:
            text = _STR.decode(view[:cut + 1])
        yield text


def read_string(readinto: ReadInto, start: int, end: int, piece: int = PIECE,
                check: Callable[[memoryview], None] | None = None) -> str:
    """The whole text of :func:`string_pieces`, in one ``str``.

    The text grows in place (CPython appends to a ``str`` nothing else refers
    to without copying it; 3.11+ does so in a quickened ``for`` loop, hence the
    loop's shape and :func:`_warm_up`), so the text and one piece are all that
    is in memory, never the text twice."""
    text = ""
    for part in string_pieces(readinto, start, end, piece, check):
        text += part
    return text


def memory_reader(data: bytes | bytearray) -> ReadInto:
    """A ``readinto`` over bytes in memory (tests, and a line kept whole)."""
    def readinto(offset: int, view: memoryview) -> int:
        got = data[offset:offset + len(view)]
        view[:len(got)] = got
        return len(got)
    return readinto


def _warm_up() -> None:
    """Run :func:`read_string` once on a small string, so that its loop is
    quickened (appending in place) before it meets a giant one."""
    text = read_string(memory_reader(b"x" * 64), 0, 64, piece=1)
    assert text == "x" * 64


_warm_up()


def fill(value: object, strings: dict[str, str | bytes]) -> object:
    """``value`` (a decoded entry, or anything in it) with each placeholder
    string replaced by its text, in place where it can be; returns the value."""
    if type(value) is str:
        return strings.get(value, value)
    if isinstance(value, msgspec.Struct):
        for name in value.__struct_fields__:
            item = getattr(value, name)
            if item is None or type(item) in (int, float, bool, bytes):
                continue
            new = fill(item, strings)
            if new is not item:
                setattr(value, name, new)
        return value
    if type(value) is list:
        for i, item in enumerate(value):
            new = fill(item, strings)
            if new is not item:
                value[i] = new
        return value
    if type(value) is dict:
        for key, item in value.items():
            new = fill(item, strings)
            if new is not item:
                value[key] = new
        return value
    if type(value) is tuple:
        return tuple(fill(item, strings) for item in value)
    if type(value) is msgspec.Raw and len(value):
        return _fill_raw(value, strings)
    return value


def _fill_raw(raw: msgspec.Raw, strings: dict[str, str | bytes]) -> msgspec.Raw:
    """A ``Raw`` field with each placeholder token it holds replaced by the
    string's own JSON token, byte for byte (:func:`complete` read it)."""
    data = bytes(raw)
    if _MARK not in data:
        return raw
    for key, value in strings.items():
        token = msgspec.json.encode(key)
        if token in data:
            original = value if type(value) is bytes else msgspec.json.encode(value)
            data = original if data == token else data.replace(token, original)
    return msgspec.Raw(data)


def in_raw_fields(entry: object, count: int) -> set[int]:
    """Which of a skeleton's ``count`` placeholders its decoded ``entry`` holds
    inside ``Raw`` fields (their JSON, not their text, is wanted)."""
    found: set[int] = set()

    def walk(value: object) -> None:
        if type(value) is msgspec.Raw:
            if len(value) and _MARK in bytes(value):
                data = bytes(value)
                found.update(n for n in range(count) if msgspec.json.encode(placeholder(n)) in data)
        elif isinstance(value, msgspec.Struct):
            for name in value.__struct_fields__:
                walk(getattr(value, name))
        elif type(value) in (list, tuple):
            for item in value:  # type: ignore[attr-defined]
                walk(item)
        elif type(value) is dict:
            for item in value.values():  # type: ignore[attr-defined]
                walk(item)

    walk(entry)
    return found


Plan = tuple[GiantLine, list[Span], list[int]]
"""A giant line split: its skeleton, its long strings' spans and their Adler-32 sums."""


def plan(line: bytes | bytearray, min_len: int) -> Plan | None:
    """Split ``line`` if it has string values of at least ``min_len`` bytes;
    None to decode it the plain way. The caller may drop ``line`` after this
    and read the strings from its file with :func:`complete`."""
    spans = long_strings(line, min_len)
    if not spans:
        return None
    with memoryview(line) as view:
        sums = [zlib.adler32(view[start:end]) for start, end in spans]
    return skeleton(line, spans), spans, sums


def complete(planned: Plan, readinto: ReadInto, as_json: set[int] = frozenset()) -> GiantLine:  # type: ignore[assignment]
    """The skeleton of ``planned`` with its strings decoded from ``readinto``
    (offsets in the line), those in ``as_json`` (:func:`in_raw_fields`) kept
    as their JSON bytes. Raises ``ValueError`` when the bytes read are not
    the ones planned (the file changed), ``msgspec.DecodeError`` on a bad string."""
    skel, spans, sums = planned
    for n, (start, end) in enumerate(spans):
        if n in as_json:
            token = bytearray(end - start + 2)
            with memoryview(token) as view:
                if readinto(start - 1, view) != len(token) or \
                        zlib.adler32(view[1:-1]) != sums[n]:
                    raise ValueError("the line changed while it was read")
            skel.strings[placeholder(n)] = bytes(token)
            continue
        total = 1

        def check(view: memoryview) -> None:
            nonlocal total
            total = zlib.adler32(view, total)

        text = read_string(readinto, start, end, check=check)
        if total != sums[n]:
            raise ValueError("the line changed while it was read")
        skel.strings[placeholder(n)] = text
    return skel
