#!/usr/bin/env python3
"""How long ``cctv FILE`` takes to show a big session's first screen: the real
command under a pseudo-terminal, first open, reopen and reopen after an
append, against a tiny session's start-up and against lnav, in one run.

    python bench/open_bench.py [--stream FILE] [--transcript FILE] [--runs 3] [--json]

For each format (100 MB stream-json and 100 MB on-disk transcript by default:
``bench/out/big-stream-json.jsonl`` and ``big-transcript.jsonl``, built by
``bench/build_big.py`` when missing) a copy is made in ``bench/out/open-bench/``
and, run after run:

* tiny — ``cctv`` on a 3 KB recording (what start-up alone costs);
* lnav — ``lnav FILE`` until the end of the file is on its screen;
* first open — the checkpoint cache emptied; timed to the first screen, then
  the process waits for the checkpoint to be written (not timed) and quits;
* reopen — the same file unchanged;
* appended — 1 MB of the file's own lines appended, then opened.

Each run starts the command in a 160x48 pseudo-terminal and times, from just
before the fork, until the terminal has received the first screen: for cctv
the status bar's model name (drawn with the first folded items), for lnav the
start of the file's last line (control sequences taken out of what it wrote). The peak RSS of each cctv process is read when
it exits (``wait4``). Then ``cctv summary`` cold and warm (time, peak RSS), and
the cache's size against the files it covers. Medians are printed.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import pty
import re
import select
import shutil
import statistics
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import checkout

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "bench" / "out"
WORK = OUT / "open-bench"
TINY = REPO / "tests" / "fixtures" / "captures" / "stream" / "01_simple_text.jsonl"
SIZE = (160, 48)
APPEND = 1_000_000
_ESCAPES = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]|\x1b\([A-Z0-9]|\x1b[=>]")
"""Terminal control sequences: the marker is looked for in the text between them."""


def _env(cache: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TEXTUAL")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.update(XDG_CACHE_HOME=str(cache), PYTHONPATH=str(checkout.import_root(REPO)),
               TERM="xterm-256color", COLUMNS=str(SIZE[0]), LINES=str(SIZE[1]),
               HOME=str(WORK / "home"))
    return env


def _cctv(*args: str) -> list[str]:
    return [sys.executable, "-m", "cctv.viewer.cli", *args]


def run_pty(argv: list[str], env: dict[str, str], marker: bytes, *, timeout: float = 60.0,
            before_quit: object = None) -> tuple[float, float]:
    """(seconds to ``marker`` on the terminal, peak RSS in MB of the process):
    ``argv`` in a pseudo-terminal of SIZE; once the marker is seen,
    ``before_quit()`` (if given) is waited for, then ``q`` ends it."""
    started = time.perf_counter()
    pid, fd = pty.fork()
    if pid == 0:
        fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", SIZE[1], SIZE[0], 0, 0))
        os.chdir(REPO)
        os.execvpe(argv[0], argv, env)
    seen = b""
    shown: float | None = None
    quit_sent = False
    rss = 0.0
    while True:
        ready, _, _ = select.select([fd], [], [], 0.005)
        if ready:
            try:
                chunk = os.read(fd, 1 << 16)
            except OSError:
                chunk = b""
            if chunk and shown is None:
                seen = seen[-8192:] + chunk
                if marker in _ESCAPES.sub(b"", seen):
                    shown = time.perf_counter() - started
        if shown is not None and not quit_sent and (before_quit is None or before_quit()):
            os.write(fd, b"q")
            quit_sent = True
        done, status, usage = os.wait4(pid, os.WNOHANG)
        if done:
            rss = usage.ru_maxrss / 1024
            break
        if time.perf_counter() - started > timeout:
            os.kill(pid, 9)
            os.wait4(pid, 0)
            raise SystemExit(f"{argv}: no first screen within {timeout} s; it wrote {seen[-400:]!r}")
    os.close(fd)
    if shown is None:
        raise SystemExit(f"{argv}: ended before its first screen; it wrote {seen[-400:]!r}")
    return shown, rss


def _model_marker(path: Path, env: dict[str, str]) -> bytes:
    out = subprocess.run(_cctv("summary", str(path), "--json"), capture_output=True, env=env,
                         check=True).stdout
    model = json.loads(out)["model"] or "model ?"
    return model.removeprefix("claude-").encode()


def _last_line_marker(path: Path) -> bytes:
    with open(path, "rb") as fh:
        fh.seek(max(0, path.stat().st_size - 65536))
        last = fh.read().rstrip(b"\n").rsplit(b"\n", 1)[-1]
    return last[:24]


def _entries(cache: Path) -> list[Path]:
    folder = cache / "cctv" / "checkpoints"
    return [p for p in folder.iterdir() if p.suffix == ".ckpt"] if folder.is_dir() else []


def _append(path: Path) -> None:
    """1 MB of the file's own lines (from its middle) appended."""
    size = path.stat().st_size
    with open(path, "rb") as fh:
        fh.seek(size // 2)
        fh.readline()
        block = fh.read(APPEND)
    block = block[: block.rfind(b"\n") + 1]
    with open(path, "ab") as fh:
        fh.write(block)


def _summary(path: Path, env: dict[str, str]) -> tuple[float, float]:
    """(seconds, peak RSS MB) of ``cctv summary PATH``."""
    t = time.perf_counter()
    proc = subprocess.Popen(_cctv("summary", str(path)), stdout=subprocess.DEVNULL, env=env)
    _, _, usage = os.wait4(proc.pid, 0)
    return time.perf_counter() - t, usage.ru_maxrss / 1024


def bench_format(name: str, source: Path, runs: int, lnav: str | None) -> dict[str, object]:
    WORK.mkdir(parents=True, exist_ok=True)
    (WORK / "home").mkdir(exist_ok=True)
    cache = WORK / f"cache-{name}"
    env = _env(cache)
    path = WORK / f"{name}.jsonl"
    size_mb = source.stat().st_size / 1e6
    marker = _model_marker(source, _env(WORK / "cache-none"))
    tiny_marker = _model_marker(TINY, _env(WORK / "cache-none"))
    times: dict[str, list[float]] = {k: [] for k in ("tiny", "lnav", "first", "reopen", "appended")}
    rss: dict[str, list[float]] = {k: [] for k in ("first", "reopen", "appended")}
    for n in range(runs):
        shutil.copyfile(source, path)
        shutil.rmtree(cache, ignore_errors=True)
        times["tiny"].append(run_pty(_cctv(str(TINY)), env, tiny_marker)[0])
        if lnav:
            times["lnav"].append(run_pty([lnav, str(path)], env, _last_line_marker(path))[0])
        for kind in ("first", "reopen", "appended"):
            if kind == "appended":
                _append(path)
            before = {p: p.stat().st_mtime_ns for p in _entries(cache)}

            def written(before: dict[Path, int] = before) -> bool:
                now = {p: p.stat().st_mtime_ns for p in _entries(cache)}
                return kind == "reopen" or any(before.get(p) != t for p, t in now.items())

            shown, peak = run_pty(_cctv(str(path)), env, marker, before_quit=written)
            times[kind].append(shown)
            rss[kind].append(peak)
        print(f"  {name} run {n + 1}: " + ", ".join(f"{k} {v[-1]:.2f} s" for k, v in times.items() if v),
              file=sys.stderr)
    cached = sum(p.stat().st_size for p in _entries(cache))
    shutil.rmtree(cache, ignore_errors=True)
    cold, cold_rss = _summary(path, env)
    warm, warm_rss = _summary(path, env)
    summary_cache = sum(p.stat().st_size for p in _entries(cache))
    return {
        "size_mb": round(size_mb, 1),
        **{f"{k}_s": round(statistics.median(v), 3) for k, v in times.items() if v},
        **{f"{k}_runs": [round(x, 3) for x in v] for k, v in times.items() if v},
        **{f"{k}_rss_x": round(statistics.median(v) / size_mb, 2) for k, v in rss.items()},
        "checkpoint_x": round(cached / path.stat().st_size, 3),
        "summary_cold_s": round(cold, 2), "summary_cold_rss_x": round(cold_rss / size_mb, 2),
        "summary_warm_s": round(warm, 2), "summary_warm_rss_x": round(warm_rss / size_mb, 2),
        "summary_checkpoint_x": round(summary_cache / path.stat().st_size, 3),
    }


def _big(name: str) -> Path:
    path = OUT / f"big-{name}.jsonl"
    if not path.exists():
        OUT.mkdir(parents=True, exist_ok=True)
        args = [] if name == "stream-json" else ["--format", "transcript"]
        subprocess.run([sys.executable, str(REPO / "bench" / "build_big.py"), *args, str(path)],
                       check=True)
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--stream", type=Path, help="a big stream-json session")
    ap.add_argument("--transcript", type=Path, help="a big on-disk transcript")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    lnav = shutil.which("lnav")
    if lnav is None:
        print("lnav is not installed: its column is left out", file=sys.stderr)
    subprocess.run([sys.executable, "-m", "compileall", "-q",
                    *(str(REPO / p) for p in ("viewer", "reducer", "widgets"))], check=True)
    results = {name: bench_format(name, path or _big(name), args.runs, lnav)
               for name, path in (("stream-json", args.stream), ("transcript", args.transcript))}
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    for name, r in results.items():
        tiny = r["tiny_s"]
        print(f"{name}, {r['size_mb']} MB — first screen, medians of {args.runs}:")
        print(f"  tiny session start-up   {tiny:.2f} s")
        if "lnav_s" in r:
            print(f"  lnav                    {r['lnav_s']:.2f} s")
        for kind, label in (("first", "first open"), ("reopen", "reopen unchanged"),
                            ("appended", "reopen after 1 MB appended")):
            print(f"  {label:<24}{r[kind + '_s']:.2f} s ({r[kind + '_s'] / tiny:.2f}× tiny)"
                  f", peak RSS {r[kind + '_rss_x']:.2f}× the file")
        print(f"  checkpoint              {r['checkpoint_x']:.3f}× the file (viewer),"
              f" {r['summary_checkpoint_x']:.3f}× (summary)")
        print(f"  cctv summary            cold {r['summary_cold_s']:.2f} s"
              f" ({r['summary_cold_rss_x']:.2f}× the file in RSS),"
              f" warm {r['summary_warm_s']:.2f} s ({r['summary_warm_rss_x']:.2f}×)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
