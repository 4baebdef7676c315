"""The layers stay apart: the reducer is headless (no Textual or Rich), the
widgets never reach into the viewer, the viewer's modules import each other
without a circle, and headless commands and the browser's first screen load
only what they need."""

from __future__ import annotations

import ast
import pkgutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from cctv import reducer
from conftest import FIXTURES

CHECKOUT = Path(__file__).resolve().parent.parent

_FIXTURE = FIXTURES / "captures" / "stream" / "07_hooks.jsonl"


def test_reducer_imports_no_ui_library() -> None:
    modules = sorted(f"cctv.reducer.{m.name}" for m in pkgutil.iter_modules(reducer.__path__))
    assert {"cctv.reducer.decode", "cctv.reducer.fold", "cctv.reducer.frames", "cctv.reducer.summary"} <= set(modules)
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


def test_the_price_table_is_imported_by_one_module_when_a_price_is_asked() -> None:
    """genai-prices (and pydantic under it: ~0.15 s) is read by reducer/pricing.py
    alone, and only once a price is computed: importing every reducer module,
    and folding a session, load neither."""
    importers = [(name, line) for top in ("reducer", "widgets", "viewer")
                 for name, path in _modules(top).items()
                 for line, module in _imports(path, name.rsplit(".", 1)[0] if path.name != "__init__.py" else name)
                 if module.split(".")[0] == "genai_prices"]
    assert importers and {name for name, _ in importers} == {"cctv.reducer.pricing"}
    modules = sorted(f"cctv.reducer.{m.name}" for m in pkgutil.iter_modules(reducer.__path__))
    code = (
        "import importlib, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "from cctv.viewer.loader import load_path\n"
        f"session = load_path({str(_FIXTURE)!r}).session\n"
        "assert session.requests\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('genai_prices', 'pydantic'))\n"
        "assert not bad, bad\n"
        "from cctv.reducer.costs import cost_of\n"
        "session.cost_usd = None  # (a recorded cost needs no price)\n"
        "cost_of(session)\n"
        "assert 'genai_prices' in sys.modules\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr


def _imports(path: Path, package: str) -> Iterator[tuple[int, str]]:
    """Every module ``path`` (a module of ``package``) imports, with its line:
    the top-level, the function-local and the ``TYPE_CHECKING`` imports alike.
    ``from X import name`` counts as importing both ``X`` and ``X.name``."""
    base = package.split(".")
    if path.name != "__init__.py":
        base = [*base, path.stem]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parent = base[:len(base) - node.level] if path.name != "__init__.py" \
                    else base[:len(base) - node.level + 1]
                module = ".".join([*parent, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            yield node.lineno, module
            for alias in node.names:
                yield node.lineno, f"{module}.{alias.name}"


def _modules(top: str) -> dict[str, Path]:
    """The modules of ``cctv.<top>`` in the checkout, by dotted name."""
    root = CHECKOUT / top
    out: dict[str, Path] = {}
    for path in sorted(root.rglob("*.py")):
        parts = [f"cctv.{top}", *path.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def test_widgets_never_import_the_viewer() -> None:
    """Dependencies flow viewer → widgets → reducer: no module under widgets/
    imports cctv.viewer, not even inside a function, and importing every one
    of them loads none of it."""
    modules = _modules("widgets")
    assert {"cctv.widgets.transcript", "cctv.widgets.cards", "cctv.widgets.status_bar"} <= set(modules)
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        bad = [f"{path.relative_to(CHECKOUT)}:{line} imports {target}"
               for line, target in _imports(path, package)
               if target == "cctv.viewer" or target.startswith("cctv.viewer.")]
        assert not bad, bad
    code = (
        "import importlib, sys\n"
        f"for name in {sorted(modules)!r}:\n"
        "    importlib.import_module(name)\n"
        "bad = sorted(m for m in sys.modules if m == 'cctv.viewer' or m.startswith('cctv.viewer.'))\n"
        "assert not bad, bad\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr


_TRANSCRIPT_PARTS = ("cctv.widgets.transcript.line_index", "cctv.widgets.transcript.fenwick",
                     "cctv.widgets.transcript.search_state", "cctv.widgets.transcript.follow_state",
                     "cctv.widgets.transcript.expansion", "cctv.widgets.transcript.navigation")
"""The transcript widget's parts that hold state and decide, not draw."""


def test_the_transcripts_line_index_search_and_follow_state_import_no_ui_library() -> None:
    """The line index (heights, the Fenwick tree, the shelf, the rebind
    comparison), the search, follow, expansion and navigation state are
    Textual-free, tested without Pilot; the package imports its widget on first use."""
    code = (
        "import importlib, sys\n"
        f"for name in {_TRANSCRIPT_PARTS!r}:\n"
        "    importlib.import_module(name)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich'))\n"
        "assert not bad, bad\n"
        "from cctv.widgets.transcript import TranscriptView\n"
        "assert 'textual' in sys.modules and TranscriptView.__module__ == 'cctv.widgets.transcript.view'\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr


def test_the_viewer_modules_import_each_other_without_a_circle() -> None:
    """The viewer's import graph, counting every import statement (in a
    function, under ``TYPE_CHECKING``), has no cycle: no circle hidden by
    importing late."""
    modules = _modules("viewer")
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets = graph.setdefault(name, set())
        for _line, target in _imports(path, package):
            while target and target not in modules:  # a name imported from a module: the module
                target = target.rpartition(".")[0]
            if target and target != name:
                targets.add(target)
    order: list[str] = []
    state: dict[str, int] = {}  # 1: on the path being walked, 2: done

    def walk(name: str, path: list[str]) -> None:
        state[name] = 1
        for target in sorted(graph[name]):
            if state.get(target) == 1:
                circle = path[path.index(target):] + [target]
                raise AssertionError("import circle: " + " -> ".join(circle))
            if target not in state:
                walk(target, [*path, target])
        state[name] = 2
        order.append(name)

    for name in sorted(graph):
        if name not in state:
            walk(name, [name])
    assert len(order) == len(modules) > 40


def test_headless_commands_import_no_ui_library() -> None:
    """``cctv check`` / ``summary`` / ``replay --emit`` / ``export`` run without loading the
    terminal UI."""
    code = (
        "import sys, io, contextlib\n"
        "from cctv.viewer.cli import main\n"
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
        "import cctv.viewer.rawstore\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich'))\n"
        "assert not bad, bad\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr


def test_index_commands_import_no_ui_library(tmp_path) -> None:
    """``cctv sessions`` / ``cctv search`` (and the index package) run without the terminal UI."""
    projects = tmp_path / "projects" / "-p"
    projects.mkdir(parents=True)
    (projects / "s.jsonl").write_text('{"type":"user","message":{"role":"user","content":"hi"},'
                                      '"uuid":"u1","parentUuid":null,"sessionId":"s"}\n')
    code = (
        "import sys, io, contextlib\n"
        "from cctv.viewer.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):\n"
        f"    assert main(['sessions', {str(tmp_path)!r}, '--json']) == 0\n"
        f"    main(['search', 'hi', {str(tmp_path)!r}, '--json'])\n"
        f"    main(['sessions', {str(tmp_path)!r}, '--no-index'])\n"
        "import cctv.viewer.index, cctv.viewer.index.extract, cctv.viewer.index.listing\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich'))\n"
        "assert not bad, bad\n"
    )
    env = {**__import__("os").environ, "XDG_CACHE_HOME": str(tmp_path / "cache"),
           "HOME": str(tmp_path), "CLAUDE_CONFIG_DIR": str(tmp_path)}
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         env=env)
    assert res.returncode == 0, res.stderr


_SESSION_ONLY = ("cctv.viewer.screens.session", "cctv.widgets.transcript", "cctv.widgets.cards", "cctv.widgets.tasks_panel",
                 "cctv.reducer.feed", "cctv.reducer.fold", "cctv.reducer.decode", "cctv.viewer.sources",
                 "cctv.viewer.index.extract", "watchfiles", "markdown_it", "genai_prices", "pydantic")
"""Modules only a session needs (its screen and widgets, the decoder and the fold,
the sources, the price table): the browser's first screen loads none of them."""


def test_the_browser_shows_its_first_screen_without_the_session_machinery(tmp_path) -> None:
    """``cctv`` and ``cctv browse DIR`` reopened on an index with nothing changed:
    the list is on the screen, then the refresh finds nothing to read, and
    neither has loaded the session screen, its widgets, the decoder, the fold or
    the sources (once the first refresh is done the folder is watched: watchfiles). Opening a session from the list loads them. (The real entry
    point, ``viewer.cli.main``, with the app driven headless instead of on the
    terminal.)"""
    from test_index import build_tree

    projects = build_tree(tmp_path)
    env = {**__import__("os").environ, "XDG_CACHE_HOME": str(tmp_path / "cache"),
           "HOME": str(tmp_path), "CLAUDE_CONFIG_DIR": str(tmp_path / "cfg")}
    indexed = subprocess.run([sys.executable, "-m", "cctv.viewer.cli", "sessions", str(projects), "--json"],
                             capture_output=True, text=True, timeout=120, env=env)
    assert indexed.returncode == 0, indexed.stderr
    code = (
        "import asyncio, sys\n"
        "import cctv.viewer.app, cctv.viewer.launch\n"
        "from cctv.viewer.cli import main\n"
        f"SESSION_ONLY = {_SESSION_ONLY!r}\n"
        "def loaded():\n"
        "    return sorted(m for m in sys.modules if m.startswith(SESSION_ONLY))\n"
        "async def until(pilot, condition):\n"
        "    for _ in range(2000):\n"
        "        if condition():\n"
        "            return\n"
        "        await pilot.pause(0.01)\n"
        "    raise AssertionError('timed out')\n"
        "async def drive(app, open_one):\n"
        "    async with app.run_test(size=(120, 30)) as pilot:\n"
        "        table = lambda: app.screen.query('#sessions')\n"
        "        await until(pilot, lambda: table() and table().first().row_count > 0)\n"
        "        # watchfiles: once a first refresh is done (this run's or the one before), the\n"
        "        # folder is watched\n"
        "        watching = lambda: app.screen.refreshed or len(runs) > 1\n"
        "        early = [m for m in loaded() if not (m.startswith('watchfiles') and watching())]\n"
        "        assert not early, ('first screen', early)\n"
        "        await until(pilot, lambda: app.screen.refreshed)\n"
        "        await pilot.pause(0.2)\n"
        "        # the folder is watched for the live states from here on (watchfiles)\n"
        "        late = [m for m in loaded() if not m.startswith('watchfiles')]\n"
        "        assert not late, ('after the refresh', late)\n"
        "        if open_one:\n"
        "            await pilot.press('enter')\n"
        "            await until(pilot, lambda: type(app.screen).__name__ == 'SessionScreen'\n"
        "                        and app.shown.ended is not None)\n"
        "            assert 'cctv.viewer.screens.session' in loaded() and 'cctv.reducer.fold' in loaded()\n"
        "    return 0\n"
        "runs = []\n"
        "def run(app, *args, **kwargs):\n"
        "    runs.append(app.browse.root)\n"
        "    return asyncio.run(drive(app, open_one=len(runs) == 2))\n"
        "cctv.viewer.app.CctvApp.run = run\n"
        "cctv.viewer.launch._exit_now = lambda status: None\n"
        "cctv.viewer.launch.no_terminal = lambda **kw: False  # driven headless instead\n"
        "class Terminal:\n"
        "    def isatty(self):\n"
        "        return True\n"
        "sys.stdin = Terminal()\n"
        "assert main([]) == 0\n"
        f"assert main(['browse', {str(projects)!r}]) == 0\n"
        f"assert [str(r) for r in runs] == [{str(projects)!r}] * 2, runs\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env=env)
    assert res.returncode == 0, res.stderr[-3000:]


def test_the_browsers_default_folder_is_discoverys(tmp_path, monkeypatch) -> None:
    """The index and :mod:`viewer.discovery` find the same default projects
    folder: ``$CLAUDE_CONFIG_DIR/projects`` (``~`` expanded), else ``~/.claude/projects``."""
    from cctv.viewer.discovery import projects_dir
    from cctv.viewer.index import resolve_root

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    assert resolve_root(None) == projects_dir() == tmp_path / "home" / ".claude" / "projects"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", "~/elsewhere")
    assert resolve_root(None) == projects_dir() == tmp_path / "home" / "elsewhere" / "projects"
