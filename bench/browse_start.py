#!/usr/bin/env python3
"""How long ``cctv`` (the session browser) takes to show its first screen on a
reopen with nothing changed: the real command under a pseudo-terminal.

Each run starts ``python -m viewer.cli browse DIR`` in a 160x48 pseudo-terminal
and times, from just before the fork, until the terminal has received the
browser's first screen: the line that counts the sessions ("2000 sessions
under …"), which is drawn in the same frame as the list, and reads how much
CPU time the process had used by then (``/proc``; steadier than the wall
clock on a machine shared with other work). Then, a second later
(``--quit-after``; 0 presses it at once, while the rest of the list still
fills in and the index refresh runs), ``q``, and the time until the process is
gone.

The index is built once per checkout before the runs (``cctv sessions DIR
--json``, its own cache folder each), so every timed run is a reopen with
nothing changed. Each checkout's modules are byte-compiled first, as an
installed package's are (a checkout run with ``PYTHONDONTWRITEBYTECODE`` would
otherwise compile every module of cctv at each start).

Several checkouts (``--repo``, e.g. the main branch's and a branch's) are run
in turn, run after run, so a noisy machine weighs on each the same; the
medians are reported.

    python bench/browse_start.py [DIR] [--repo PATH ...] [--runs 7] [--quit-after S] [--json]

Without DIR it uses (building it once if missing) the 2,000-session, 200 MB
tree of ``bench/index_bench.py --total-mb 200`` under ``bench/out``.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import pty
import select
import statistics
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import checkout

REPO = Path(__file__).resolve().parents[1]
SIZE = (160, 48)


def _default_tree() -> Path:
    sys.path.insert(0, str(REPO / "bench"))
    import index_bench  # noqa: PLC0415 - only when no DIR is given

    root = REPO / "bench" / "out" / "index-tree-2000-200mb-s1"
    index_bench.generate(root, 2000, 200, 40, 1)
    return root / "projects"


def _env(repo: Path, cache: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TEXTUAL")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.update(XDG_CACHE_HOME=str(cache), PYTHONPATH=str(checkout.import_root(repo)), TERM="xterm-256color",
               COLUMNS=str(SIZE[0]), LINES=str(SIZE[1]))
    return env


def prepare(repo: Path, projects: Path, cache: Path) -> int:
    """Byte-compile ``repo``'s packages and index ``projects`` into ``cache``;
    the number of sessions listed."""
    subprocess.run([sys.executable, "-m", "compileall", "-q",
                    *(str(repo / p) for p in ("viewer", "reducer", "widgets"))],
                   check=True, env=_env(repo, cache))
    res = subprocess.run([sys.executable, "-m", "cctv.viewer.cli", "sessions", str(projects), "--json"],
                         capture_output=True, check=True, cwd=repo, env=_env(repo, cache))
    return len(json.loads(res.stdout))


def _cpu_seconds(pid: int) -> float:
    """CPU time (user + system, every thread) the process has used so far."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def one_run(repo: Path, projects: Path, cache: Path, marker: bytes, timeout: float = 30.0,
            python: tuple[str, ...] = (), quit_after: float = 0.0) -> tuple[float, float, float]:
    """(seconds to the first screen, CPU seconds the process used until then,
    seconds from ``q`` to the process gone); ``q`` is sent ``quit_after`` seconds
    after the first screen; ``python``: interpreter options (e.g. ``-X importtime``)."""
    env = _env(repo, cache)
    started = time.perf_counter()
    pid, fd = pty.fork()
    if pid == 0:  # the child: a terminal of SIZE, then cctv
        fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", SIZE[1], SIZE[0], 0, 0))
        os.chdir(repo)
        os.execve(sys.executable, [sys.executable, *python, "-m", "cctv.viewer.cli", "browse",
                                   str(projects)], env)
    seen = b""
    shown = quit_at = None
    cpu = float("nan")
    while True:
        ready, _, _ = select.select([fd], [], [], 0.005)
        if ready:
            try:
                chunk = os.read(fd, 1 << 16)
            except OSError:
                break
            if not chunk:
                break
            if shown is None:
                seen = seen[-4096:] + chunk
                if marker in seen:
                    shown = time.perf_counter() - started
                    cpu = _cpu_seconds(pid)
        if shown is not None and quit_at is None and time.perf_counter() - started > shown + quit_after:
            quit_at = time.perf_counter()
            os.write(fd, b"q")
        done, _status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.perf_counter() - started > timeout:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            raise SystemExit(f"{repo}: no first screen within {timeout} s")
    ended = time.perf_counter()
    os.close(fd)
    if shown is None or quit_at is None:
        tail = seen[-600:].decode(errors="replace")
        raise SystemExit(f"{repo}: cctv ended before its first screen; it wrote: {tail!r}")
    return shown, cpu, ended - quit_at


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir", nargs="?", type=Path, help="a projects folder")
    ap.add_argument("--repo", type=Path, action="append",
                    help="a checkout of cctv to run (repeatable; default: this one)")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--quit-after", type=float, default=1.0, metavar="S",
                    help="press q this long after the first screen (0: at once)")
    ap.add_argument("--cache", type=Path, default=REPO / "bench" / "out" / "browse-start-cache",
                    help="where each checkout's index is kept (one folder per checkout)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    projects = (args.dir or _default_tree()).resolve()
    repos = [r.resolve() for r in (args.repo or [REPO])]
    caches = {r: args.cache / f"{i}-{r.name}" for i, r in enumerate(repos)}
    counts = {r: prepare(r, projects, caches[r]) for r in repos}
    shown: dict[Path, list[float]] = {r: [] for r in repos}
    cpus: dict[Path, list[float]] = {r: [] for r in repos}
    quits: dict[Path, list[float]] = {r: [] for r in repos}
    for n in range(args.runs):
        for repo in repos if n % 2 == 0 else reversed(repos):
            marker = f"{counts[repo]} sessions under".encode()
            first, cpu, quit_s = one_run(repo, projects, caches[repo], marker,
                                         quit_after=args.quit_after)
            shown[repo].append(first)
            cpus[repo].append(cpu)
            quits[repo].append(quit_s)
            if not args.json:
                print(f"  {repo}: first screen {first:.3f} s (CPU {cpu:.2f} s), q -> gone {quit_s:.3f} s",
                      file=sys.stderr)
    figures = {str(r): {"sessions": counts[r], "first_screen_median_s": round(statistics.median(shown[r]), 3),
                        "first_screen_min_s": round(min(shown[r]), 3),
                        "cpu_to_first_screen_median_s": round(statistics.median(cpus[r]), 3),
                        "quit_median_s": round(statistics.median(quits[r]), 3),
                        "runs": [round(s, 3) for s in shown[r]]} for r in repos}
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0
    print(f"{projects} ({os.cpu_count()} cores), {args.runs} runs each, alternated")
    for repo, f in figures.items():
        print(f"  {repo}: first screen median {f['first_screen_median_s']:.3f} s"
              f" (min {f['first_screen_min_s']:.3f}; CPU {f['cpu_to_first_screen_median_s']:.2f} s),"
              f" q {args.quit_after:g} s later -> gone median {f['quit_median_s']:.3f} s"
              f"  (goal < 0.5 s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
