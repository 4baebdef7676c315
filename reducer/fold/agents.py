"""Which files beside a session are its sub-agents' transcripts.

The CLI writes some ``agent-*.jsonl`` files that are not sub-agents: the
compaction agent's (``agent-acompact-*``) and the warm-up agent's (a one-line
``"Warmup"`` prompt sent to prime the cache, CLI 2.0.x). Neither was started
by an Agent/Task call, so neither is a sub-agent, and neither ever "runs".
"""

from __future__ import annotations

import re

__all__ = ["not_a_subagent"]

_WARMUP = re.compile(rb'"content"\s*:\s*"Warmup"')


def not_a_subagent(file_name: str, head: bytes) -> str | None:
    """Why the file ``file_name`` (whose first bytes are ``head``) is not a
    sub-agent transcript: ``"compaction"`` or ``"warm-up"``; ``None`` if it is one."""
    if file_name.startswith("agent-acompact"):
        return "compaction"
    first = head.split(b"\n", 1)[0]
    if b'"type":"user"' in first.replace(b" ", b"") and _WARMUP.search(first):
        return "warm-up"
    return None
