#!/usr/bin/env python3
"""The tasks panel's refresh on a big session: full rebuild vs the incremental rows.

    python bench/tasks_panel.py [FILE]     # default bench/out/big-stream-json.jsonl (built if missing)

Folds FILE but its last 2,000 lines, then times, per refresh of the panel's
rows (what ``TasksPanel.update_state`` does 10× a second while frames arrive):

* **full** — :func:`widgets.task_rows.task_rows`, every row rebuilt (before
  the incremental rows, every refresh did this);
* **tick** — :meth:`TaskRowCache.refresh` with no new frame and the clock
  0.1 s later (the rows whose elapsed time runs from ``now`` are rebuilt);
* **frame** — one more frame folded, its change records noted, then refresh
  (median and max over the last 2,000 lines, one at a time).
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
import checkout  # noqa: E402

checkout.use(ROOT)  # this checkout's code as the cctv package, installed or not
sys.path.insert(0, str(ROOT / "bench"))

from cctv.reducer.feed import Feed, read_file_lines  # noqa: E402
from cctv.widgets.task_rows import TaskRowCache, task_rows  # noqa: E402


def main(argv: list[str]) -> int:
    path = Path(argv[0]) if argv else ROOT / "bench" / "out" / "big-stream-json.jsonl"
    if not path.exists():
        from build_big import build

        build(path, size_mb=100, fmt="stream-json", sessions="one")
    lines = [ln for batch in read_file_lines(path) for ln in batch]
    head, tail = lines[:-2000], lines[-2000:]
    feed = Feed(keep_raw=False)
    now = time.time()
    for start in range(0, len(head), 1000):  # as live frames: tasks' elapsed time runs
        feed.feed(head[start:start + 1000], received_at=now - (len(head) - start) / 1000)
    session = feed.session
    cache = TaskRowCache()
    cache.refresh(session, now)
    rows = len(cache.rows)

    def timed(fn, n: int) -> list[float]:
        out = []
        for _ in range(n):
            t0 = time.perf_counter()
            fn()
            out.append(time.perf_counter() - t0)
        return out

    full = timed(lambda: task_rows(session, now), 10)
    clock = iter(range(1, 10**9))
    tick = timed(lambda: cache.refresh(session, now + next(clock) * 0.1), 200)
    frames = []
    for line in tail:
        t0 = time.perf_counter()
        now += 0.01
        cache.note(session, feed.feed([line], received_at=now))
        cache.refresh(session, now)
        frames.append(time.perf_counter() - t0)
    assert cache.rows == task_rows(session, now)

    def ms(v: list[float]) -> str:
        return f"median {statistics.median(v) * 1000:7.3f} ms · max {max(v) * 1000:7.3f} ms"

    print(f"{path.name}: {len(lines):,} lines, {rows:,} rows ({cache.running} running, "
          f"{len(cache._live)} with a clock-driven elapsed time)")
    print(f"full rebuild (task_rows)       {ms(full)}")
    print(f"tick (no new frame)            {ms(tick)}")
    print(f"one frame folded + refresh     {ms(frames)}  (fold included)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
