"""The reducer is headless: importing any of it must not pull in Textual or Rich."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import reducer

from conftest import FIXTURES

_FIXTURE = FIXTURES / "captures" / "stream" / "07_hooks.jsonl"


def test_reducer_imports_no_ui_library() -> None:
    modules = sorted(f"reducer.{m.name}" for m in pkgutil.iter_modules(reducer.__path__))
    assert {"reducer.decode", "reducer.frames", "reducer.session", "reducer.summary"} <= set(modules)
    code = (
        "import importlib, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich'))\n"
        "print(len(sys.modules))\n"
        "assert not bad, bad\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr


def test_headless_commands_import_no_ui_library() -> None:
    """``cctv check`` / ``summary`` / ``replay --emit`` / ``export`` run without loading the
    terminal UI."""
    code = (
        "import sys, io, contextlib\n"
        "from viewer.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):\n"
        "    main(['summary', '/nonexistent/x.jsonl'])\n"
        "    main(['check', '/nonexistent/x.jsonl'])\n"
        "    main(['replay', '/nonexistent/x.jsonl', '--emit'])\n"
        "    main(['export', '/nonexistent/x.jsonl', '--md'])\n"
        f"    main(['export', {str(_FIXTURE)!r}, '--md'])\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich'))\n"
        "assert not bad, bad\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr


def test_the_raw_store_imports_no_ui_library() -> None:
    """Where a line's bytes come from is decided without Textual (viewer/rawstore.py)."""
    code = (
        "import sys\n"
        "import viewer.rawstore\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich'))\n"
        "assert not bad, bad\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
