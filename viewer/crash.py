"""An unhandled exception in the app: one line on stderr, the traceback in a log file."""

from __future__ import annotations

import time
import traceback
from pathlib import Path

from cctv.reducer.safe import visible

from .paths import cache_dir

__all__ = ["write_crash_log", "crash_message"]


def write_crash_log(error: BaseException) -> Path | None:
    """Write ``error``'s full traceback to the cache directory; ``None`` if that fails."""
    text = "".join(traceback.format_exception(error))
    try:
        folder = cache_dir("logs")
        path = folder / time.strftime("crash-%Y%m%d-%H%M%S.log")
        path.write_text(text, encoding="utf-8")
    except OSError:
        return None
    return path


def crash_message(error: BaseException, log: Path | None) -> str:
    """The one line cctv prints when it crashed."""
    what = f"{type(error).__name__}: {error}".splitlines()[0][:200] if str(error) else type(error).__name__
    where = f"full traceback in {log}" if log is not None else "the traceback could not be saved"
    return visible(f"cctv crashed: {what} — {where}", oneline=True)  # no control bytes
