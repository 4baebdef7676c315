"""Import a checkout's code as the ``cctv`` package, installed or not.

The repository keeps ``reducer/``, ``widgets/`` and ``viewer/`` at its top;
they install as ``cctv.reducer``, ``cctv.widgets`` and ``cctv.viewer``. A
bench script measures the checkout it sits in (or one named by ``--repo``),
whatever is installed: :func:`import_root` makes a folder holding ``cctv/``
with links to the checkout's three packages, to put first on ``sys.path`` (or
in a child's ``PYTHONPATH``).
"""

from __future__ import annotations

import hashlib
import sys
import tempfile
from pathlib import Path

PACKAGES = ("reducer", "widgets", "viewer")


def import_root(repo: Path) -> Path:
    """A folder in which ``import cctv.reducer`` (…) imports ``repo``'s code."""
    repo = repo.resolve()
    key = hashlib.blake2b(str(repo).encode(), digest_size=6).hexdigest()
    root = Path(tempfile.gettempdir()) / f"cctv-bench-import-{key}"
    package = root / "cctv"
    package.mkdir(parents=True, exist_ok=True)
    for name in PACKAGES:
        link = package / name
        if link.is_symlink() and link.resolve() == repo / name:
            continue
        link.unlink(missing_ok=True)
        link.symlink_to(repo / name, target_is_directory=True)
    return root


def use(repo: Path) -> None:
    """Make this process import ``repo``'s code as ``cctv``."""
    sys.path.insert(0, str(import_root(repo)))
