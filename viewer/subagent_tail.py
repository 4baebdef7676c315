"""Following the sub-agent transcripts that sit beside an on-disk session.

A session file ``<session>.jsonl`` grows sub-agent files under
``<session>/subagents/`` (workflow agents under ``subagents/workflows/<run>/``)
while it runs; the folders may not exist yet when cctv opens the session.
:class:`SubagentTail` looks for new files whenever one of those folders
changes and follows each with a :class:`~viewer.sources.FileTail`, from its
first line, handing every batch to a callback with the agent it belongs to.

Which agent a file belongs to (the ``tool_use`` id of the Agent call that
started it) is known from its ``.meta.json`` (``toolUseId``), from the call's
result naming the file's agent id, or, while the agent still runs and neither
exists yet, from its first row: the prompt the Agent call was given.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from cctv.reducer.lines import RawLine
from cctv.reducer.fold import Session
from cctv.reducer.state import Change

from .discovery import subagent_files
from .sources import FileTail, Lines

__all__ = ["SubagentTail", "agent_file_found", "agent_id_for", "resolve_agent", "first_prompt"]

_HEAD = 256 * 1024
_AGENT_TOOLS = frozenset({"Agent", "Task"})


def agent_id_for(agent_path: Path, meta: dict[str, Any], known: dict[str, str]) -> str:
    """The agent id (spawning tool_use id) a sub-agent file's rows belong to."""
    tool_use_id = meta.get("toolUseId")
    if isinstance(tool_use_id, str) and tool_use_id:
        return tool_use_id
    file_id = agent_path.stem.removeprefix("agent-")
    return known.get(file_id, "agent-" + file_id)


def agent_file_found(session: Session, agent_path: Path, meta: dict[str, Any],
                     agent_id: str) -> list[Change]:
    """Tell ``session`` that ``agent_path`` (with its ``.meta.json``, ``meta``) is the
    transcript of the sub-agent ``agent_id``; returns the change records."""
    parent, depth = meta.get("parentAgentId"), meta.get("spawnDepth")
    return session.agent_file_found(agent_id, agent_path.stem.removeprefix("agent-"),
                                    meta.get("agentType"), str(meta.get("description") or ""),
                                    parent if isinstance(parent, str) else None,
                                    depth if type(depth) is int else None)


def first_prompt(agent_path: Path) -> str | None:
    """The text of the first row's message in a sub-agent file (its prompt), if written."""
    try:
        with open(agent_path, "rb") as fh:
            head = fh.read(_HEAD)
    except OSError:
        return None
    line, nl, _ = head.partition(b"\n")
    if not nl:
        return None
    try:
        row = msgspec.json.decode(line)
    except msgspec.DecodeError:
        return None
    message = row.get("message") if isinstance(row, dict) else None
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [b.get("text") for b in content if isinstance(b, dict) and b.get("type") == "text"]
        return "\n".join(t for t in texts if isinstance(t, str)) or None
    return None


def resolve_agent(session: Session, agent_path: Path, meta: dict[str, Any]) -> str | None:
    """The tool_use id of the Agent call a sub-agent file belongs to, or ``None`` if not known yet."""
    tool_use_id = meta.get("toolUseId")
    if isinstance(tool_use_id, str) and tool_use_id:
        return tool_use_id
    file_id = agent_path.stem.removeprefix("agent-")
    if file_id in session.agent_file_ids:
        return session.agent_file_ids[file_id]
    prompt = first_prompt(agent_path)
    if prompt is None:
        return None
    prompt = prompt.strip()
    for call in reversed(session.calls.values()):
        if call.name not in _AGENT_TOOLS or not isinstance(call.input, dict):
            continue
        if str(call.input.get("prompt") or "").strip() != prompt:
            continue
        agent = session.agents.get(call.id)
        if agent is None or not agent.agent_file_id:
            return call.id
    return None


def _mtime_ns(path: str | Path) -> int:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return -1


def _signature(flat: list[Path], tree: Path) -> tuple[tuple[str, int], ...]:
    """The mtimes of the folders ``flat`` and of every folder under ``tree``:
    a file added in any of them changes it."""
    out = [(str(p), _mtime_ns(p)) for p in flat]
    out.append((str(tree), _mtime_ns(tree)))
    for dirpath, dirnames, _files in os.walk(tree):
        for name in dirnames:
            path = os.path.join(dirpath, name)
            out.append((path, _mtime_ns(path)))
    return tuple(out)


class SubagentTail:
    """Follow every sub-agent file of one session, new ones included."""

    def __init__(self, session_path: Path, on_lines: Callable[[str, Path, list[RawLine]], None],
                 resolve: Callable[[Path, dict[str, Any]], str | None], *,
                 on_new: Callable[[str, Path, dict[str, Any]], None] | None = None,
                 follow: bool = True, rescan_s: float = 0.25, give_up_s: float = 10.0) -> None:
        self.session_path = session_path
        self.on_lines = on_lines
        self.resolve = resolve
        """Which agent a file belongs to (``None``: not known yet, ask again later)."""
        self.on_new = on_new
        """Called once per file when it is known which agent it belongs to."""
        self.follow = follow
        self.rescan_s = rescan_s
        self.give_up_s = give_up_s
        """After this long unresolved, a file's rows go to an agent of its own."""
        self._tasks: dict[Path, asyncio.Task[None]] = {}
        self._unresolved: dict[Path, float] = {}
        self._stopped = asyncio.Event()
        folder = session_path.parent / session_path.stem
        self._flat = [session_path.parent, folder]  # legacy agent files; the folder appearing
        self._tree = folder / "subagents"

    async def run(self) -> None:
        """Scan, follow, rescan when a folder changes, until :meth:`stop` (or once,
        when not following)."""
        signature: tuple[tuple[str, int], ...] | None = None  # folder mtimes at the last scan
        try:
            while not self._stopped.is_set():
                now_sig = _signature(self._flat, self._tree)
                if now_sig != signature or self._unresolved:
                    signature = now_sig
                    self._scan(final=not self.follow)
                if not self.follow:
                    await asyncio.gather(*self._tasks.values(), return_exceptions=True)
                    return
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self._stopped.wait(), self.rescan_s)
        finally:
            for task in self._tasks.values():
                task.cancel()

    def _scan(self, *, final: bool) -> None:
        now = time.monotonic()
        for path, meta in subagent_files(self.session_path):
            if path in self._tasks:
                continue
            agent = self.resolve(path, meta)
            if agent is None:
                since = self._unresolved.setdefault(path, now)
                if not final and now - since < self.give_up_s:
                    continue
                agent = "agent-" + path.stem.removeprefix("agent-")
            self._unresolved.pop(path, None)
            if self.on_new is not None:
                self.on_new(agent, path, meta)
            self._tasks[path] = asyncio.create_task(self._follow(path, agent))

    async def _follow(self, path: Path, agent: str) -> None:
        tail = FileTail(path, follow=self.follow, poll_timeout_ms=1000)
        async with contextlib.aclosing(tail.events()) as events:
            async for event in events:
                if isinstance(event, Lines):
                    self.on_lines(agent, path, event.lines)

    async def stop(self) -> None:
        self._stopped.set()
