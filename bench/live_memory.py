"""Memory of the app while a live source pours lines in (issue 8: bounded).

Runs the real app headless on ``cctv run -- CMD`` and samples the process's
resident memory (VmRSS) once a second:

* ``yes``: an endless stream of malformed lines (``y``), as fast as they come;
* ``stderr``: a command that writes 50 MB to its standard error.

    python bench/live_memory.py [--seconds 10] [--case yes|stderr|both]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import checkout  # noqa: E402


checkout.use(Path(__file__).resolve().parents[1])  # this checkout's code as the cctv package, installed or not

from cctv.viewer.app import CctvApp  # noqa: E402
from cctv.viewer.sources import CommandSource  # noqa: E402

STDERR_50MB = ("import sys\n"
               "line = 'warning: ' + 'x' * 90 + '\\n'\n"
               "for _ in range(500_000):\n"
               "    sys.stderr.write(line)\n")


def rss_mb() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


async def run(argv: list[str], seconds: float) -> list[tuple[float, float, int]]:
    """(elapsed s, RSS MB, lines folded) once a second."""
    app = CctvApp(CommandSource(argv), clock=None)
    samples: list[tuple[float, float, int]] = []
    async with app.run_test(size=(120, 30)) as pilot:
        start = time.monotonic()
        while (elapsed := time.monotonic() - start) < seconds:
            await pilot.pause(1.0)
            samples.append((elapsed, rss_mb(), app.shown.feed.session.lines))
            if app.shown.ended is not None and argv[0] != "yes":
                break
        items = len(app.shown.feed.session.main.items)
        entries = len(app.shown.feed.entries)
        stderr = app.shown.stderr
        await app.action_quit()
    print(f"  main items {items:,}, entries kept {entries:,}; stderr lines {stderr.total_lines:,}, "
          f"in memory {len(stderr):,} ({stderr._kept / 1e6:.1f} MB), spilled {stderr.spilled_lines:,}"
          f" to {stderr.spill_path}")
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--case", choices=["yes", "stderr", "both"], default="both")
    ns = parser.parse_args()
    os.environ.setdefault("XDG_CACHE_HOME", tempfile.mkdtemp(prefix="cctv-bench-cache-"))
    cases = {"yes": ["yes"], "stderr": [sys.executable, "-c", STDERR_50MB]}
    for name in (["yes", "stderr"] if ns.case == "both" else [ns.case]):
        print(f"cctv run -- {name if name == 'yes' else 'python (50 MB to stderr)'}:  (RSS at start {rss_mb():.0f} MB)")
        for elapsed, rss, lines in asyncio.run(run(cases[name], ns.seconds)):
            print(f"  {elapsed:5.1f} s  RSS {rss:7.1f} MB  lines folded {lines:>12,}")


if __name__ == "__main__":
    main()
