"""File systems that fail, for tests: a tmpfs (read-only, or a few KiB) or a
read-only bind mount made where a test asks, a folder no process may read.

Mounting needs root (and a kernel that lets this container mount); where it
cannot be done the test is skipped with the reason. Root reads and writes
through file modes, so an unreadable folder is made by running the command
without the capabilities that let it (``setpriv``), not by ``chmod`` alone.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

__all__ = ["fill", "read_only", "tmpfs", "without_root_powers"]


def _mount(*args: str) -> None:
    if shutil.which("mount") is None:
        pytest.skip("no mount command here")
    res = subprocess.run(["mount", *args], capture_output=True, text=True)
    if res.returncode != 0:
        pytest.skip(f"cannot mount here ({res.stderr.strip() or 'mount failed'}): needs root")


def _unmount(where: Path) -> None:
    subprocess.run(["umount", "-l", str(where)], capture_output=True)


@contextlib.contextmanager
def tmpfs(where: Path, *, size: str | None = None, read_only: bool = False) -> Iterator[Path]:
    """A fresh tmpfs on ``where`` (made if missing): ``size`` like ``64k``;
    ``read_only`` for one nothing can be written to."""
    where.mkdir(parents=True, exist_ok=True)
    options = [o for o in (f"size={size}" if size else "", "ro" if read_only else "") if o]
    _mount("-t", "tmpfs", "-o", ",".join(options) or "defaults", "tmpfs", str(where))
    try:
        yield where
    finally:
        _unmount(where)


@contextlib.contextmanager
def read_only(folder: Path) -> Iterator[Path]:
    """``folder`` as it is, made read-only by a bind mount over itself."""
    _mount("--bind", str(folder), str(folder))
    try:
        res = subprocess.run(["mount", "-o", "remount,ro,bind", str(folder)],
                             capture_output=True, text=True)
        if res.returncode != 0:
            pytest.skip(f"cannot remount read-only here ({res.stderr.strip()})")
        yield folder
    finally:
        _unmount(folder)


def fill(folder: Path) -> None:
    """Write into ``folder`` until its file system is full."""
    chunk = b"\0" * 4096
    with open(folder / "filler", "ab", buffering=0) as fh:
        while True:
            try:
                fh.write(chunk)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC, exc
                break


def without_root_powers(command: list[str]) -> list[str]:
    """``command`` run so that file modes bind it even as root (``setpriv``
    drops the capabilities that override them); as it is for anyone else."""
    if os.geteuid() != 0:
        return command
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: file modes cannot be made to apply")
    return ["setpriv", "--bounding-set=-dac_override,-dac_read_search", *command]
