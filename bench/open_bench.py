#!/usr/bin/env python3
"""How long ``cctv FILE`` takes to show a big session's first screen: the real
command under a pseudo-terminal, first open, reopen and reopen after an
append, against a tiny session's start-up and against lnav, in one run.

    python bench/open_bench.py [--stream FILE] [--transcript FILE] [--runs 3] [--base CHECKOUT] [--json]

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
a model's name in the status bar (drawn with the first folded items: at the
start of the session on a first open, at its end on a reopen), for lnav the
start of the file's last line (control sequences taken out of what it wrote). The peak RSS of each cctv process (``VmHWM``: the
process's own, not the forked child's that writes the checkpoint) is read
before it quits. Then ``cctv summary`` cold and warm (time, peak RSS), and
the cache's size against the files it covers. Last, ``cctv sessions DIR`` over
a folder holding the session, then again after one line was appended (a new
process), for this checkout and ``--base`` (time and peak RSS of each).
Medians are printed.
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


def _env(cache: Path, repo: Path = REPO) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TEXTUAL")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.update(XDG_CACHE_HOME=str(cache), PYTHONPATH=str(checkout.import_root(repo)),
               TERM="xterm-256color", COLUMNS=str(SIZE[0]), LINES=str(SIZE[1]),
               HOME=str(WORK / "home"))
    return env


def _cctv(*args: str) -> list[str]:
    return [sys.executable, "-m", "cctv.viewer.cli", *args]


def _hwm_mb(pid: int) -> float:
    """The peak RSS of the process ``pid`` itself (``VmHWM``), in MB."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def run_pty(argv: list[str], env: dict[str, str], marker: re.Pattern[bytes], *,
            timeout: float = 60.0, before_quit: object = None) -> tuple[float, float]:
    """(seconds to ``marker`` on the terminal, peak RSS in MB of the process
    itself, not of a child it forked): ``argv`` in a pseudo-terminal of SIZE;
    once the marker is seen, ``before_quit()`` (if given) is waited for, then
    ``q`` ends it."""
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
                if marker.search(_ESCAPES.sub(b"", seen)):
                    shown = time.perf_counter() - started
        if shown is not None and not quit_sent and (before_quit is None or before_quit()):
            rss = _hwm_mb(pid)
            os.write(fd, b"q")
            quit_sent = True
        done, _status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.perf_counter() - started > timeout:
            os.kill(pid, 9)
            os.wait4(pid, 0)
            raise SystemExit(f"{argv}: no first screen within {timeout} s; it wrote {seen[-400:]!r}")
    os.close(fd)
    if shown is None:
        raise SystemExit(f"{argv}: ended before its first screen; it wrote {seen[-400:]!r}")
    return shown, rss


MODEL = re.compile(rb"(?:opus|sonnet|haiku)-\d")
"""A model's name in cctv's status bar: drawn once the first lines are folded."""


def _last_line_marker(path: Path) -> re.Pattern[bytes]:
    with open(path, "rb") as fh:
        fh.seek(max(0, path.stat().st_size - 65536))
        last = fh.read().rstrip(b"\n").rsplit(b"\n", 1)[-1]
    return re.compile(re.escape(last[:24]))


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


def _timed(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(seconds, peak RSS MB) of a command."""
    t = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, env=env)
    _, _, usage = os.wait4(proc.pid, 0)
    return time.perf_counter() - t, usage.ru_maxrss / 1024


def _summary(path: Path, env: dict[str, str]) -> tuple[float, float]:
    """(seconds, peak RSS MB) of ``cctv summary PATH``."""
    return _timed(_cctv("summary", str(path)), env)


def bench_index(name: str, source: Path, repos: list[Path]) -> dict[str, object]:
    """``cctv sessions DIR`` over a folder holding the big session, then again
    after one line was appended to it (a new process: nothing kept but the
    cache), for each checkout in ``repos``: (seconds, peak RSS MB) of each."""
    out: dict[str, object] = {}
    for repo in repos:
        root = WORK / f"index-{name}"
        shutil.rmtree(root, ignore_errors=True)
        session = root / "projects" / "-bench-project" / f"{name}.jsonl"
        session.parent.mkdir(parents=True)
        shutil.copyfile(source, session)
        env = _env(root / "cache", repo)
        argv = _cctv("sessions", str(root / "projects"), "--json")
        first = _timed(argv, env)
        deadline = time.monotonic() + 30  # a forked child writes the checkpoint
        while not _entries(root / "cache") and time.monotonic() < deadline:
            time.sleep(0.05)
        with open(session, "rb") as fh:
            fh.seek(-4096, os.SEEK_END)
            last = fh.read().rstrip(b"\n").rsplit(b"\n", 1)[-1]
        with open(session, "ab") as fh:
            fh.write(last + b"\n")
        again = _timed(argv, env)
        out[str(repo)] = {"first_s": round(first[0], 2), "first_rss_mb": round(first[1]),
                          "appended_s": round(again[0], 2), "appended_rss_mb": round(again[1])}
        shutil.rmtree(root, ignore_errors=True)
    return out


def bench_format(name: str, source: Path, runs: int, lnav: str | None) -> dict[str, object]:
    WORK.mkdir(parents=True, exist_ok=True)
    (WORK / "home").mkdir(exist_ok=True)
    cache = WORK / f"cache-{name}"
    env = _env(cache)
    path = WORK / f"{name}.jsonl"
    size_mb = source.stat().st_size / 1e6
    times: dict[str, list[float]] = {k: [] for k in ("tiny", "lnav", "first", "reopen", "appended")}
    rss: dict[str, list[float]] = {k: [] for k in ("first", "reopen", "appended")}
    for n in range(runs):
        shutil.copyfile(source, path)
        shutil.rmtree(cache, ignore_errors=True)
        times["tiny"].append(run_pty(_cctv(str(TINY)), env, MODEL)[0])
        if lnav:
            times["lnav"].append(run_pty([lnav, str(path)], env, _last_line_marker(path))[0])
        for kind in ("first", "reopen", "appended"):
            if kind == "appended":
                _append(path)
            before = {p: p.stat().st_mtime_ns for p in _entries(cache)}

            def written(before: dict[Path, int] = before) -> bool:
                now = {p: p.stat().st_mtime_ns for p in _entries(cache)}
                return kind == "reopen" or any(before.get(p) != t for p, t in now.items())

            shown, peak = run_pty(_cctv(str(path)), env, MODEL, before_quit=written)
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
    ap.add_argument("--base", type=Path, help="another checkout to compare the index with (e.g. main)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    lnav = shutil.which("lnav")
    if lnav is None:
        print("lnav is not installed: its column is left out", file=sys.stderr)
    subprocess.run([sys.executable, "-m", "compileall", "-q",
                    *(str(REPO / p) for p in ("viewer", "reducer", "widgets"))], check=True)
    sources = {"stream-json": args.stream or _big("stream-json"),
               "transcript": args.transcript or _big("transcript")}
    results = {name: bench_format(name, path, args.runs, lnav) for name, path in sources.items()}
    repos = [REPO] + ([args.base.resolve()] if args.base else [])
    for name, path in sources.items():
        results[name]["index"] = bench_index(name, path, repos)
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    for name, r in results.items():
        tiny = r["tiny_s"]
        print(f"{name}, {r['size_mb']} MB — first screen, medians of {args.runs}:")
        print(f"  tiny session start-up       {tiny:.2f} s")
        if "lnav_s" in r:
            print(f"  lnav                        {r['lnav_s']:.2f} s")
        for kind, label in (("first", "first open"), ("reopen", "reopen unchanged"),
                            ("appended", "reopen after 1 MB appended")):
            print(f"  {label:<28}{r[kind + '_s']:.2f} s ({r[kind + '_s'] / tiny:.2f}× tiny)"
                  f", peak RSS {r[kind + '_rss_x']:.2f}× the file")
        print(f"  checkpoint                  {r['checkpoint_x']:.3f}× the file (viewer),"
              f" {r['summary_checkpoint_x']:.3f}× (summary)")
        print(f"  cctv summary                cold {r['summary_cold_s']:.2f} s"
              f" ({r['summary_cold_rss_x']:.2f}× the file in RSS),"
              f" warm {r['summary_warm_s']:.2f} s ({r['summary_warm_rss_x']:.2f}×)")
        for repo, i in r["index"].items():
            print(f"  cctv sessions ({Path(repo).name}): first indexing {i['first_s']:.2f} s"
                  f" ({i['first_rss_mb']} MB), one line appended {i['appended_s']:.2f} s"
                  f" ({i['appended_rss_mb']} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
