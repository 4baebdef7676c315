"""Noticing that a newer session started while ``cctv tail`` follows an older one.

Claude Code writes each session to ``<projects>/<project>/<session>.jsonl``.
A new file makes its folder's modification time change, so a poll costs one
``stat`` per project folder; only a folder that changed is listed again.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["NewestSession"]


def _mtime(path: Path) -> float | None:
    try:
        return os.stat(path).st_mtime_ns / 1e9
    except OSError:
        return None


def _is_session_file(entry: os.DirEntry[str]) -> bool:
    name = entry.name
    try:
        return name.endswith(".jsonl") and not name.startswith("agent-") and entry.is_file()
    except OSError:
        return False


class NewestSession:
    """Session files that appear under ``root`` after the watch began."""

    def __init__(self, root: Path, current: Path) -> None:
        self.root = root
        self.current = current
        """The session followed now (new files are compared with it)."""
        self._root_mtime: float | None = None
        self._dirs: dict[Path, float | None] = {}
        self._known: set[Path] = set()
        self._scan()  # what exists now is not new

    def _scan(self) -> list[Path]:
        """Session files not seen before, in the folders that changed."""
        new: list[Path] = []
        root_mtime = _mtime(self.root)
        if root_mtime != self._root_mtime:
            self._root_mtime = root_mtime
            try:
                with os.scandir(self.root) as entries:
                    for entry in entries:
                        if entry.is_dir() and Path(entry.path) not in self._dirs:
                            self._dirs[Path(entry.path)] = None
            except OSError:
                pass
        for folder, seen in list(self._dirs.items()):
            mtime = _mtime(folder)
            if mtime == seen:
                continue
            self._dirs[folder] = mtime
            try:
                with os.scandir(folder) as entries:
                    for entry in entries:
                        if _is_session_file(entry):
                            path = Path(entry.path)
                            if path not in self._known:
                                self._known.add(path)
                                new.append(path)
            except OSError:
                continue
        return new

    def poll(self) -> Path | None:
        """The newest session file created since the last poll, if any (not the current one)."""
        fresh = [p for p in self._scan() if p.resolve() != self.current.resolve()]
        if not fresh:
            return None
        return max(fresh, key=lambda p: (_mtime(p) or 0.0, str(p)))
