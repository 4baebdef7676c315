"""Decoding lines into frames, never raising.

:func:`decode_line` turns one line into a :class:`~reducer.frames.Frame`, an
:class:`~reducer.frames.Unknown` (valid JSON, unknown ``type`` or subtype), a
:class:`~reducer.frames.Malformed` (with a one-line reason) or a
:class:`~reducer.frames.Blank`. :func:`extras` and :func:`reencode` show that
nothing was lost.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, Literal

import msgspec

from .frames import (
    MAX_DEPTH,
    SYSTEM_SUBTYPES,
    TOOL_INPUT_SHAPES,
    TOP_LEVEL,
    Assistant,
    Blank,
    Entry,
    Malformed,
    SystemOther,
    System,
    Unknown,
    dec_hook,
)
from .lines import LineSplitter, RawLine

__all__ = [
    "decode_line", "decode_lines", "decode_bytes", "detect_format", "extras", "reencode",
    "Format", "MAX_LINE_BYTES", "nesting_exceeds", "not_json",
]

Format = Literal["stream-json", "transcript", "unknown"]

MAX_LINE_BYTES = 64 * 1024 * 1024
"""Lines longer than this are reported as malformed instead of decoded."""

_NOT_JSON = ("invalid JSON", "not UTF-8", "line too long")
"""How the reasons of the lines that are not (or were not read as) JSON begin;
every other malformed line is JSON that does not fit the schema."""


def not_json(reason: str) -> bool:
    """A malformed line's ``reason`` says it is not JSON (rather than JSON that
    does not fit the schema, as ``user: Expected `bool`, got `null```)."""
    return reason.startswith(_NOT_JSON)

def _make_union() -> Any:
    union: Any = TOP_LEVEL[0]
    for cls in TOP_LEVEL[1:]:
        union = union | cls
    return union


_FRAME_DECODER = msgspec.json.Decoder(_make_union(), dec_hook=dec_hook)
_SYSTEM_DECODERS = {name: msgspec.json.Decoder(cls, dec_hook=dec_hook) for name, cls in SYSTEM_SUBTYPES.items()}
_OTHER_SYSTEM_DECODER = msgspec.json.Decoder(SystemOther, dec_hook=dec_hook)


class _Envelope(msgspec.Struct, gc=False):
    type: Any = None
    subtype: Any = None


_ENVELOPE_DECODER = msgspec.json.Decoder(_Envelope)
_ANY_DECODER = msgspec.json.Decoder()


def decode_line(data: bytes, line_no: int = 0, offset: int = 0, keep_raw: bool = True) -> Entry:
    """Decode one line (without its newline). Never raises.

    The entry keeps ``data`` as its ``raw`` unless ``keep_raw`` is false (a
    reader that can read the line again from its offset)."""
    try:
        if len(data) <= MAX_LINE_BYTES and data.isascii():  # nearly every line
            entry = _decode_frame(data)
        else:
            entry = _refused(data) or _decode_frame(data)
    except RecursionError:  # msgspec's own limit, far past MAX_DEPTH
        entry = Malformed(reason=f"nested too deep (more than {MAX_DEPTH} levels)")
    except Exception as exc:  # pragma: no cover - defensive: msgspec should not raise others
        entry = Malformed(reason=f"decoder error: {exc}")
    entry.line_no = line_no
    entry.offset = offset
    if keep_raw:
        entry.raw = data
    return entry


# --- system/init: its big lists decoded once per distinct value -----------------------
#
# The CLI repeats system/init at every query, and nearly all of it is a few
# lists (tools, slash commands, agents, MCP servers: thousands of strings) that
# do not change. An init is decoded with a twin Struct whose list fields are
# msgspec.Raw (skipped, not built), and each list is decoded from its bytes
# once and then shared by every init with the same bytes. The result is the
# Init the plain decode gives (same fields, same values: the same typed decoder
# reads the same bytes); on any error the plain decode runs, so errors and
# malformed reasons are unchanged.

_INIT = SYSTEM_SUBTYPES.get("init")
_INIT_LISTS = tuple(n for n in ("tools", "slash_commands", "agents", "mcp_servers")
                    if _INIT is not None and n in _INIT.__struct_fields__)
_INIT_CACHE_MAX = 512


def _init_twin() -> Any:
    fields: list[tuple[str, Any, Any]] = []
    for f in msgspec.structs.fields(_INIT):
        if f.name in _INIT_LISTS:
            fields.append((f.name, msgspec.Raw, msgspec.field(default=msgspec.Raw(), name=f.encode_name)))
        elif f.default_factory is not msgspec.NODEFAULT:
            fields.append((f.name, f.type, msgspec.field(default_factory=f.default_factory,
                                                         name=f.encode_name)))
        elif f.default is not msgspec.NODEFAULT:
            fields.append((f.name, f.type, msgspec.field(default=f.default, name=f.encode_name)))
        else:
            fields.append((f.name, f.type, msgspec.field(name=f.encode_name)))
    config = _INIT.__struct_config__
    return msgspec.defstruct("_InitTwin", fields, tag=config.tag, tag_field=config.tag_field,
                             forbid_unknown_fields=config.forbid_unknown_fields,
                             kw_only=True, gc=False)


if _INIT_LISTS:
    _INIT_TWIN_DECODER = msgspec.json.Decoder(_init_twin(), dec_hook=dec_hook)
    _INIT_LIST_DECODERS = {f.name: msgspec.json.Decoder(f.type, dec_hook=dec_hook)
                           for f in msgspec.structs.fields(_INIT) if f.name in _INIT_LISTS}
_INIT_LIST_CACHE: dict[tuple[str, bytes], Any] = {}


def _decode_init(data: bytes) -> Entry | None:
    """The Init of ``data`` with shared lists, or None to decode it the plain way."""
    try:
        twin = _INIT_TWIN_DECODER.decode(data)
    except msgspec.MsgspecError:
        return None
    if twin.subtype != "init":
        return None
    fields = msgspec.structs.asdict(twin)
    cache = _INIT_LIST_CACHE
    for name in _INIT_LISTS:
        raw = fields.pop(name)
        if not raw:
            continue  # absent: the Init's own default
        key = (name, bytes(raw))
        value = cache.get(key)
        if value is None:
            try:
                value = _INIT_LIST_DECODERS[name].decode(raw)
            except msgspec.MsgspecError:
                return None
            if len(cache) >= _INIT_CACHE_MAX:
                cache.clear()
            cache[key] = value
        fields[name] = value
    return _INIT(**fields)


_SYSTEM_HEAD = b'{"type":"system","subtype":"'
_SYSTEM_HEAD_LEN = len(_SYSTEM_HEAD)
_SYSTEM_BY_HEAD = {name.encode(): (name, dec) for name, dec in _SYSTEM_DECODERS.items()}


def _refused(data: bytes) -> Malformed | None:
    """Why a line is not decoded at all (too long, or not UTF-8), else None."""
    if len(data) > MAX_LINE_BYTES:
        return Malformed(reason=f"line too long ({len(data):,} bytes; limit {MAX_LINE_BYTES:,})")
    if not data.isascii():
        # msgspec checks UTF-8 only in the strings it decodes, not in skipped
        # fields or Raw ones; a line is JSON only if all of it is UTF-8
        return _not_utf8(data)
    return None


def _not_utf8(data: bytes) -> Malformed | None:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Malformed(reason=f"not UTF-8: invalid byte at column {exc.start + 1}")
    return None


def _check_tool_inputs(entry: Assistant) -> Entry:
    """The frame, or a Malformed one when a sub-agent call's input has a key of the wrong type."""
    for i, block in enumerate(entry.message.content):
        shape = TOOL_INPUT_SHAPES.get(block.name) if block.name else None
        if shape is not None and block.input is not None:
            try:
                msgspec.convert(block.input, shape)
            except msgspec.ValidationError as exc:
                message = str(exc).replace("`$", f"`$.message.content[{i}].input", 1)
                return Malformed(reason=f"{entry.kind_key}: {message}")
    return entry


def _decode_frame(data: bytes) -> Entry:
    if data.startswith(_SYSTEM_HEAD):
        # The CLI writes system frames as {"type":"system","subtype":"<name>",…}:
        # decode them once, with their subtype's Struct, instead of as System
        # and then again. Only a clean success is taken (the decoded subtype
        # must be the one read here); anything else goes the general way
        # below, which gives the same frame or the same error as before.
        end = data.find(b'"', _SYSTEM_HEAD_LEN)
        hit = _SYSTEM_BY_HEAD.get(data[_SYSTEM_HEAD_LEN:end])
        if hit is not None and hit[0] == "init" and _INIT_LISTS:
            init = _decode_init(data)
            if init is not None:
                return init
        elif hit is not None:
            try:
                frame = hit[1].decode(data)
            except msgspec.MsgspecError:
                pass
            else:
                if frame.subtype == hit[0]:
                    return frame
    try:
        frame = _FRAME_DECODER.decode(data)
    except msgspec.ValidationError as exc:
        return _fallback(data, exc)
    except msgspec.DecodeError as exc:
        return _bad_json(data, exc)
    if type(frame) is Assistant:
        return _check_tool_inputs(frame)
    if type(frame) is System:
        decoder = _SYSTEM_DECODERS.get(frame.subtype)
        if decoder is None:
            return _OTHER_SYSTEM_DECODER.decode(data)
        try:
            return decoder.decode(data)
        except msgspec.ValidationError as exc:
            return Malformed(reason=f"system/{frame.subtype}: {exc}")
    return frame


def _bad_json(data: bytes, exc: Exception) -> Entry:
    if not data.strip():
        return Blank()
    bad = _not_utf8(data)
    if bad is not None:
        return bad
    text = str(exc)
    if "truncated" in text:
        return Malformed(reason="invalid JSON: truncated (line ends mid-value)")
    return Malformed(reason=f"invalid JSON: {text}")


def _fallback(data: bytes, exc: msgspec.ValidationError) -> Entry:
    """The union rejected the object: an unknown kind, or a known kind with bad fields."""
    try:
        env = _ENVELOPE_DECODER.decode(data)
    except msgspec.ValidationError:
        # valid JSON but not an object
        try:
            value = _ANY_DECODER.decode(data)
        except msgspec.DecodeError as exc2:  # pragma: no cover
            return Malformed(reason=f"invalid JSON: {exc2}")
        return Malformed(reason=f"not a JSON object (a {type(value).__name__})")
    except msgspec.DecodeError as exc2:
        return _bad_json(data, exc2)
    kind = env.type
    if kind is None:
        return Malformed(reason="object has no \"type\" field")
    if not isinstance(kind, str):
        return Malformed(reason=f"\"type\" is not a string ({kind!r})")
    message = str(exc)
    if message.startswith("Invalid value") and message.endswith("at `$.type`"):
        subtype = env.subtype if isinstance(env.subtype, str) else None
        return Unknown(type=kind, subtype=subtype)
    return Malformed(reason=f"{kind}: {message}")


_STRUCTURE = bytes.maketrans(b"[{]}", b"(())")
_NOT_STRUCTURE = bytes(b for b in range(256) if b not in b"[]{}")


def nesting_exceeds(data: bytes, limit: int = MAX_DEPTH) -> bool:
    """Whether the JSON in ``data`` nests more than ``limit`` arrays/objects deep
    (brackets inside strings do not count; a line cut short counts its open
    brackets). No recursion and no Python loop over the bytes: what the raw
    view and ``cctv check`` ask before walking a whole line."""
    if data.count(b"[") + data.count(b"{") <= limit:
        return False
    if b"\\" in data:
        data = data.replace(b"\\\\", b"").replace(b'\\"', b"")
    outside = b"".join(data.split(b'"')[::2])  # the even pieces are outside strings
    shape = outside.translate(_STRUCTURE, _NOT_STRUCTURE)
    depth = 0
    while shape and depth <= limit:
        inner = shape.replace(b"()", b"")  # one level of innermost pairs
        if len(inner) == len(shape):
            return depth + shape.count(b"(") > limit  # unbalanced: count what stays open
        shape = inner
        depth += 1
    return depth > limit


def decode_lines(lines: Iterable[RawLine]) -> Iterator[Entry]:
    """Decode numbered lines in order."""
    for line in lines:
        yield decode_line(line.data, line.line_no, line.offset)


def decode_bytes(data: bytes, *, final: bool = True) -> list[Entry]:
    """Decode a whole buffer (a file's bytes); a last line without newline is
    decoded too when ``final`` (an ended stream), else dropped."""
    splitter = LineSplitter()
    entries = [decode_line(ln.data, ln.line_no, ln.offset) for ln in splitter.feed(data)]
    if final:
        last = splitter.flush()
        if last is not None:
            entries.append(decode_line(last.data, last.line_no, last.offset))
    return entries


_TRANSCRIPT_HINTS = (b'"parentUuid"', b'"sessionId"', b'"isSidechain"', b'"leafUuid"',
                     b'"type":"queue-operation"', b'"type":"file-history-snapshot"',
                     b'"type":"custom-title"', b'"type":"ai-title"', b'"type":"summary"')
_STREAM_HINTS = (b'"session_id"', b'"type":"result"', b'"type":"stream_event"',
                 b'"type":"control_request"', b'"type":"control_response"',
                 b'"type":"rate_limit_event"', b'"parent_tool_use_id"')


def detect_format(lines: Iterable[bytes], limit: int = 50) -> Format:
    """Tell stream-json from on-disk transcript by content (first ``limit`` lines)."""
    transcript = stream = 0
    for i, line in enumerate(lines):
        if i >= limit:
            break
        head = line[:4096]
        if any(h in head for h in _TRANSCRIPT_HINTS):
            transcript += 1
        elif any(h in head for h in _STREAM_HINTS):
            stream += 1
    if transcript == stream == 0:
        return "unknown"
    return "transcript" if transcript > stream else "stream-json"


# --- losslessness ------------------------------------------------------------------------


def _original(entry: Entry) -> Any:
    return _ANY_DECODER.decode(entry.raw)


def _modelled(entry: Entry) -> Any:
    out = msgspec.to_builtins(entry, enc_hook=_enc_raw)
    if isinstance(out, dict):
        for key in [k for k in out if k.startswith("@cctv:")]:
            del out[key]
    return out


def _enc_raw(obj: Any) -> Any:
    if isinstance(obj, msgspec.Raw):
        return _ANY_DECODER.decode(obj) if len(obj) else None
    raise NotImplementedError


def _merge(modelled: Any, original: Any) -> Any:
    """The original value with every modelled part taken from the decoded frame."""
    if isinstance(original, dict) and isinstance(modelled, dict):
        return {k: (_merge(modelled[k], v) if k in modelled else v) for k, v in original.items()}
    if isinstance(original, list) and isinstance(modelled, list) and len(original) == len(modelled):
        return [_merge(m, o) for m, o in zip(modelled, original)]
    return modelled


def _extras(modelled: Any, original: Any) -> Any:
    if isinstance(original, dict) and isinstance(modelled, dict):
        out = {}
        for k, v in original.items():
            if k not in modelled:
                out[k] = v
            else:
                sub = _extras(modelled[k], v)
                if sub:
                    out[k] = sub
        return out
    return None


def extras(entry: Entry) -> dict[str, Any]:
    """The fields of the frame that cctv does not model, kept verbatim.

    Nested objects appear with only their unmodelled keys."""
    if entry.kind in ("malformed", "blank"):
        return {}
    original = _original(entry)
    if not isinstance(original, dict):
        return {}
    if isinstance(entry, Unknown):
        return original
    return _extras(_modelled(entry), original) or {}


def reencode(entry: Entry) -> bytes:
    """Encode the frame from its typed fields plus :func:`extras`.

    For a lossless decode, ``decode(reencode(f)) == decode(f.raw)``; with the
    CLI's compact JSON the bytes are identical too."""
    if entry.kind in ("malformed", "blank"):
        return entry.raw
    original = _original(entry)
    if isinstance(entry, Unknown):
        return msgspec.json.encode(original)
    return msgspec.json.encode(_merge(_modelled(entry), original))

