"""The user's home directory, read in this one place for every view that shows a
path under it as ``~`` (:func:`cctv.reducer.format.tilde`, which is given it: the
reducer reads no environment)."""

from __future__ import annotations

import os

__all__ = ["home"]


def home() -> str:
    """``$HOME`` (else the account's home), read at each call, so a changed
    environment shows at once."""
    return os.path.expanduser("~")
