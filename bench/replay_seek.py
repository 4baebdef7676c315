#!/usr/bin/env python3
"""Replay on a big session: first frame, checkpoints, seek times, --emit drift.

    python bench/replay_seek.py [--size-mb 100] [--format stream-json|transcript] [--rest S] [FILE]

Without FILE, ``bench/build_big.py`` builds ``bench/out/big-<format>-<size>.jsonl``.
Prints:

* first frame — decoding the file, the markers and pacing, and frame 1 shown
  (what the user waits for before they can step);
* checkpoints — the worker's time to build them (a forked child folds and
  pickles, as in the app, twice: the second pass shares the final state's
  units, see reducer/replay/pool.py), how many, every how many frames, their
  compressed bytes and the RSS they and their pool add to this process,
  against the file size; in the
  app, ``end`` pressed while they are being built (the fold runs in a worker:
  the key to the next screen, and to the end's);
* pure seek — :meth:`Replay.seek` to random targets, backward and forward,
  and single steps back near the end (p50 / p95 / max);
* in the app — key to screen in ``ReplayApp.run_test`` (160×48): ``end``,
  ``home``, ``←`` at the end, marker jumps and timeline clicks (random seeks
  back and forth), each from the key until the first screen update after the
  seek, after ``--rest`` seconds on the frame before (the app restores ahead
  meanwhile); a timeline click after the pointer rested there (the app
  restores for there meanwhile); and ``←`` held down (keys 30 ms apart, no
  rest); each also split into the pure seek (``Replay.seek`` inside the
  app) and the app's overhead on top of it (the rest of the key to the
  screen: views, panels, drawing); ``--tasks`` shows the tasks panel first;
* ``--emit`` — a minute of recorded time at 10× written to /dev/null against
  the real clock: total drift and the worst line's distance from its time.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
import checkout  # noqa: E402

checkout.use(ROOT)  # this checkout's code as the cctv package, installed or not

from cctv.viewer.replay.builder import build_checkpoints  # noqa: E402
from cctv.viewer.replay.emit import emit, plan_emit  # noqa: E402
from cctv.viewer.replay.recording import load_recording  # noqa: E402

OUT = ROOT / "bench" / "out"


def _rss_mb() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def _ms(values: list[float]) -> str:
    if not values:
        return "n/a"
    values = sorted(values)
    p95 = values[min(len(values) - 1, int(0.95 * len(values)))]
    return (f"p50 {statistics.median(values) * 1000:6.1f} ms · p95 {p95 * 1000:6.1f} ms · "
            f"max {values[-1] * 1000:6.1f} ms  (n={len(values)})")


def bench_pure(path: Path, seeks: int) -> None:
    size_mb = path.stat().st_size / 1e6
    base = _rss_mb()
    t0 = time.perf_counter()
    rec = load_recording(path)
    replay = rec.replay()
    replay.seek(1)
    first = time.perf_counter() - t0
    viewer_mb = _rss_mb() - base
    n = len(replay)
    print(f"{path.name}: {size_mb:.1f} MB, {n:,} frames, pacing {replay.timeline.source}")
    print(f"  first frame       {first:6.2f} s (decode, markers, pacing, frame 1); "
          f"decoded frames take {viewer_mb:.0f} MB RSS")

    # the app's worker job (a forked child pickles), run here on its own to time it
    gc.collect()
    before = _rss_mb()
    t0 = time.perf_counter()
    for _ in build_checkpoints(replay):
        pass
    built = time.perf_counter() - t0
    gc.collect()
    cps = replay.checkpoints
    added = _rss_mb() - before
    gaps = [b - a for a, b in zip([0, *cps.positions], cps.positions)]
    spacing = (f"every {min(gaps):,}–{max(gaps):,} frames" if gaps and min(gaps) != max(gaps)
               else f"every {cps.interval:,} frames")
    print(f"  checkpoints       {built:6.2f} s to build {len(cps)} ({spacing}, and the frame "
          f"before the last) "
          f"in a child process; {cps.bytes / 1e6:.1f} MB compressed = "
          f"{cps.bytes / 1e6 / size_mb:.2f}× the file; this process's RSS +{added:.0f} MB = "
          f"{added / size_mb:.2f}× the file")

    def seek(target: int) -> float:
        """Seconds of one seek; then what it left behind is freed, untimed, as
        the app's worker does after the screen is drawn."""
        t0 = time.perf_counter()
        replay.seek(target)
        dt = time.perf_counter() - t0
        if hasattr(replay, "free_retired"):
            replay.free_retired()
        return dt

    rng = random.Random(7)
    backward: list[float] = []
    forward: list[float] = []
    for _ in range(seeks):
        current = rng.randint(1, n)
        seek(current)
        target = rng.randint(1, n)
        dt = seek(target)
        (backward if target < current else forward).append(dt)
    print(f"  seek backward     {_ms(backward)}")
    print(f"  seek forward      {_ms(forward)}")
    steps: list[float] = []
    seek(n)
    for _ in range(20):
        steps.append(seek(replay.position - 1))
    print(f"  ← near the end    {_ms(steps)}")
    steps = []
    gc.collect()
    before = _rss_mb()
    for _ in range(20 if hasattr(replay, "prepare_spare") else 0):
        replay.prepare_spare()  # what the app does while the user looks at the frame
        steps.append(seek(replay.position - 1))
    if steps:
        replay.prepare_spare()
        gc.collect()
        print(f"  ← made ahead      {_ms(steps)}  (the restore made beforehand, as the app "
              f"does in a worker; it holds +{_rss_mb() - before:.0f} MB RSS)")
    by_pos: list[str] = []
    for share in (0.1, 0.5, 0.9, 1.0):
        seek(n)
        target = max(1, int(n * share) - 1)
        by_pos.append(f"{int(share * 100)}%: {seek(target) * 1000:.0f} ms")
    print("  back from the end to  " + " · ".join(by_pos))


async def bench_app(path: Path, rest: float, tasks: bool = False, rounds: int = 5) -> None:
    from cctv.viewer.replay.app import ReplayApp

    t0 = time.perf_counter()
    rec = load_recording(path, head_bytes=4 << 20)  # as `cctv replay PATH` opens it
    app = ReplayApp(rec, label=path.name)
    first_drawn: list[float] = []
    real_display = app._display

    def display(screen, renderable) -> None:
        real_display(screen, renderable)
        if renderable is not None and not first_drawn:
            first_drawn.append(time.perf_counter())

    app._display = display
    timings: dict[str, list[float]] = {"end": [], "home": [], "← at the end": [],
                                       "next turn / error / task": []}
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        drawn = f"{first_drawn[0] - t0:.2f} s" if first_drawn else "n/a"
        print(f"  app first screen  {time.perf_counter() - t0:6.2f} s until idle, first drawn "
              f"after {drawn} (the file's first 4 MB; the rest, then checkpoints, in workers)")
        app._display = real_display
        t0 = time.perf_counter()
        steps_while_building = 0
        while not rec.complete and time.perf_counter() - t0 < 300:
            await pilot.press("right")
            steps_while_building += 1
            await pilot.pause(0.05)
        print(f"  app rest of file  {time.perf_counter() - t0:6.2f} s in a worker; "
              f"{steps_while_building} steps taken meanwhile")
        t0 = time.perf_counter()
        await _jump_while_building(app, pilot)
        steps_while_building = 0
        while not app.shown.replay.checkpoints.pooled and time.perf_counter() - t0 < 300:
            await pilot.press("right")
            steps_while_building += 1
            await pilot.pause(0.05)
        print(f"  app checkpoints   {time.perf_counter() - t0:6.2f} s in the worker; "
              f"{steps_while_building} steps taken meanwhile")

        if tasks:
            await pilot.press("t")
            await pilot.pause()
        timings, seeks = await _key_to_screen(app, pilot, rest, rounds)
    for name, values in timings.items():
        print(f"  app key→screen {name:<27} {_ms(values)}")
    print("  of which (p50 / max): the pure seek in the app · the app's overhead on top of it")
    for name, values in timings.items():
        pure = seeks[name]
        over = [total - seek for total, seek in zip(values, pure)]
        if values:
            print(f"    {name:<27} seek {statistics.median(pure) * 1000:6.1f} / "
                  f"{max(pure) * 1000:6.1f} ms · overhead {statistics.median(over) * 1000:6.1f} / "
                  f"{max(over) * 1000:6.1f} ms")


@contextmanager
def _screen_updates(app, positions: list[int] | None = None) -> Iterator[list[float]]:
    """The times the app puts a new screen on the terminal, while inside
    (and into ``positions``, the replay's position each showed)."""
    real_display = app._display
    drawn: list[float] = []

    def display(screen, renderable) -> None:
        real_display(screen, renderable)
        if renderable is not None:
            drawn.append(time.perf_counter())
            if positions is not None:
                positions.append(app.shown.replay.position)

    app._display = display
    try:
        yield drawn
    finally:
        app._display = real_display


async def _jump_while_building(app, pilot) -> None:
    """``end`` as soon as the checkpoints start building (none near the end
    yet): the key to the next screen (the bar says where it is going, the
    fold runs in a worker) and the key to the end's screen (the first screen
    drawn at the end: taken from the draws' own record, since this coroutine
    may notice the end later than the app draws it, the worker's fold and the
    restore made ahead after it holding the interpreter lock)."""
    shown: list[int] = []
    with _screen_updates(app, shown) as drawn:
        n = len(app.shown.replay)
        built = len(app.shown.replay.checkpoints)
        t0 = time.perf_counter()
        await pilot.press("end")
        while not drawn and time.perf_counter() - t0 < 30:
            await asyncio.sleep(0.002)
        first = drawn[0] - t0 if drawn else float("nan")
        while n not in shown and time.perf_counter() - t0 < 60:
            await asyncio.sleep(0.002)
        landed = drawn[shown.index(n)] - t0 if n in shown else float("nan")
        print(f"  app end while building ({built} checkpoints so far): next screen "
              f"{first * 1000:.0f} ms, the end's screen {landed:.2f} s")
        await pilot.press("home")
        await pilot.pause(0.2)


async def _key_to_screen(app, pilot, rest: float, rounds: int
                         ) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Key to screen: from the key (or the timeline click's seek) until the
    first screen update after the seek returned, each after ``rest`` seconds
    on the frame before (a user looking at it: the app restores ahead meanwhile)."""
    sought: list[float] = []
    seek_time: list[float] = []
    real_go_to = app.go_to
    replay = app.shown.replay
    real_seek = replay.seek

    def seek(target: int):
        t0 = time.perf_counter()
        try:
            return real_seek(target)
        finally:
            seek_time.append(time.perf_counter() - t0)

    replay.seek = seek

    def go_to(position: int) -> None:
        real_go_to(position)
        sought.append(time.perf_counter())

    app.go_to = go_to
    with _screen_updates(app) as drawn:

        async def timed(name: str, act, wait: float = rest) -> None:
            await asyncio.sleep(wait)
            seek_time.clear()
            t0 = time.perf_counter()
            await act()
            while time.perf_counter() - t0 < 30:
                if sought and sought[-1] > t0 and drawn and drawn[-1] > sought[-1]:
                    timings[name].append(next(t for t in drawn if t > sought[-1]) - t0)
                    seeks[name].append(sum(seek_time))
                    return
                await asyncio.sleep(0.002)

        def press(k: str):
            return lambda: pilot.press(k)

        def jump(target: int):
            async def act() -> None:
                app.go_to(target)
            return act

        timings: dict[str, list[float]] = {
            "end": [], "← at the end": [], "home": [], "next turn / error / task": [],
            "timeline click, backward": [], "timeline click, forward": [],
            "timeline click, pointer rested": [], "← held (no rest)": [],
        }
        seeks: dict[str, list[float]] = {name: [] for name in timings}
        rng = random.Random(11)
        n = len(app.shown.replay)
        for _ in range(rounds):
            await timed("end", press("end"))
            await timed("← at the end", press("left"))
            await timed("home", press("home"))
            for k in ("right_square_bracket", "e", "a"):
                await timed("next turn / error / task", press(k))
            here = rng.randint(n // 10, n)
            await timed("timeline click, forward", jump(here))
            await timed("timeline click, backward", jump(rng.randint(1, here - 1)))
            await timed("timeline click, forward", jump(rng.randint(app.shown.replay.position + 1, n)))
            aimed = rng.randint(1, n)
            app.aim_at(aimed)  # the pointer rests over the timeline there, then clicks
            await timed("timeline click, pointer rested", jump(aimed))
            app.aim_at(None)
            for i in range(3):
                await timed("← held (no rest)", press("left"), rest if i == 0 else 0.03)
    app.go_to = real_go_to
    replay.seek = real_seek
    return timings, seeks


def bench_emit(path: Path, seconds: float = 60.0, speed: float = 10.0) -> None:
    plan = plan_emit(path)
    end = next((i for i, t in enumerate(plan.offsets) if t >= seconds), len(plan.offsets) - 1)
    plan.lines = plan.lines[:end + 1]
    plan.offsets = plan.offsets[:end + 1]
    recorded = plan.offsets[-1] - plan.offsets[0]
    with open(os.devnull, "wb") as out:
        t0 = time.monotonic()
        emit(plan, out, speed=speed)
        took = time.monotonic() - t0
    drift = took - recorded / speed
    worst = max(abs(x) for x in plan.lateness)
    print(f"  --emit            {recorded:.1f} s recorded ({plan.source}) at {speed:g}× in "
          f"{took:.3f} s: total drift {drift * 1000:+.1f} ms, worst line {worst * 1000:.1f} ms "
          f"off its time ({len(plan.lines):,} lines)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file", nargs="?", type=Path)
    ap.add_argument("--size-mb", type=float, default=100)
    ap.add_argument("--format", choices=("stream-json", "transcript"), default="stream-json")
    ap.add_argument("--seeks", type=int, default=60)
    ap.add_argument("--no-app", action="store_true", help="skip the in-app timings")
    ap.add_argument("--app-only", action="store_true",
                    help="only the in-app timings (no pure seeks, no --emit)")
    ap.add_argument("--tasks", action="store_true", help="in the app, show the tasks panel")
    ap.add_argument("--rounds", type=int, default=5,
                    help="in the app, rounds of the keys and clicks timed (each round: 1 end, "
                         "2 forward clicks, 1 backward click, ...)")
    ap.add_argument("--rest", type=float, default=1.5,
                    help="seconds on a frame before each timed key (default 1.5)")
    ns = ap.parse_args()
    path = ns.file
    if path is None:
        path = OUT / f"big-{ns.format}-{ns.size_mb:g}.jsonl"
        if not path.exists():
            OUT.mkdir(parents=True, exist_ok=True)
            subprocess.run([sys.executable, str(ROOT / "bench" / "build_big.py"), str(path),
                            "--size-mb", str(ns.size_mb), "--format", ns.format], check=True)
    if not ns.app_only:
        bench_pure(path, ns.seeks)
    if not ns.no_app:
        asyncio.run(bench_app(path, ns.rest, ns.tasks, ns.rounds))
    if not ns.app_only:
        bench_emit(path)


if __name__ == "__main__":
    main()
