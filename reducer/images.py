"""Images in prompts and tool results: what they are, read from their first bytes.

An image content block carries its bytes as base64 (``source.data``). Its media
type, size and pixel dimensions are read from the header alone (PNG, GIF, WebP:
the first bytes; JPEG: the frame marker, found by decoding only as far as it) —
no image library, no full decode. :func:`image_file` decodes the whole image
when the user asks to see it, and only when its bytes are a PNG, JPEG, GIF or
WebP image: the kind, and the file's extension, come from those bytes, never
from the block's ``media_type`` (a transcript must not choose what the
desktop opens a file with).
"""

from __future__ import annotations

import base64
import binascii
import struct
from typing import Any, NamedTuple

from .format import human_bytes

__all__ = ["ImageInfo", "NotAnImage", "describe", "image_file", "image_info", "image_kind",
           "images_in"]


class ImageInfo(NamedTuple):
    media_type: str
    size: int
    """Bytes of the image (its base64 text is a third longer)."""
    width: int | None
    height: int | None
    data: str
    """The base64 text, as the block holds it (not copied)."""


def _decode(data: str, chars: int) -> bytes:
    chars -= chars % 4
    try:
        return base64.b64decode(data[:chars], validate=False)
    except (binascii.Error, ValueError):
        return b""


def _png(head: bytes) -> tuple[int, int] | None:
    if head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR":
        return struct.unpack(">II", head[16:24])
    return None


def _gif(head: bytes) -> tuple[int, int] | None:
    if head[:6] in (b"GIF87a", b"GIF89a"):
        return struct.unpack("<HH", head[6:10])
    return None


def _webp(head: bytes) -> tuple[int, int] | None:
    if head[:4] != b"RIFF" or head[8:12] != b"WEBP":
        return None
    chunk = head[12:16]
    if chunk == b"VP8X":
        return (int.from_bytes(head[24:27], "little") + 1, int.from_bytes(head[27:30], "little") + 1)
    if chunk == b"VP8L":
        bits = int.from_bytes(head[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8 ":
        w, h = struct.unpack("<HH", head[26:30])
        return w & 0x3FFF, h & 0x3FFF
    return None


def _jpeg(data: str) -> tuple[int, int] | None:
    """The size in the first SOF marker, decoding the base64 in growing pieces."""
    chars = 64 * 1024
    while True:
        head = _decode(data, chars)
        if head[:2] != b"\xff\xd8":
            return None
        i = 2
        while i + 9 <= len(head):
            if head[i] != 0xFF:
                return None
            marker = head[i + 1]
            if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
                i += 2
                continue
            length = int.from_bytes(head[i + 2:i + 4], "big")
            if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
                h, w = struct.unpack(">HH", head[i + 5:i + 9])
                return w, h
            i += 2 + length
        if chars >= len(data):
            return None
        chars *= 4


def image_info(source: Any) -> ImageInfo | None:
    """What an image block's ``source`` holds (``None`` when it holds no base64 data)."""
    if not isinstance(source, dict) or not isinstance(source.get("data"), str):
        return None
    data = source["data"]
    media = str(source.get("media_type") or "image")
    size = len(data) * 3 // 4 - data[-2:].count("=")
    head = _decode(data, 64)
    dims = _png(head) or _gif(head) or _webp(head) or (_jpeg(data) if head[:2] == b"\xff\xd8" else None)
    return ImageInfo(media, size, *(dims or (None, None)), data)


def images_in(content: Any) -> list[ImageInfo]:
    """The images of a message's or tool result's content blocks (nested ones too)."""
    out: list[ImageInfo] = []
    if not isinstance(content, list):
        return out
    for block in content:
        kind = getattr(block, "type", None) if not isinstance(block, dict) else block.get("type")
        if kind == "image":
            source = getattr(block, "source", None) if not isinstance(block, dict) else block.get("source")
            info = image_info(source)
            if info is not None:
                out.append(info)
        else:
            inner = getattr(block, "content", None) if not isinstance(block, dict) else block.get("content")
            out += images_in(inner)
    return out


class NotAnImage(ValueError):
    """Why an image block is not shown: its data is not base64, or not an image."""


def image_kind(data: bytes) -> str | None:
    """``"png"``, ``"jpeg"``, ``"gif"`` or ``"webp"`` when ``data`` starts as such
    an image does; else ``None``."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "png"
    if data.startswith(b"\xff\xd8\xff"):
        return "jpeg"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "webp"
    return None


def image_file(info: ImageInfo) -> tuple[bytes, str]:
    """The image itself and the extension its bytes call for (``png``, ``jpeg``,
    ``gif``, ``webp``). Raises :class:`NotAnImage` when the data is not base64
    or its bytes are none of those images, whatever ``media_type`` says."""
    text = "".join(info.data.split())  # base64 may come wrapped in lines
    try:
        data = base64.b64decode(text + "=" * (-len(text) % 4), validate=True)
    except (binascii.Error, ValueError) as exc:
        raise NotAnImage(f"its data is not valid base64 ({exc})") from None
    kind = image_kind(data)
    if kind is None:
        said = f" (it says {info.media_type})" if info.media_type != "image" else ""
        raise NotAnImage(f"its bytes are not a PNG, JPEG, GIF or WebP image{said}")
    return data, kind


def describe(info: ImageInfo) -> str:
    """``image/png · 1.2 MiB · 3000×2000``."""
    parts = [info.media_type, human_bytes(info.size)]
    if info.width is not None and info.height is not None:
        parts.append(f"{info.width}×{info.height}")
    return " · ".join(parts)
