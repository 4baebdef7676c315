"""How long ``q`` takes to end cctv while a big file is still loading (issue 8).

Starts the real ``cctv PATH`` under a pseudo-terminal, waits until the status
bar says "loading", sends ``q`` and times how long until the process has
exited. Also reports when it first painted.

    python bench/quit_latency.py [FILE] [--repeat 3]

Without FILE it writes ``bench/out/quit-load.jsonl`` (~27 MB of a real recording).
"""

from __future__ import annotations

import argparse
import os
import pty
import select
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RECORDING = ROOT / "tests" / "fixtures" / "captures" / "stream" / "03_tools.jsonl"


def one_run(path: Path) -> tuple[float, float]:
    """(seconds to the first "loading" on screen, seconds from q to exit)."""
    started = time.perf_counter()
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(ROOT)
        os.environ["TERM"] = "xterm-256color"
        os.execv(sys.executable, [sys.executable, "-m", "cctv.viewer.cli", str(path)])
    seen = b""
    painted = None
    quit_at = None
    while True:
        ready, _, _ = select.select([fd], [], [], 0.01)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            seen = (seen + chunk)[-4096:]
            if painted is None and b"loading" in seen:
                painted = time.perf_counter() - started
                time.sleep(0.3)  # well inside the load
                quit_at = time.perf_counter()
                os.write(fd, b"q")
        done, _status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.perf_counter() - started > 60:
            os.kill(pid, 9)
            raise SystemExit("cctv did not exit within 60 s")
    ended = time.perf_counter()
    os.close(fd)
    if quit_at is None:
        raise SystemExit("the load finished before q could be sent: use a bigger file")
    return painted or 0.0, ended - quit_at


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("file", nargs="?", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    ns = parser.parse_args()
    path = ns.file
    if path is None:
        path = ROOT / "bench" / "out" / "quit-load.jsonl"
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(RECORDING.read_bytes() * 1000)
    print(f"file {path} ({path.stat().st_size / 1e6:.1f} MB)")
    quits = []
    for _ in range(ns.repeat):
        painted, took = one_run(path)
        quits.append(took)
        print(f"  first paint with 'loading' after {painted:.2f} s; q -> exited in {took:.3f} s")
    print(f"q -> exit: median {statistics.median(quits):.3f} s, max {max(quits):.3f} s")


if __name__ == "__main__":
    main()
