#!/usr/bin/env python3
"""Time the navigation features on a big session: filters, search, time column,
jump to time, Markdown export.

    python bench/navigate.py [FILE]     # default: bench/out/big-stream-json.jsonl (built if missing)

Loads FILE, opens it in the real app (headless, 160×48) and prints, for the
main transcript's item count: a filter change (set + the first redraw) for each
preset and for "only Bash", clearing it, a search and ``n`` steps, showing the
time column, a jump to the middle of the session's time span, and the export of
the whole session to Markdown (the string, no disk).
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
import checkout  # noqa: E402

checkout.use(ROOT)  # this checkout's code as the cctv package, installed or not

from cctv.reducer.export_md import export_markdown  # noqa: E402
from cctv.reducer.filters import PRESETS, ViewFilter  # noqa: E402
from cctv.reducer.item_time import ItemTimes  # noqa: E402
from cctv.viewer.app import CctvApp  # noqa: E402
from cctv.viewer.loader import load_path  # noqa: E402
from cctv.widgets.transcript import TranscriptView  # noqa: E402

OUT = ROOT / "bench" / "out"


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:,.0f} ms"


async def run(path: Path) -> None:
    started = time.perf_counter()
    feed = load_path(path)
    items = len(feed.session.agents[""].items)
    print(f"{path.name}: {path.stat().st_size / 1e6:.0f} MB, {items:,} items in the main "
          f"transcript (loaded in {_ms(time.perf_counter() - started)})")
    app = CctvApp(None, feed=feed, clock=None)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        view = app.screen.query_one(TranscriptView)

        async def timed(label: str, action) -> None:
            t0 = time.perf_counter()
            result = action()
            alone = time.perf_counter() - t0
            await pilot.pause()  # the next frame is drawn
            print(f"  {label:<38} {_ms(alone):>9} {_ms(time.perf_counter() - t0):>9}"
                  + (f"   ({result})" if result not in (None, True, False) else ""))

        print(f"  {'':<38} {'the call':>9} {'+ redraw':>9}")

        for name, preset in PRESETS[1:] + PRESETS[:1]:
            await timed(f"filter: {name.split(':')[0]}", lambda p=preset: view.set_filter(p))
        await timed("filter: only Bash", lambda: view.set_filter(ViewFilter(only_tool="Bash")))
        await timed("filter: everything again", lambda: view.set_filter(ViewFilter()))
        await timed("search 'error'", lambda: f"{view.search('error'):,} items match")
        await timed("n (next match)", view.search_next)
        await timed("time column on", lambda: view.set_show_times(True))
        times = ItemTimes(feed)
        main = feed.session.agents[""].items
        first = next(t for i in main if (t := times.of(i)) is not None)
        last = next(t for i in reversed(main) if (t := times.of(i)) is not None)
        await timed("jump to the middle of the time span",
                    lambda: view.jump_to_time((first + last) / 2))
        t0 = time.perf_counter()
        text = export_markdown(feed.session, time_of=times.of)
        print(f"  {'export the session as Markdown':<38} {_ms(time.perf_counter() - t0):>9}"
              f"   ({len(text.encode()) / 1e6:.1f} MB)")


def main() -> int:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else OUT / "big-stream-json.jsonl"
    if not path.exists():
        OUT.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, str(ROOT / "bench" / "build_big.py"), str(path)],
                       check=True)
    asyncio.run(run(path))
    return 0


if __name__ == "__main__":
    sys.exit(main())
