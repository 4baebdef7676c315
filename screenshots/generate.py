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
sys.path.insert(0, str(ROOT))

from viewer.app import CctvApp  # noqa: E402
from viewer.cli import demo_path  # noqa: E402
from viewer.loader import load_path  # noqa: E402

REFERENCE = ROOT / "tests" / "fixtures"
FROZEN = 1_795_960_800.0

Step = Callable[[object], Awaitable[None]]


def _app_for(path: Path, theme: str) -> CctvApp:
    feed = load_path(path)
    app = CctvApp(None, feed=feed, clock=lambda: FROZEN, label=f"file {path.name}")
    app.theme = theme
    return app


async def _shot(name: str, path: Path, keys: list[str], *, theme: str = "textual-dark",
                size: tuple[int, int] = (140, 40)) -> None:
    app = _app_for(path, theme)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        for key in keys:
            await pilot.press(key)
            await pilot.pause()
        await pilot.pause(0.2)
        app.save_screenshot(filename=f"{name}.svg", path=str(HERE))
    print(f"screenshots/{name}.svg")


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


if __name__ == "__main__":
    asyncio.run(main())
