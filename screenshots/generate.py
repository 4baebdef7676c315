"""Regenerate the SVG screenshots shown in the README.

    python screenshots/generate.py

Each shot runs the real app headless on a real recording (the bundled demo
or the tests/fixtures captures), drives it with the keys a user would press,
and saves ``screenshots/<name>.svg``. The clock is frozen so the pictures are
reproducible.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "bench"))
import checkout  # noqa: E402

checkout.use(ROOT)  # this checkout's code as the cctv package, installed or not

from cctv.viewer.app import CctvApp  # noqa: E402
from cctv.viewer.sources import FileTail  # noqa: E402
from cctv.viewer.paths import demo_path  # noqa: E402

REFERENCE = ROOT / "tests" / "fixtures"
FROZEN = 1_795_960_800.0

Step = Callable[[object], Awaitable[None]]


def _app_for(path: Path, theme: str) -> CctvApp:
    """The viewer on ``path`` read whole, not followed (as ``cctv demo`` opens it)."""
    app = CctvApp(FileTail(path, follow=False), clock=lambda: FROZEN)
    app.theme = theme
    return app


async def _shot(name: str, path: Path, keys: list[str], *, theme: str = "textual-dark",
                size: tuple[int, int] = (140, 40)) -> None:
    app = _app_for(path, theme)
    async with app.run_test(size=size) as pilot:
        await pilot.pause(0.5)  # the file read, its sub-agents' files too
        for key in keys:
            await pilot.press(key)
            await pilot.pause()
        await pilot.pause(0.2)
        app.save_screenshot(filename=f"{name}.svg", path=str(HERE))
    print(f"screenshots/{name}.svg")


async def _drive(app: CctvApp, name: str, keys: list[str], size: tuple[int, int],
                 settle: float = 0.2) -> None:
    async with app.run_test(size=size) as pilot:
        await pilot.pause(settle)
        for key in keys:
            await pilot.press(key)
            await pilot.pause()
        await pilot.pause(0.2)
        app.save_screenshot(filename=f"{name}.svg", path=str(HERE))
    print(f"screenshots/{name}.svg")


async def _browser_shot(name: str, keys: list[str], size: tuple[int, int] = (140, 40)) -> None:
    """The session browser over the captures' projects tree (index in a temporary cache)."""
    import os
    import tempfile

    from cctv.viewer.app import BrowseOptions

    with tempfile.TemporaryDirectory() as cache:
        os.environ["XDG_CACHE_HOME"] = cache
        app = CctvApp(None, clock=lambda: FROZEN,
                      browse=BrowseOptions(REFERENCE / "captures" / "projects", examples=[demo_path()]))
        await _drive(app, name, keys, size, settle=1.5)


async def _live_browser_shot(name: str, keys: list[str], size: tuple[int, int] = (140, 40)) -> None:
    """The browser over a copy of the captures' projects tree whose sessions
    were all just written: each row says its live state (the ages are the
    real clock's)."""
    import os
    import shutil
    import tempfile

    from cctv.viewer.app import BrowseOptions

    with tempfile.TemporaryDirectory() as tmp:
        os.environ["XDG_CACHE_HOME"] = str(Path(tmp) / "cache")
        os.environ["HOME"] = tmp  # the tree shows as ~/.claude/projects
        projects = Path(tmp) / ".claude" / "projects"
        shutil.copytree(REFERENCE / "captures" / "projects", projects)
        for session in projects.rglob("*.jsonl"):
            session.touch()  # written just now
        app = CctvApp(None, browse=BrowseOptions(projects, examples=[demo_path()]))
        await _drive(app, name, keys, size, settle=1.5)


async def _replay_shot(name: str, path: Path, line: int, keys: list[str],
                       size: tuple[int, int] = (140, 40), theme: str = "textual-dark") -> None:
    from cctv.viewer.replay.app import ReplayApp
    from cctv.viewer.replay.recording import load_recording

    rec = load_recording(path)
    replay = rec.replay()
    list(replay.build_checkpoints())
    app = ReplayApp(rec, replay=replay, start=replay.position_of_line(line),
                    build_checkpoints=False, label=path.name)
    app.theme = theme
    await _drive(app, name, keys, size)


async def main() -> None:
    demo = demo_path()
    stream = REFERENCE / "captures" / "stream"
    await _shot("transcript", demo, [])
    await _shot("transcript-light", demo, [], theme="textual-light")
    await _shot("tasks-panel", stream / "06_background_bash.jsonl", ["t"])
    await _shot("subagent", stream / "05_subagent.jsonl", ["g", "c", "enter"])
    await _shot("compaction", stream / "10_compact_manual.jsonl", [])
    await _shot("raw-view", demo, ["g", "j", "j", "r"])
    await _shot("help", demo, ["question_mark"])
    await _shot("narrow-80x24", stream / "03_tools.jsonl", [], size=(80, 24))
    await _shot("filter-search", stream / "07_hooks.jsonl", ["f", "slash", *"hello", "enter", "n"])
    await _shot("time-column-light", demo, ["T"], theme="textual-light")
    await _browser_shot("browse", [])
    await _browser_shot("browse-search", ["slash", *"bash"])
    await _browser_shot("browse-80x24", [], size=(80, 24))
    await _live_browser_shot("browse-live", ["l"])
    public = REFERENCE / "public" / "claude-code-log" / "real_projects" / "-src-deep-manifest"
    await _shot("cost-and-agents", public / "a7da6a22-facc-4fcd-8bab-f83c87862004.jsonl", ["dollar_sign"])
    await _replay_shot("replay", stream / "06_background_bash.jsonl", 12, ["t"])


if __name__ == "__main__":
    asyncio.run(main())
