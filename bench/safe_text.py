#!/usr/bin/env python3
"""What the one sanitising step costs: :func:`reducer.safe.visible` and
:func:`widgets.safe_text.safe_text` on clean and hostile text, and the rows of a
whole real session rendered with it (every item collapsed and expanded).

Usage::

    python bench/safe_text.py            # figures as a table
    python bench/safe_text.py --json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
import checkout  # noqa: E402

checkout.use(ROOT)  # this checkout's code as the cctv package, installed or not

from rich.console import Console  # noqa: E402
from rich.text import Text  # noqa: E402

from cctv.reducer.safe import visible  # noqa: E402
from cctv.viewer.loader import load_path  # noqa: E402
from cctv.widgets.cards import Palette, RenderContext, render_item  # noqa: E402
from cctv.widgets.safe_text import safe_text  # noqa: E402

DEMO = ROOT / "viewer" / "demo" / "demo_session.jsonl"


def best(fn, repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("session", nargs="?", default=str(DEMO))
    args = parser.parse_args()
    clean = ("word " * 20 + "\n") * 500_000  # ~50 MB, nothing to change
    hostile = clean[: len(clean) // 2] + "\x1b]0;t\x07" + clean[len(clean) // 2:]
    row = Text("● Bash  ls -la /tmp  ✓ 0.4s")
    bad_row = Text("● Bash  ls \x1b]0;t\x07 -la  ✓ 0.4s")
    feed = load_path(Path(args.session))
    ctx = RenderContext(feed.session, Console(width=200), Palette())
    items = [i for a in feed.session.agents.values() for i in a.items]

    def render_all() -> None:
        for item in items:
            render_item(item, 120, False, ctx)
            render_item(item, 120, True, ctx)

    figures = {
        "visible, 50 MB clean (s)": best(lambda: visible(clean), 3),
        "visible, 50 MB with one escape (s)": best(lambda: visible(hostile), 3),
        "safe_text, a clean card row (µs)": best(lambda: [safe_text(row) for _ in range(10_000)])
        / 10_000 * 1e6,
        "safe_text, a hostile card row (µs)": best(
            lambda: [safe_text(bad_row) for _ in range(10_000)]) / 10_000 * 1e6,
        f"render {len(items)} items twice, collapsed + expanded (ms)": best(render_all) * 1e3,
    }
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        for name, value in figures.items():
            print(f"{name:60} {value:10.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
