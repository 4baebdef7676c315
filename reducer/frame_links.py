"""Which frames of a file belong together: a call, its result, its heartbeats and
task frames; a hook's start, progress and response.

The raw view steps through these "paired frames" with ``[`` / ``]``.
:class:`FrameLinks` indexes a list of decoded entries once, then only the
entries appended since (O(new) per look-up after the first), keyed by what
ties frames together: a tool_use id (the call, its ``tool_result``,
``tool_progress`` heartbeats, ``task_*`` frames that name it, permission
denials, on-disk ``progress`` rows), a task id (aliased to its tool_use id once
a ``task_started`` names both) and a hook id. A sub-agent's own frames (which
carry the call's id as ``parent_tool_use_id``) are not the call's pairs: they
are that agent's transcript. Pure: no Textual, no I/O.
"""

from __future__ import annotations

from . import frames as F
from .entry_log import EntryLog

__all__ = ["FrameLinks", "FrameStepper", "entry_keys"]


def entry_keys(entry: F.Entry) -> list[str]:
    """The link keys one entry carries (``"tool:<id>"``, ``"task:<id>"``, ``"hook:<id>"``)."""
    keys: list[str] = []
    match entry:
        case F.Assistant():
            message = entry.message
            for block in (message.content if message is not None else []):
                if block.type in ("tool_use", "server_tool_use") and block.id:
                    keys.append(f"tool:{block.id}")
        case F.User():
            content = entry.message.content if entry.message is not None else ""
            if isinstance(content, list):
                for block in content:
                    if block.type == "tool_result" and block.tool_use_id:
                        keys.append(f"tool:{block.tool_use_id}")
        case F.ToolProgress():
            tool_id = entry.tool_use_id
            keys.append(f"tool:{tool_id}")
            if "-heartbeat-" in tool_id:  # "<call>-heartbeat-3", "hook-PreToolUse-<call>-heartbeat-0"
                base = tool_id.split("-heartbeat-")[0]
                if base.startswith("hook-"):
                    base = base.split("-", 2)[-1]
                keys.append(f"tool:{base}")
            if entry.heartbeat and entry.parent_tool_use_id:
                keys.append(f"tool:{entry.parent_tool_use_id}")
            if entry.task_id:
                keys.append(f"task:{entry.task_id}")
        case F.TaskStarted() | F.TaskProgress() | F.TaskNotification():
            keys.append(f"task:{entry.task_id}")
            if entry.tool_use_id:
                keys.append(f"tool:{entry.tool_use_id}")
        case F.TaskUpdated():
            keys.append(f"task:{entry.task_id}")
        case F.HookStarted() | F.HookProgress() | F.HookResponse():
            keys.append(f"hook:{entry.hook_id}")
        case F.PermissionDenied() | F.Informational():
            if entry.tool_use_id:
                keys.append(f"tool:{entry.tool_use_id}")
        case F.Progress():
            if entry.parentToolUseID:
                keys.append(f"tool:{entry.parentToolUseID}")
            elif entry.toolUseID:
                keys.append(f"tool:{entry.toolUseID}")
        case F.Attachment():
            if entry.attachment.toolUseID:
                keys.append(f"tool:{entry.attachment.toolUseID}")
        case _:
            pass
    return keys


class FrameLinks:
    """An incremental index of the link keys of ``entries`` (a list that only grows)."""

    __slots__ = ("entries", "_done", "_lines", "_alias")

    def __init__(self, entries: EntryLog) -> None:
        self.entries = entries
        self._done = 0
        self._lines: dict[str, list[int]] = {}
        self._alias: dict[str, str] = {}

    def _canonical(self, key: str) -> str:
        return self._alias.get(key, key)

    def _update(self) -> None:
        entries = self.entries
        lines, alias = self._lines, self._alias
        for entry in entries.scan(self._done):
            keys = entry_keys(entry)
            if not keys:
                continue
            if isinstance(entry, F.TaskStarted) and entry.tool_use_id:
                task, tool = f"task:{entry.task_id}", f"tool:{entry.tool_use_id}"
                if alias.get(task) != tool:
                    alias[task] = tool
                    earlier = lines.pop(task, [])
                    if earlier:
                        merged = sorted(set(lines.get(tool, [])) | set(earlier))
                        lines[tool] = merged
            seen: set[str] = set()
            for key in keys:
                key = alias.get(key, key)
                if key in seen:
                    continue
                seen.add(key)
                bucket = lines.setdefault(key, [])
                if not bucket or bucket[-1] != entry.line_no:
                    bucket.append(entry.line_no)
        self._done = len(entries)

    def chain(self, entry: F.Entry) -> list[int]:
        """Line numbers of every frame paired with ``entry`` (``entry``'s own line
        included), in file order; just ``[entry.line_no]`` when it has no pairs."""
        self._update()
        found: set[int] = {entry.line_no}
        for key in entry_keys(entry):
            found.update(self._lines.get(self._canonical(key), ()))
        return sorted(found)

    def chain_of_call(self, tool_use_id: str) -> list[int]:
        """Line numbers of the frames of one tool call (by its tool_use id)."""
        self._update()
        return list(self._lines.get(f"tool:{tool_use_id}", ()))


class FrameStepper:
    """Where the raw view is in a file, and where ``[`` / ``]`` and the
    previous / next-line keys take it. ``chain`` is the set of paired frames
    being stepped through; moving by line starts a new chain from that line."""

    def __init__(self, entries: EntryLog, links: FrameLinks, entry: F.Entry,
                 chain: list[int] | None = None) -> None:
        self.entries = entries
        self.links = links
        self.entry = entry
        self.chain = chain if chain else links.chain(entry)

    def _at(self, line_no: int) -> F.Entry | None:
        return self.entries.find(line_no)

    @property
    def position(self) -> tuple[int, int]:
        """(1-based place of the current frame in its chain, chain length)."""
        chain = self.chain
        line = self.entry.line_no
        return (chain.index(line) + 1 if line in chain else 0), len(chain)

    def paired(self, direction: int) -> F.Entry | None:
        """The next (``1``) or previous (``-1``) frame of the chain, or ``None``."""
        line = self.entry.line_no
        later = [n for n in self.chain if (n > line if direction > 0 else n < line)]
        if not later:
            return None
        target = self._at(later[0] if direction > 0 else later[-1])
        if target is not None:
            self.entry = target
        return target

    def line(self, direction: int) -> F.Entry | None:
        """The next or previous line of the file (a new chain starts there)."""
        target = self._at(self.entry.line_no + direction)
        if target is not None:
            self.entry = target
            self.chain = self.links.chain(target)
        return target
