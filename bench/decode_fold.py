#!/usr/bin/env python3
"""How fast cctv decodes and folds a big session, against a bare msgspec floor.

For one file, in one run, each measurement in a fresh subprocess (so no run
warms or fills the heap of another):

* **floor** — ``for line in data.split(b"\\n"): msgspec.json.decode(line)``:
  the least any Python reader of JSON lines must pay;
* **typed floor** — the same loop, each line decoded by msgspec straight into
  cctv's own tagged union of frames (``reducer.decode``'s frame decoder, no
  envelope sniffing, no fallbacks, nothing kept): the least cctv's typed
  decode could cost. It is cheaper than the dict floor (msgspec skips the
  fields the union does not name), so "× floor" flatters cctv; both are shown;
* **decode** — cctv's ``LineSplitter`` + ``decode_line`` over the same bytes
  (typed frames, raw bytes kept), results dropped as they come, like the floor;
* **decode+fold** — what cctv does when it opens a file (the app on a
  ``FileTail``, ``cctv summary``): ``read_file_lines`` batches into
  ``Feed(keep_raw=False).feed``, the Feed keeping every entry (without its
  line's bytes, which ``viewer.rawstore`` reads back on demand) and the folded
  ``Session`` (``--keep-raw``: entries keep their bytes, as for a pipe); with ``--slice 1000`` the batches are cut into the slices the
  app's fold takes (``viewer.app.FOLD_SLICE``, 1,000 lines at the time of writing).

Every timing starts with the file on disk (page-cached) and includes reading
it. Peak memory is ``resource.getrusage(RUSAGE_SELF).ru_maxrss`` at the end of
the measurement minus its value just before (after the imports), i.e. the
high-water mark the measurement added — for decode+fold, while the Feed still
holds the whole session. Each measurement runs ``--repeat`` times; the table
shows the best time and the largest peak.

Usage::

    python bench/decode_fold.py                      # builds bench/out/big-stream-json.jsonl if missing
    python bench/decode_fold.py --format transcript  # bench/out/big-transcript.jsonl
    python bench/decode_fold.py FILE [--repeat 3] [--json] [--slice 1000]
    python bench/decode_fold.py FILE --profile fold  # cProfile of one measurement
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import checkout

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
OUT = HERE / "out"

MEASUREMENTS = ("floor", "typed", "decode", "fold")
LABELS = {"floor": "floor: bare msgspec loop", "typed": "typed floor: cctv's union",
          "decode": "cctv decode",
          "fold": "cctv decode + fold (Feed)"}
GOAL_TIME = 2.0
GOAL_MEMORY = 2.0


# --- the measurements (run in a child process) ----------------------------------------------


def _maxrss() -> int:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux


def _floor(path: str) -> dict:
    import msgspec

    decode = msgspec.json.decode
    t0 = time.perf_counter()
    with open(path, "rb") as fh:
        data = fh.read()
    n = 0
    for line in data.split(b"\n"):
        if line:  # the split leaves an empty string after the last newline
            decode(line)
            n += 1
    return {"seconds": time.perf_counter() - t0, "lines": n}


def _typed(path: str) -> dict:
    import msgspec

    from cctv.reducer.decode import _FRAME_DECODER  # the union cctv decodes frames into

    decode = _FRAME_DECODER.decode
    t0 = time.perf_counter()
    with open(path, "rb") as fh:
        data = fh.read()
    n = 0
    for line in data.split(b"\n"):
        if line:
            try:
                decode(line)
            except msgspec.MsgspecError:
                pass  # a kind the union does not hold (cctv's decode falls back)
            n += 1
    return {"seconds": time.perf_counter() - t0, "lines": n}


def _decode(path: str) -> dict:
    from cctv.reducer.decode import decode_line
    from cctv.reducer.lines import LineSplitter

    t0 = time.perf_counter()
    with open(path, "rb") as fh:
        data = fh.read()
    splitter = LineSplitter()
    n = 0
    for ln in splitter.feed(data):
        decode_line(ln.data, ln.line_no, ln.offset)
        n += 1
    last = splitter.flush()
    if last is not None:
        decode_line(last.data, last.line_no, last.offset)
        n += 1
    return {"seconds": time.perf_counter() - t0, "lines": n}


def _fold(path: str) -> dict:
    from cctv.reducer.feed import Feed, read_file_lines

    step = int(os.environ.get("CCTV_BENCH_SLICE", "0"))
    t0 = time.perf_counter()
    # a file is read as the app reads it: lines' bytes stay on disk (viewer.rawstore)
    feed = Feed(keep_raw=os.environ.get("CCTV_BENCH_KEEP_RAW") == "1")
    for batch in read_file_lines(path):
        if step:  # the app folds in slices of viewer.app.FOLD_SLICE lines
            for start in range(0, len(batch), step):
                feed.feed(batch[start:start + step])
        else:
            feed.feed(batch)
    seconds = time.perf_counter() - t0
    s = feed.session
    return {
        "seconds": seconds, "lines": s.lines, "entries": len(feed.entries),
        "format": s.format, "kinds": dict(sorted(s.kinds.items())),
        "malformed": len(s.malformed), "unknown": len(s.unknown), "turns": len(s.turns),
        "tool_calls": len(s.calls), "tasks": len(s.tasks), "hooks": len(s.hooks),
        "agents": len(s.agents), "session_ids": len(s.session_ids), "_keep": feed,
    }


_RUN = {"floor": _floor, "typed": _typed, "decode": _decode, "fold": _fold}


def measure(name: str, path: str) -> dict:
    """One measurement in this process: its figures plus the peak RSS it added."""
    import cctv.reducer.feed  # noqa: F401  (imports are not part of the measurement)
    import msgspec  # noqa: F401

    base = _maxrss()
    out = _RUN[name](path)
    out["peak_bytes"] = _maxrss() - base
    out.pop("_keep", None)  # only now may the Feed go
    return out


def _child(name: str, path: str, slice_lines: int = 0) -> dict:
    env = dict(os.environ)
    env["CCTV_BENCH_SLICE"] = str(slice_lines)
    env["PYTHONPATH"] = os.pathsep.join([str(checkout.import_root(REPO)), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    proc = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--measure", name, path],
        capture_output=True, text=True, env=env, check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(f"measurement {name} failed:\n{proc.stderr}")
    return json.loads(proc.stdout)


# --- the report ----------------------------------------------------------------------------


def default_file(fmt: str, sessions: str = "one") -> Path:
    return OUT / (f"big-{fmt}.jsonl" if sessions == "one" else f"big-{fmt}-{sessions}.jsonl")


def ensure_file(path: Path, fmt: str, size_mb: float, sessions: str = "one") -> None:
    if path.exists():
        return
    sys.path.insert(0, str(HERE))
    from build_big import build

    build(path, size_mb=size_mb, fmt=fmt, sessions=sessions)


def run(path: Path, repeat: int, slice_lines: int = 0) -> dict:
    size = path.stat().st_size
    results: dict[str, dict] = {}
    for name in MEASUREMENTS:
        runs = [_child(name, str(path), slice_lines) for _ in range(repeat)]
        best = min(runs, key=lambda r: r["seconds"])
        best = dict(best)
        best["peak_bytes"] = max(r["peak_bytes"] for r in runs)
        best["all_seconds"] = [round(r["seconds"], 3) for r in runs]
        results[name] = best
    floor = results["floor"]["seconds"]
    typed = results["typed"]["seconds"]
    for r in results.values():
        r["x_floor"] = r["seconds"] / floor
        r["x_typed_floor"] = r["seconds"] / typed
        r["mb_s"] = size / 1e6 / r["seconds"]
        r["lines_s"] = r["lines"] / r["seconds"]
        r["x_file"] = r["peak_bytes"] / size
    fold = results["fold"]
    return {
        "file": str(path), "bytes": size, "lines": fold["lines"], "format": fold["format"],
        "python": sys.version.split()[0], "repeat": repeat, "slice": slice_lines,
        "results": results,
        "goals": {
            "time_x_floor": GOAL_TIME, "time_ok": fold["x_floor"] <= GOAL_TIME,
            "memory_x_file": GOAL_MEMORY, "memory_ok": fold["x_file"] <= GOAL_MEMORY,
        },
    }


def format_report(rep: dict) -> str:
    res = rep["results"]
    out = [
        f"file    {rep['file']}",
        f"        {rep['bytes'] / 1e6:.1f} MB, {rep['lines']:,} lines, format {rep['format']}, "
        f"Python {rep['python']}, best of {rep['repeat']}"
        + (f", folded in slices of {rep['slice']:,} lines" if rep.get("slice") else ""),
        "",
        f"{'measurement':<28}{'time s':>8}{'MB/s':>8}{'lines/s':>11}{'x floor':>9}"
        f"{'x typed':>9}{'peak MB':>9}{'x file':>8}",
    ]
    for name in MEASUREMENTS:
        r = res[name]
        out.append(f"{LABELS[name]:<28}{r['seconds']:>8.2f}{r['mb_s']:>8.1f}{r['lines_s']:>11,.0f}"
                   f"{r['x_floor']:>9.2f}{r['x_typed_floor']:>9.2f}"
                   f"{r['peak_bytes'] / 1e6:>9.0f}{r['x_file']:>8.2f}")
    g = rep["goals"]
    fold = res["fold"]
    out += [
        "",
        f"goal: decode+fold <= {g['time_x_floor']:.0f}x floor: {fold['x_floor']:.2f}x "
        f"{'OK' if g['time_ok'] else 'MISSED'}; "
        f"peak memory <= {g['memory_x_file']:.0f}x file: {fold['x_file']:.2f}x "
        f"{'OK' if g['memory_ok'] else 'MISSED'}",
        f"against the typed floor (msgspec into cctv's own union, {res['typed']['x_floor']:.2f}x "
        f"the dict floor): decode+fold {fold['x_typed_floor']:.2f}x",
        "peak memory = ru_maxrss at the end minus ru_maxrss after imports, fresh process each",
        "",
        f"folded: {fold['turns']:,} turns, {fold['tool_calls']:,} tool calls, {fold['tasks']:,} tasks, "
        f"{fold['hooks']:,} hooks, {fold['agents'] - 1:,} sub-agents, "
        f"{fold.get('session_ids', 0):,} session ids; "
        f"{fold['malformed']} malformed, {fold['unknown']} unknown",
        "frames by kind:",
    ]
    kinds = sorted(fold["kinds"].items(), key=lambda kv: (-kv[1], kv[0]))
    width = max(len(k) for k, _ in kinds) if kinds else 0
    for k, v in kinds:
        out.append(f"  {k:<{width}}  {v:>9,}")
    return "\n".join(out)


def profile(name: str, path: Path, top: int) -> None:
    import cProfile
    import pstats

    checkout.use(REPO)  # the measurements' children get it through PYTHONPATH
    import cctv.reducer.feed  # noqa: F401

    prof = cProfile.Profile()
    prof.enable()
    _RUN[name](str(path))
    prof.disable()
    pstats.Stats(prof).sort_stats("tottime").print_stats(top)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file", nargs="?", type=Path,
                    help="session file (default bench/out/big-<format>.jsonl, built if missing)")
    ap.add_argument("--format", choices=("stream-json", "transcript"), default="stream-json",
                    help="format of the file to build when it is missing")
    ap.add_argument("--size-mb", type=float, default=100, help="size of the file to build")
    ap.add_argument("--repeat", type=int, default=3, help="runs per measurement (best time)")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    ap.add_argument("--slice", type=int, default=0, metavar="N",
                    help="feed the Feed N lines at a time, as the app does (viewer.app.FOLD_SLICE);"
                         " default: whole read_file_lines batches, as cctv check/summary")
    ap.add_argument("--keep-raw", action="store_true",
                    help="entries keep their line's bytes (a pipe's Feed) instead of leaving them on disk")
    ap.add_argument("--sessions", choices=("one", "per-copy", "both"), default="both",
                    help="which build of the default file: one session id, a fresh id per "
                         "copy, or both (default), each reported")
    ap.add_argument("--profile", choices=MEASUREMENTS, help="cProfile one measurement instead")
    ap.add_argument("--top", type=int, default=30, help="rows of --profile output")
    ap.add_argument("--measure", choices=MEASUREMENTS, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args.measure:
        print(json.dumps(measure(args.measure, str(args.file))))
        return 0
    if args.keep_raw:
        os.environ["CCTV_BENCH_KEEP_RAW"] = "1"  # inherited by the measurement processes
    if args.file:
        paths = [args.file]
    else:
        builds = ("one", "per-copy") if args.sessions == "both" else (args.sessions,)
        paths = []
        for sessions in builds:
            path = default_file(args.format, sessions)
            ensure_file(path, args.format, args.size_mb, sessions)
            paths.append(path)
    if args.profile:
        profile(args.profile, paths[-1], args.top)
        return 0
    reports = [run(path, max(1, args.repeat), max(0, args.slice)) for path in paths]
    if args.json:
        print(json.dumps(reports[0] if len(reports) == 1 else reports, indent=2))
    else:
        print("\n\n".join(format_report(rep) for rep in reports))
    return 0


if __name__ == "__main__":
    sys.exit(main())
