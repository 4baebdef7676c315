#!/usr/bin/env python3
"""Open a big session in the real app (headless) and time what a user waits for.

    python bench/app_open.py [FILE]        # default: bench/out/big-stream-json.jsonl (built if missing)

Prints, for one run of ``CctvApp(FileTail(FILE))`` at 160×48:

* first screen — from app start until the transcript shows items (the first
  history chunk decoded, folded and painted);
* whole history — until every line is folded (the source says "following");
* scrolling — the mean and worst time to redraw the visible rows after a
  PgUp/PgDn/jump, over 200 moves spread through the session;
* memory — peak RSS of the process minus its RSS before the app was created,
  as a multiple of the file size.

Then it appends 200 lines to a copy of a small recording while the app follows
it and reports append-to-visible latency (see also ``bench/latency.py`` for the
source layer alone).
"""

from __future__ import annotations

import asyncio
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
import checkout  # noqa: E402

checkout.use(ROOT)  # this checkout's code as the cctv package, installed or not

from cctv.viewer.app import CctvApp  # noqa: E402
from cctv.viewer.sources import FileTail  # noqa: E402
from cctv.widgets.transcript import TranscriptView  # noqa: E402

OUT = ROOT / "bench" / "out"
REF = ROOT / "tests" / "fixtures"


def _rss_mb() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def open_big(path: Path) -> dict[str, float]:
    size_mb = path.stat().st_size / 1e6
    base = _rss_mb()
    t0 = time.perf_counter()
    app = CctvApp(FileTail(path), clock=time.time)
    result: dict[str, float] = {"size_mb": size_mb}
    async with app.run_test(size=(160, 48)) as pilot:
        while app.first_paint_at is None:
            await asyncio.sleep(0.005)
        # the app has folded its first slice and yielded ~30 ms for the screen to paint
        result["first_screen_s"] = app.first_paint_at - t0
        result["first_screen_lines"] = app.shown.feed.session.lines
        view = app.screen.query_one(TranscriptView)
        while not app.shown.live:
            await asyncio.sleep(0.02)
        await pilot.pause()
        result["history_s"] = time.perf_counter() - t0
        result["lines"] = app.shown.feed.session.lines
        result["items"] = len(view.items)
        # scrolling: redraw the viewport after moves through the whole session
        times: list[float] = []
        height = view.size.height
        total = max(1, view.virtual_size.height - height)
        for i in range(200):
            target = (i * 7919) % total
            t = time.perf_counter()
            view.scroll_to(y=target, animate=False, immediate=True)
            for y in range(height):
                view.render_line(y)
            times.append(time.perf_counter() - t)
        result["scroll_mean_ms"] = statistics.mean(times) * 1000
        result["scroll_max_ms"] = max(times) * 1000
        for key in ("pageup", "pageup", "pagedown", "g", "G"):
            t = time.perf_counter()
            await pilot.press(key)
            await pilot.pause()
            times.append(time.perf_counter() - t)
        result["key_to_paint_max_ms"] = max(times[-5:]) * 1000
        result["peak_rss_mb"] = _peak_mb() - base
        result["rss_multiple"] = result["peak_rss_mb"] / size_mb
    return result


async def follow_latency(n: int = 200) -> dict[str, float]:
    template = (REF / "captures" / "stream" / "03_tools.jsonl").read_bytes().splitlines(keepends=True)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "live.jsonl"
        path.write_bytes(b"")
        app = CctvApp(FileTail(path), clock=time.time)
        lat: list[float] = []
        async with app.run_test(size=(160, 48)) as pilot:
            await pilot.pause(0.3)
            with open(path, "ab") as fh:
                for i in range(n):
                    line = template[i % len(template)]
                    before = app.shown.feed.session.lines
                    t = time.perf_counter()
                    fh.write(line)
                    fh.flush()
                    while app.shown.feed.session.lines == before:
                        await asyncio.sleep(0.001)
                    await pilot.pause()  # painted
                    lat.append((time.perf_counter() - t) * 1000)
                    await asyncio.sleep(0.02)
    lat.sort()
    return {"n": n, "min_ms": lat[0], "median_ms": statistics.median(lat),
            "p95_ms": lat[int(0.95 * (n - 1))], "max_ms": lat[-1]}


def main() -> None:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else OUT / "big-stream-json.jsonl"
    if not path.exists():
        OUT.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, str(ROOT / "bench" / "build_big.py"), str(path)], check=True)
    r = asyncio.run(open_big(path))
    print(f"file                {path.name}: {r['size_mb']:.1f} MB, {int(r['lines']):,} lines,"
          f" {int(r['items']):,} transcript items")
    print(f"first screen        {r['first_screen_s']:.2f} s ({int(r['first_screen_lines']):,} lines folded by then)")
    print(f"whole history       {r['history_s']:.2f} s")
    print(f"scroll redraw       mean {r['scroll_mean_ms']:.1f} ms, worst {r['scroll_max_ms']:.1f} ms"
          f" (48 rows); key→paint worst {r['key_to_paint_max_ms']:.0f} ms")
    print(f"memory              peak +{r['peak_rss_mb']:.0f} MB = {r['rss_multiple']:.2f}× the file")
    if REF.is_dir():
        lat = asyncio.run(follow_latency())
        print(f"append→painted      min {lat['min_ms']:.0f} / median {lat['median_ms']:.0f} /"
              f" p95 {lat['p95_ms']:.0f} / max {lat['max_ms']:.0f} ms over {lat['n']} lines")


if __name__ == "__main__":
    main()
