"""Showing text outside the app: an item's or a frame's full text in ``$PAGER`` or
``$EDITOR``, an image in the system viewer.

Everything goes through a file in cctv's cache directory (``$XDG_CACHE_HOME/cctv``,
by default ``~/.cache/cctv``; a private temporary folder when the cache cannot
take it: :class:`viewer.storage.CacheArea`), never beside the session. Text
written for a pager has its control characters made visible (``\\x1b``), so
``less -R`` shows the bytes of the session and never acts on them.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from cctv.reducer.safe import escaped

from .storage import CacheArea

if TYPE_CHECKING:
    from textual.app import App

__all__ = ["IMAGES", "KEEP_FILES", "TEXTS", "write_cache_file",
           "pager_command", "editor_command", "open_text", "open_image"]

KEEP_FILES = 20
"""Files kept per area; the least recently used go as new ones are written."""

TEXTS = CacheArea("view", max_files=KEEP_FILES, what="files for the pager and editor")
IMAGES = CacheArea("images", max_files=KEEP_FILES, what="images for the viewer")


def write_cache_file(data: str | bytes, name: str, area: CacheArea = TEXTS) -> Path:
    """Write ``data`` (text has its controls written as escapes: :func:`reducer.safe.escaped`)
    to a file of ``area``
    named after ``name`` and its content, and return its path. Raises
    :class:`viewer.storage.DiskError` when no folder takes it."""
    payload = escaped(data).encode("utf-8") if isinstance(data, str) else data
    digest = hashlib.blake2b(payload, digest_size=6).hexdigest()
    safe = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-")[:60] or "item"
    stem, dot, ext = safe.rpartition(".")
    return area.put(f"{stem}-{digest}.{ext}" if dot and stem else f"{safe}-{digest}.txt", payload)


def pager_command() -> list[str]:
    """``$PAGER`` split as a shell would, ``less -R`` when unset."""
    return shlex.split(os.environ.get("PAGER") or "less -R")


def editor_command() -> list[str]:
    """``$VISUAL`` or ``$EDITOR``, ``vi`` when neither is set."""
    return shlex.split(os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi")


def open_text(app: App, path: Path, command: list[str]) -> str | None:
    """Run ``command path`` with the terminal handed over (``App.suspend``); the
    error to show, or ``None``. Where the app cannot hand over the terminal (a
    headless run), the command runs without it."""
    from textual.app import SuspendNotSupported

    argv = [*command, str(path)]
    try:
        try:
            with app.suspend():
                subprocess.run(argv, check=False)
        except SuspendNotSupported:
            subprocess.run(argv, check=False, stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except OSError as exc:  # not found, not executable
        return f"cannot run {command[0] if command else '?'}: {exc.strerror or exc}"
    return None


def _viewer() -> list[str] | None:
    if sys.platform == "darwin" and shutil.which("open"):
        return ["open"]
    for name in ("xdg-open", "open"):
        if shutil.which(name):
            return [name]
    return None


def open_image(path: Path) -> str:
    """Open ``path`` in the system image viewer, in the background; what to tell
    the user (the path, and whether a viewer was started)."""
    viewer = _viewer()
    if viewer is None:
        return f"saved to {path} (no xdg-open or open to show it)"
    try:
        subprocess.Popen([*viewer, str(path)], stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True)
    except OSError as exc:
        return f"saved to {path} ({viewer[0]} failed: {exc.strerror or exc})"
    return f"opened {path}"
