"""Append-to-arrival latency of FileTail (the source layer, no UI).

A writer thread appends one line carrying ``time.monotonic_ns()`` every
``--interval-ms`` to a temp file that a FileTail follows; the consumer
notes when each line arrives. Prints min/median/p95/max per setting, plus
the CPU time the process burns while following an idle file.

    python bench/latency.py [-n 200] [--interval-ms 20] [--step-ms 5 10 50]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import checkout  # noqa: E402


checkout.use(Path(__file__).resolve().parents[1])  # this checkout's code as the cctv package, installed or not

from cctv.viewer.sources import FileTail, Lines, Live  # noqa: E402


def _writer(path: Path, n: int, interval: float, start: threading.Event) -> None:
    start.wait()
    with open(path, "ab", buffering=0) as f:
        next_at = time.monotonic()
        for i in range(n):
            f.write(b'{"i":%d,"t":%d,"pad":"%s"}\n' % (i, time.monotonic_ns(), b"p" * 200))
            next_at += interval
            time.sleep(max(0.0, next_at - time.monotonic()))


async def measure(n: int, interval_ms: float, debounce_ms: int, step_ms: int) -> list[float]:
    """Return per-line latencies in ms."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "session.jsonl"
        path.write_bytes(b'{"history":true}\n')
        tail = FileTail(path, debounce_ms=debounce_ms, step_ms=step_ms)
        start = threading.Event()
        writer = threading.Thread(target=_writer, args=(path, n, interval_ms / 1000, start), daemon=True)
        writer.start()
        latencies: list[float] = []
        async with asyncio.timeout(n * interval_ms / 1000 + 30):
            async with contextlib.aclosing(tail.events()) as events:
                async for event in events:
                    if event == Live():
                        start.set()
                    elif isinstance(event, Lines):
                        now = time.monotonic_ns()
                        for line in event.lines:
                            if line.line_no == 1:
                                continue
                            t = int(line.data.split(b'"t":', 1)[1].split(b",", 1)[0])
                            latencies.append((now - t) / 1e6)
                        if len(latencies) >= n:
                            break
        await tail.stop()
        writer.join()
        return latencies


async def idle_cpu(step_ms: int, seconds: float = 2.0) -> float:
    """CPU ms per second spent following a file that does not change."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "idle.jsonl"
        path.write_bytes(b"x\n")
        tail = FileTail(path, step_ms=step_ms)
        events = tail.events()
        async for event in events:
            if event == Live():
                break
        consumer = asyncio.create_task(anext(events, None))
        c0 = time.process_time()
        await asyncio.sleep(seconds)
        used = time.process_time() - c0
        await tail.stop()
        await consumer
        await events.aclose()
        return used * 1000 / seconds


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, default=200, help="lines to append (default 200)")
    ap.add_argument("--interval-ms", type=float, default=20, help="time between appends (default 20)")
    ap.add_argument("--debounce-ms", type=int, default=50, help="FileTail debounce_ms (default 50)")
    ap.add_argument("--step-ms", type=int, nargs="+", default=[10, 50], help="FileTail step_ms values to compare (default 10 50)")
    args = ap.parse_args()

    print(f"FileTail append-to-arrival latency: {args.n} lines, one every {args.interval_ms:g} ms, debounce {args.debounce_ms} ms")
    print(f"{'step ms':>7} {'lines':>6} {'min':>7} {'median':>7} {'p95':>7} {'max':>7} {'idle CPU':>9}")
    for step in args.step_ms:
        lat = await measure(args.n, args.interval_ms, args.debounce_ms, step)
        cpu = await idle_cpu(step)
        print(
            f"{step:>7} {len(lat):>6} {min(lat):>7.1f} {statistics.median(lat):>7.1f} "
            f"{pct(lat, 0.95):>7.1f} {max(lat):>7.1f} {cpu:>6.1f} ms/s"
        )
    print("latencies in ms; idle CPU = process CPU time per second while following an unchanged file")


if __name__ == "__main__":
    asyncio.run(main())
