"""Where cctv keeps its own files (the user cache directory, never ``~/.claude``)
and where its bundled demo session is.

``$XDG_CACHE_HOME/cctv`` (default ``~/.cache/cctv``) holds the session index,
crash logs and temporary files for the pager. Nothing here imports Textual.
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

__all__ = ["cache_dir", "demo_path"]


def cache_dir(*parts: str, create: bool = True) -> Path:
    """``$XDG_CACHE_HOME/cctv/<parts…>`` (default ``~/.cache/cctv``), created on demand."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    path = Path(base).expanduser() / "cctv" / Path(*parts) if parts else Path(base).expanduser() / "cctv"
    if create:
        path.mkdir(parents=True, exist_ok=True)
    return path


def demo_path() -> Path:
    """The bundled example session (package data)."""
    return Path(str(resources.files("cctv.viewer") / "demo" / "demo_session.jsonl"))
