"""Values as the fold keeps them: text out of message content, any value as
text, and the one shared copy of a short string."""

from __future__ import annotations

from sys import intern
from typing import Any

import msgspec

from .. import frames as F

__all__ = ["as_text", "block_text", "word"]


def word(value: Any) -> Any:
    """A string of a few distinct values (a hook's name, a tool's name, a
    status) as the one shared copy of it: a decoded frame makes a new string
    each time, and a big session holds ~100k of them (memory, and the objects
    a replay's restore rebuilds). Anything else as it is."""
    return intern(value) if type(value) is str else value


def block_text(content: Any) -> str:
    """Plain text of a message or tool_result ``content`` (a string or blocks)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content:
        if isinstance(block, F.Block):
            if block.text is not None:
                parts.append(block.text)
            elif block.type == "image":
                parts.append("[image]")
            elif block.type == "document":
                parts.append("[document]")
            elif block.content is not None:
                parts.append(block_text(block.content))
        elif isinstance(block, dict):
            parts.append(str(block.get("text", "")))
    return "\n".join(parts)


def as_text(value: Any) -> str:
    """A value shown as text: strings as they are, anything else as JSON."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    try:
        return msgspec.json.encode(value).decode()
    except Exception:
        return str(value)
