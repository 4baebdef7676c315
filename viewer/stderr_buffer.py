"""A command's standard error, kept once and bounded.

``cctv run`` can start a command that writes megabytes to stderr. The app keeps
the most recent lines in memory (at most ``limit`` characters) and writes the
older ones, as they are pushed out, to a file in the cache directory (or a
temporary folder: :class:`viewer.storage.CacheArea`), so the whole stderr is
still there and memory stays flat. When no folder takes it, or the disk fills,
the lines pushed out are dropped and ``spill_error`` says why.
"""

from __future__ import annotations

import os
import time
from collections import deque
from pathlib import Path
from typing import TextIO

from .storage import CacheArea, DiskError

__all__ = ["SPILLS", "StderrBuffer"]

SPILLS = CacheArea("stderr", max_files=20, what="spilled stderr")


class StderrBuffer:
    """The last lines of a stream in memory; the lines before them in a spill file."""

    def __init__(self, limit: int = 1 << 20, spill_dir: Path | None = None) -> None:
        self.limit = max(1, limit)
        """Characters kept in memory (each line counts one more for its newline)."""
        self.spill_dir = spill_dir
        self._lines: deque[str] = deque()
        self._kept = 0
        self.total_lines = 0
        self.total_chars = 0
        self.spilled_lines = 0
        self.spilled_chars = 0
        self.spill_path: Path | None = None
        """The file holding the lines no longer in memory (``None`` until one is)."""
        self.spill_error: str | None = None
        self._spill: TextIO | None = None

    @property
    def lines(self) -> list[str]:
        """The lines in memory, oldest first."""
        return list(self._lines)

    def __len__(self) -> int:
        return len(self._lines)

    def append(self, line: str) -> None:
        """Add one line (without its newline)."""
        size = len(line) + 1
        self._lines.append(line)
        self._kept += size
        self.total_lines += 1
        self.total_chars += size
        while self._kept > self.limit and len(self._lines) > 1:
            old = self._lines.popleft()
            self._kept -= len(old) + 1
            self.spilled_lines += 1
            self.spilled_chars += len(old) + 1
            self._write_spilled(old)

    def extend(self, lines: list[str]) -> None:
        """Add lines (each without its newline)."""
        for line in lines:
            self.append(line)

    def _write_spilled(self, line: str) -> None:
        if self._spill is None and self.spill_error is None:
            name = f"stderr-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.log"
            try:
                folder = self.spill_dir or SPILLS.writable_folder()
                folder.mkdir(parents=True, exist_ok=True)
                self._spill = open(folder / name, "w", encoding="utf-8", errors="replace")  # noqa: SIM115
                self.spill_path = folder / name
            except DiskError as exc:
                self.spill_error = str(exc.note)
            except OSError as exc:
                self.spill_error = exc.strerror or str(exc)
        if self._spill is not None:
            try:
                self._spill.write(line + "\n")
            except OSError as exc:
                self.spill_error = exc.strerror or str(exc)
                self.close()

    def flush(self) -> None:
        """Write out what the spill file buffers (before someone reads it)."""
        if self._spill is not None:
            try:
                self._spill.flush()
            except OSError as exc:
                self.spill_error = exc.strerror or str(exc)

    def close(self) -> None:
        """Close the spill file (the lines in it stay)."""
        if self._spill is not None:
            try:
                self._spill.close()
            except OSError:
                pass
            self._spill = None
