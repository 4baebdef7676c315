"""An unhandled exception in the app: one line on stderr, the traceback in a log file
(the cache's ``logs/``, or a temporary folder when the cache cannot take it)."""

from __future__ import annotations

import time
import traceback
from pathlib import Path

from cctv.reducer.safe import visible

from .storage import CacheArea, DiskError

__all__ = ["LOGS", "write_crash_log", "crash_message"]

LOGS = CacheArea("logs", max_files=50, what="crash logs")


def write_crash_log(error: BaseException) -> Path | None:
    """Write ``error``'s full traceback to a log file; ``None`` if no folder takes it."""
    text = "".join(traceback.format_exception(error))
    try:
        return LOGS.put(time.strftime("crash-%Y%m%d-%H%M%S.log"),
                        text.encode("utf-8", "backslashreplace"))  # names may not be UTF-8
    except DiskError:
        return None


def crash_message(error: BaseException, log: Path | None) -> str:
    """The one line cctv prints when it crashed."""
    what = f"{type(error).__name__}: {error}".splitlines()[0][:200] if str(error) else type(error).__name__
    where = f"full traceback in {log}" if log is not None else "the traceback could not be saved"
    return visible(f"cctv crashed: {what} — {where}", oneline=True)  # no control bytes
