#!/usr/bin/env python3
"""The browser's live rows over a 2,000-session tree: from a write to the row's
change, and the CPU the browser uses while nothing changes.

**Latency** (in this process, the browser headless under Textual's Pilot, the
folder watched as in a terminal): a real recording (``captures/projects``'s
tool session) is written into a new session file of the tree in two writes —
up to its Bash call (the row turns ``◐ working · Bash``), then the rest (``◆
needs you``) — ``--samples`` times, each to a fresh file; each write is timed
until the row's state cell says the new state (polled every 5 ms).

**Idle CPU** (the real ``cctv browse DIR`` under a pseudo-terminal, as
``bench/browse_start.py`` runs it): once the first screen is up and the first
refresh has had ``--settle`` seconds, the CPU time (user + system, every
thread, from ``/proc``) the process uses over ``--idle`` seconds with nothing
written; with no session live, and with ``--live N`` sessions written just
before (their ages are redrawn while they are live). Several checkouts
(``--repo``) run in turn, alternated.

    python bench/live_latency.py [DIR] [--samples 20] [--idle 30] [--repo PATH ...] [--json]

Without DIR: the 2,000-session tree of ``bench/browse_start.py``, every file
dated two days back (none live) before the runs.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import pty
import select
import shutil
import statistics
import struct
import sys
import tempfile
import time
from pathlib import Path

import checkout
from browse_start import SIZE, _cpu_seconds, _default_tree, _env, prepare

REPO = Path(__file__).resolve().parents[1]
RECORDING = REPO / "tests/fixtures/captures/projects/-home-ada-src-demo/f70c6abd-bc92-44a7-80e8-76abec8cb9d7.jsonl"
OLD = time.time() - 2 * 86400


def _age(projects: Path) -> None:
    """Every file of the tree two days old: none live."""
    for path in projects.rglob("*"):
        os.utime(path, (OLD, OLD))


def _split(data: bytes) -> tuple[bytes, bytes]:
    lines = data.splitlines(True)
    n = next(i for i, line in enumerate(lines, 1) if b'"command":"python3 test_utils.py' in line)
    return b"".join(lines[:n]), b"".join(lines[n:])


# --- latency -------------------------------------------------------------------------------


async def _latency(projects: Path, samples: int) -> list[float]:
    checkout.use(REPO)
    from textual.widgets import DataTable

    from cctv.viewer.app import BrowseOptions, CctvApp
    from cctv.viewer.screens.browse import BrowseScreen

    head, rest = _split(RECORDING.read_bytes())
    folder = projects / "-bench-live"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    app = CctvApp(None, clock=None, browse=BrowseOptions(projects))
    times: list[float] = []
    async with app.run_test(size=SIZE) as pilot:
        while not (isinstance(app.screen, BrowseScreen) and app.screen.refreshed):
            await pilot.pause(0.05)
        await pilot.pause(1.0)
        table = app.screen.query_one("#sessions", DataTable)

        def cell(path: Path) -> str:
            return str(table.get_row(str(path))[0]) if str(path) in table.rows else ""

        async def timed(path: Path, data: bytes, says: str) -> float:
            with path.open("ab") as fh:
                fh.write(data)
            start = time.perf_counter()
            while not cell(path).startswith(says):
                if time.perf_counter() - start > 30:
                    raise SystemExit(f"{path.name}: the row never said {says!r} ({cell(path)!r})")
                await pilot.pause(0.005)
            return time.perf_counter() - start

        for n in range(samples):
            path = folder / f"00000000-0000-4000-8000-{n:012d}.jsonl"
            new = await timed(path, head, "◐ working · Bash")
            grown = await timed(path, rest, "◆ needs you")
            times += [new, grown]
            print(f"  new file -> row {new:.3f} s, grown -> row {grown:.3f} s", file=sys.stderr)
            await pilot.pause(0.3)
    shutil.rmtree(folder, ignore_errors=True)
    return times


# --- idle CPU ------------------------------------------------------------------------------


def _idle(repo: Path, projects: Path, cache: Path, marker: bytes, settle: float,
          window: float) -> float:
    """CPU seconds ``cctv browse`` of ``repo`` uses over ``window`` seconds, nothing written."""
    env = _env(repo, cache)
    pid, fd = pty.fork()
    if pid == 0:
        import fcntl
        import termios

        fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", SIZE[1], SIZE[0], 0, 0))
        os.chdir(repo)
        os.execve(sys.executable, [sys.executable, "-m", "cctv.viewer.cli", "browse", str(projects)],
                  env)
    seen = b""
    shown = None
    start = time.perf_counter()
    cpu_at = cpu = None
    while True:
        ready, _, _ = select.select([fd], [], [], 0.05)
        if ready:
            try:
                chunk = os.read(fd, 1 << 16)
            except OSError:
                break
            seen = seen[-4096:] + chunk
            if shown is None and marker in seen:
                shown = time.perf_counter()
        now = time.perf_counter()
        if shown is not None and cpu_at is None and now - shown > settle:
            cpu_at, cpu = now, _cpu_seconds(pid)
        if cpu_at is not None and now - cpu_at > window:
            used = _cpu_seconds(pid) - (cpu or 0.0)
            os.write(fd, b"q")
            break
        if now - start > settle + window + 60:
            os.kill(pid, 9)
            raise SystemExit(f"{repo}: no first screen")
    deadline = time.perf_counter() + 10
    while time.perf_counter() < deadline:  # read on until it is gone
        ready, _, _ = select.select([fd], [], [], 0.05)
        if ready:
            try:
                if not os.read(fd, 1 << 16):
                    break
            except OSError:
                break
        if os.waitpid(pid, os.WNOHANG)[0]:
            break
    else:
        os.kill(pid, 9)
    os.close(fd)
    return used


def _write_live(projects: Path, count: int) -> list[Path]:
    folder = projects / "-bench-live"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    head, rest = _split(RECORDING.read_bytes())
    paths = []
    for n in range(count):
        path = folder / f"00000000-0000-4000-9000-{n:012d}.jsonl"
        path.write_bytes(head + rest if n % 2 else head)
        paths.append(path)
    return paths


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir", nargs="?", type=Path, help="a projects folder")
    ap.add_argument("--samples", type=int, default=20, help="sessions written (two writes each)")
    ap.add_argument("--idle", type=float, default=30.0, metavar="S", help="idle window")
    ap.add_argument("--settle", type=float, default=10.0, metavar="S",
                    help="wait after the first screen before the idle window")
    ap.add_argument("--live", type=int, default=4, metavar="N",
                    help="live sessions written before the second idle run (0: no such run)")
    ap.add_argument("--runs", type=int, default=3, help="idle runs per checkout and case")
    ap.add_argument("--repo", type=Path, action="append",
                    help="a checkout to measure idle (repeatable; default: this one)")
    ap.add_argument("--no-latency", action="store_true")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    projects = (args.dir or _default_tree()).resolve()
    shutil.rmtree(projects / "-bench-live", ignore_errors=True)
    _age(projects)
    figures: dict[str, object] = {"tree": str(projects)}
    if not args.no_latency:
        with tempfile.TemporaryDirectory() as cache:
            os.environ["XDG_CACHE_HOME"] = cache
            times = sorted(asyncio.run(_latency(projects, args.samples)))
        figures["latency_s"] = {"median": round(statistics.median(times), 3),
                                "p95": round(times[int(0.95 * (len(times) - 1))], 3),
                                "max": round(times[-1], 3), "samples": len(times)}
        if not args.json:
            print(f"write -> row: median {figures['latency_s']['median']:.3f} s, p95 "
                  f"{figures['latency_s']['p95']:.3f} s, max {times[-1]:.3f} s ({len(times)} writes)",
                  file=sys.stderr)
    repos = [r.resolve() for r in (args.repo or [REPO])]
    cases = [0] + ([args.live] if args.live else [])
    idle: dict[str, dict[str, list[float]]] = {str(r): {str(c): [] for c in cases} for r in repos}
    with tempfile.TemporaryDirectory() as caches:
        for live in cases:
            _age(projects)
            shutil.rmtree(projects / "-bench-live", ignore_errors=True)
            counts = {r: prepare(r, projects, Path(caches) / f"{i}") for i, r in enumerate(repos)}
            for n in range(args.runs):
                for i, repo in enumerate(repos if n % 2 == 0 else reversed(repos)):
                    if live:
                        _write_live(projects, live)
                    marker = f"sessions under".encode()
                    used = _idle(repo, projects, Path(caches) / f"{repos.index(repo)}", marker,
                                 args.settle, args.idle)
                    idle[str(repo)][str(live)].append(used)
                    if not args.json:
                        print(f"  {repo} ({counts[repo]} sessions, {live} live): "
                              f"{used:.3f} CPU s over {args.idle:g} s idle", file=sys.stderr)
    shutil.rmtree(projects / "-bench-live", ignore_errors=True)
    figures["idle_cpu_s"] = {repo: {f"{live} live": {"median": round(statistics.median(v), 3),
                                                     "runs": [round(x, 3) for x in v],
                                                     "window_s": args.idle}
                                    for live, v in cases_.items()} for repo, cases_ in idle.items()}
    print(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
