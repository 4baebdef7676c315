"""Where cctv keeps its own files (the user cache directory, never ``~/.claude``)
and where its bundled demo session is.

``$XDG_CACHE_HOME/cctv`` (default ``~/.cache/cctv``) holds the session index,
crash logs and the files handed to the pager and the image viewer; they are
written through :mod:`viewer.storage`, which copes with a disk that fails.
Nothing here imports Textual, and nothing here writes.
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

__all__ = ["cache_dir", "demo_path"]


def cache_dir(*parts: str) -> Path:
    """``$XDG_CACHE_HOME/cctv/<parts…>`` (default ``~/.cache/cctv``); not created here."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser().joinpath("cctv", *parts)


def demo_path() -> Path:
    """The bundled example session (package data)."""
    return Path(str(resources.files("cctv.viewer") / "demo" / "demo_session.jsonl"))
