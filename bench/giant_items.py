#!/usr/bin/env python3
"""Giant items in the real app (headless): open, expand, raw view, search.

    python bench/giant_items.py                 # all four cases, each in its own process
    python bench/giant_items.py --case word     # one case
    python bench/giant_items.py --json          # the figures for scripts

The cases are sessions that real ones contain, built in ``bench/out/giant/``
from the ``01_simple_text`` recording with one giant frame put in:

* ``word``   — a Bash call whose output is one 50 MB line without a space (in
  the tool_result only: with ``tool_use_result.stdout`` too the line would pass
  the 64 MiB line limit and be a problem row);
* ``lines``  — a Bash call with 50 MB of output in 80-character lines;
* ``image``  — a Read of a 20 MB PNG, returned as a base64 image block;
* ``prompt`` — a 12 MB pasted prompt of text lines.

The actions, on the item made from the file's longest line: open (until the
history is read and painted), expand (``enter``), raw view (as ``r`` opens it:
the line read back through ``RawStore``, until its body is mounted), search (a
word in no item: every item's text is read).

For each action it prints the wall time (until the screen is painted again)
and the peak RSS during the action above the RSS before it (Linux: the peak is
reset through ``/proc/self/clear_refs`` before each action); and the peak RSS
of the whole run above the process's RSS before the app was created, as a
multiple of the file size. Goal (issue 11): every action under 0.5 s, peak
memory under 2x the file.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import struct
import subprocess
import sys
import time
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
import checkout  # noqa: E402

checkout.use(ROOT)  # this checkout's code as the cctv package, installed or not

OUT = ROOT / "bench" / "out" / "giant"
BASE = ROOT / "tests" / "fixtures" / "captures" / "stream" / "01_simple_text.jsonl"
CASES = ("word", "lines", "image", "prompt")
MB = 1_000_000


def _frames_around(giant: list[dict]) -> list[str]:
    lines = BASE.read_text().splitlines()
    return [lines[0], *(json.dumps(f) for f in giant), *lines[1:]]


def _tool_frames(name: str, tool_input: dict, content, result: dict | None) -> list[dict]:
    call_id = "toolu_giant000000000000000001"
    use = {"type": "assistant", "message": {
        "id": "msg_giant", "type": "message", "role": "assistant", "model": "claude-opus-5-5",
        "content": [{"type": "tool_use", "id": call_id, "name": name, "input": tool_input}],
        "stop_reason": None, "usage": {"input_tokens": 1, "output_tokens": 1}},
        "parent_tool_use_id": None, "session_id": "giant", "uuid": "u-giant-1"}
    res = {"type": "user", "message": {"role": "user", "content": [
        {"tool_use_id": call_id, "type": "tool_result", "content": content}]},
        "parent_tool_use_id": None, "session_id": "giant", "uuid": "u-giant-2"}
    if result is not None:
        res["tool_use_result"] = result
    return [use, res]


def _png(size: int) -> bytes:
    """A PNG of about ``size`` bytes: a real header, an IDAT of incompressible bytes."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    head = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 3000, 2000, 8, 6, 0, 0, 0))
    filler = (bytes(range(256)) * (size // 256 + 1))[: max(size - len(head) - 24, 0)]
    return head + chunk(b"IDAT", filler) + chunk(b"IEND", b"")


def build(case: str) -> Path:
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"{case}.jsonl"
    if path.exists():
        return path
    if case == "word":
        out = "x" * (50 * MB)
        giant = _tool_frames("Bash", {"command": "cat blob"}, out, None)
    elif case == "lines":
        row = "0123456789 " * 7 + "abc"
        out = "\n".join(f"{i:>8} {row}" for i in range(50 * MB // 90))
        giant = _tool_frames("Bash", {"command": "cat log"}, out, None)
    elif case == "image":
        data = base64.b64encode(_png(15 * MB)).decode()  # 20 MB of base64
        block = {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                             "data": data}}
        giant = _tool_frames("Read", {"file_path": "/tmp/big.png"}, [block], None)
    elif case == "prompt":
        text = "".join(f"pasted line {i} of a very long log someone pasted\n"
                       for i in range(12 * MB // 48))
        giant = [{"type": "user", "message": {"role": "user", "content": text},
                  "parent_tool_use_id": None, "session_id": "giant", "uuid": "u-giant-3"}]
    else:
        raise SystemExit(f"unknown case {case!r}")
    path.write_text("\n".join(_frames_around(giant)) + "\n")
    return path


# --- measuring ------------------------------------------------------------------------------


def _status(key: str) -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(key):
                return int(line.split()[1]) / 1024
    return 0.0


def _reset_peak() -> None:
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        pass


async def run_case(case: str) -> dict:
    from cctv.viewer.app import CctvApp
    from cctv.viewer.screens.raw import RawScreen
    from cctv.viewer.sources import FileTail
    from cctv.widgets.transcript import TranscriptView

    path = build(case)
    giant_line = _longest_line(path)
    size_mb = path.stat().st_size / MB
    figures: dict = {"case": case, "file_mb": round(size_mb, 1)}
    base = _status("VmRSS:")
    _reset_peak()

    async def measure(name: str, action, done) -> None:
        before = _status("VmRSS:")
        _reset_peak()
        t0 = time.perf_counter()
        await action()
        while not done():
            await asyncio.sleep(0.005)
        await pilot.pause()
        figures[f"{name}_s"] = round(time.perf_counter() - t0, 3)
        figures[f"{name}_peak_mb"] = round(_status("VmHWM:") - before, 1)

    app = CctvApp(FileTail(path, follow=False), clock=None)
    overall = 0.0
    async with app.run_test(size=(160, 48)) as pilot:
        async def nothing() -> None:
            return None

        await measure("open", nothing, lambda: app.shown.ended is not None)
        overall = max(overall, _status("VmHWM:"))
        view = app.screen.query_one(TranscriptView)
        giant = _giant_item(view.items, giant_line)
        view.move_cursor(giant)
        await pilot.pause()

        async def expand() -> None:
            await pilot.press("enter")

        await measure("expand", expand, lambda: True)
        overall = max(overall, _status("VmHWM:"))
        figures["expanded_rows"] = view.virtual_size.height

        item = view.items[giant]
        line_no = getattr(getattr(item, "call", None), "result_line_no", None) or item.line_no

        async def raw() -> None:  # the giant frame: a tool's result, or the prompt
            # as `r` does: the line's bytes read back from the file (the Feed keeps none)
            app.push_screen(RawScreen(app.shown.raw_store.with_raw(app.shown.feed.entry_at(line_no))))

        await measure("raw", raw, lambda: isinstance(app.screen, RawScreen)
                      and bool(app.screen.query("#raw-body")))
        figures["raw_shown"] = len(app.screen.view.text)
        overall = max(overall, _status("VmHWM:"))
        await pilot.press("escape")
        await pilot.pause()

        async def search() -> None:
            view.search("needle-not-in-the-session")

        await measure("search", search, lambda: True)
        overall = max(overall, _status("VmHWM:"))
    figures["peak_mb"] = round(overall - base, 1)
    figures["peak_x_file"] = round((overall - base) / size_mb, 2)
    return figures


def _longest_line(path: Path) -> int:
    """The number of the file's longest line (the giant frame), read a MB at a
    time (holding that line would count in the app's memory)."""
    best, best_len, line_no, length = 0, -1, 1, 0
    with open(path, "rb") as fh:
        while chunk := fh.read(MB):
            parts = chunk.split(b"\n")
            for part in parts[:-1]:
                length += len(part)
                if length > best_len:
                    best, best_len = line_no, length
                line_no += 1
                length = 0
            length += len(parts[-1])
    return best


def _giant_item(items, line_no: int) -> int:
    """The index of the item made from line ``line_no`` (a call, by its result's line)."""
    return next(i for i, item in enumerate(items)
                if line_no in (item.line_no, getattr(getattr(item, "call", None),
                                                     "result_line_no", None)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--case", choices=CASES)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--timeout", type=float, default=300)
    args = parser.parse_args()
    if args.case:
        print(json.dumps(asyncio.run(run_case(args.case))))
        return
    rows = []
    for case in CASES:
        build(case)
        try:
            proc = subprocess.run([sys.executable, __file__, "--case", case], capture_output=True,
                                  text=True, timeout=args.timeout)
            rows.append(json.loads(proc.stdout.strip().splitlines()[-1]) if proc.returncode == 0
                        else {"case": case, "error": proc.stderr.strip().splitlines()[-1:]})
        except subprocess.TimeoutExpired:
            rows.append({"case": case, "error": f"over {args.timeout:.0f} s"})
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(f"{'case':8} {'file':>7} {'open':>7} {'expand':>7} {'raw':>7} {'search':>7} "
          f"{'peak':>8} {'x file':>7}   (peak during expand / raw / search)")
    for r in rows:
        if "error" in r:
            print(f"{r['case']:8} error: {r['error']}")
            continue
        print(f"{r['case']:8} {r['file_mb']:>5.1f}MB {r['open_s']:>6.2f}s {r['expand_s']:>6.2f}s "
              f"{r['raw_s']:>6.2f}s {r['search_s']:>6.2f}s {r['peak_mb']:>6.0f}MB "
              f"{r['peak_x_file']:>6.2f}x   ({r['expand_peak_mb']:.0f} / {r['raw_peak_mb']:.0f} / "
              f"{r['search_peak_mb']:.0f} MB)")


if __name__ == "__main__":
    main()
