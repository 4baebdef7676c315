"""The roles of searchable texts: what a search hit is (``cctv search --role``,
``role:`` in the browser's search box). Its own module, with nothing else,
so the browser's first screen reads them without the fold. Pure."""

from __future__ import annotations

from typing import Literal, get_args

__all__ = ["Role", "ROLES"]

Role = Literal["user", "assistant", "thinking", "tool_use", "tool_result", "hook", "notice",
               "compaction"]
"""What a searchable text is: a prompt, a reply, thinking, a tool's input, its
result, a hook's output (or a stop-hook summary), a notice, a compaction summary."""
ROLES: tuple[Role, ...] = get_args(Role)
