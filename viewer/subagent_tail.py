"""Following the sub-agent transcripts that sit beside an on-disk session.

A session file ``<session>.jsonl`` grows sub-agent files under
``<session>/subagents/`` while it runs. :class:`SubagentTail` rescans for new
ones and follows each with a :class:`~viewer.sources.FileTail`, handing every
batch of lines to a callback with the agent id it belongs to.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from reducer.lines import RawLine

from .discovery import subagent_files
from .sources import FileTail, Lines

__all__ = ["SubagentTail", "agent_id_for"]


def agent_id_for(agent_path: Path, meta: dict[str, Any], known: dict[str, str]) -> str:
    """The agent id (spawning tool_use id) a sub-agent file's rows belong to."""
    tool_use_id = meta.get("toolUseId")
    if isinstance(tool_use_id, str) and tool_use_id:
        return tool_use_id
    file_id = agent_path.stem.removeprefix("agent-")
    return known.get(file_id, "agent-" + file_id)


class SubagentTail:
    """Follow every sub-agent file of one session, new ones included."""

    def __init__(self, session_path: Path, on_lines: Callable[[str, Path, list[RawLine]], None],
                 known_agents: Callable[[], dict[str, str]], *, follow: bool = True,
                 rescan_s: float = 1.0) -> None:
        self.session_path = session_path
        self.on_lines = on_lines
        self.known_agents = known_agents
        self.follow = follow
        self.rescan_s = rescan_s
        self._tasks: dict[Path, asyncio.Task[None]] = {}
        self._stopped = asyncio.Event()

    async def run(self) -> None:
        """Scan, follow, rescan until :meth:`stop` (or once, when not following)."""
        try:
            while not self._stopped.is_set():
                for path, meta in subagent_files(self.session_path):
                    if path not in self._tasks:
                        agent = agent_id_for(path, meta, self.known_agents())
                        self._tasks[path] = asyncio.create_task(self._follow(path, agent))
                if not self.follow:
                    await asyncio.gather(*self._tasks.values(), return_exceptions=True)
                    return
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self._stopped.wait(), self.rescan_s)
        finally:
            for task in self._tasks.values():
                task.cancel()

    async def _follow(self, path: Path, agent: str) -> None:
        tail = FileTail(path, follow=self.follow, poll_timeout_ms=1000)
        async with contextlib.aclosing(tail.events()) as events:
            async for event in events:
                if isinstance(event, Lines):
                    self.on_lines(agent, path, event.lines)

    async def stop(self) -> None:
        self._stopped.set()
