"""``cctv check`` and ``cctv summary``: the reducer without a terminal UI.

The text output shows every string from the input with its control characters
made visible (:func:`reducer.safe.visible`); ``--json`` escapes them as JSON does.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any, TextIO

import msgspec

from cctv.reducer.decode import nesting_exceeds, reencode
from cctv.reducer.frames import MAX_DEPTH, Blank, Entry, Malformed, Unknown
from cctv.reducer.format import plural
from cctv.reducer.safe import visible
from cctv.reducer.summary import format_summary, summarize
from cctv.reducer.verdict import not_a_session

from .loader import InputError, load_path

__all__ = ["check_file", "run_check", "run_summary"]

_ANY = msgspec.json.Decoder()


def check_file(path: Path) -> dict[str, Any]:
    """Decode one file and verify it: counts, problems, and the round trip."""
    feed = load_path(path, subagents=False, checkpoints=True)
    session = feed.session
    kinds: Counter[str] = Counter()
    identical = equivalent = 0
    differs: list[int] = []
    malformed: list[dict[str, Any]] = []
    unknown: list[dict[str, Any]] = []
    blank = 0
    for entry in feed.entries:
        if isinstance(entry, Malformed):
            malformed.append({"line": entry.line_no, "reason": entry.reason})
            continue
        if isinstance(entry, Blank):
            blank += 1
            continue
        kinds[entry.kind_key] += 1
        if isinstance(entry, Unknown):
            unknown.append({"line": entry.line_no, "kind": entry.kind_key})
        problem, same = _round_trip(entry)
        if problem:
            malformed.append({"line": entry.line_no, "reason": problem})
        elif same == "identical":
            identical += 1
        elif same == "equivalent":
            equivalent += 1
        else:
            differs.append(entry.line_no)
    lines = len(feed.entries) - blank
    return {
        "path": str(path),
        "verdict": not_a_session(lines, len(malformed), len(unknown),
                                 [(m["line"], m["reason"]) for m in malformed]),
        "format": session.format,
        "cli_version": session.cli_version,
        "lines": len(feed.entries),
        "frames": sum(kinds.values()),
        "blank_lines": blank,
        "kinds": dict(sorted(kinds.items())),
        "unknown_kinds": unknown,
        "malformed": malformed,
        "round_trip": {
            "identical": identical,
            "equivalent": equivalent,
            "different": differs,
            "ok": not differs,
        },
    }


def _round_trip(entry: Entry) -> tuple[str | None, str]:
    """``(problem, verdict)``: why the line cannot be re-encoded, or whether the
    re-encoding is ``identical``, ``equivalent`` or ``different``."""
    raw = entry.raw
    if nesting_exceeds(raw):
        # the decoder reads the fields it models only; the rest is deep
        return f"nested more than {MAX_DEPTH} levels deep", ""
    try:
        out = reencode(entry)
        if out == raw:
            return None, "identical"
        return None, "equivalent" if _ANY.decode(out) == _ANY.decode(raw) else "different"
    except (msgspec.MsgspecError, RecursionError, ValueError) as exc:
        return f"cannot be re-encoded: {exc}", ""


def run_check(paths: list[str], as_json: bool, out: TextIO, err: TextIO) -> int:
    """Exit 0 when nothing is malformed, 1 when something is, 2 when a path is unreadable."""
    reports: list[dict[str, Any]] = []
    status = 0
    for name in paths:
        try:
            report = check_file(Path(name))
        except InputError as exc:
            print(visible(f"cctv: {exc}"), file=err)
            status = 2
            continue
        reports.append(report)
        if report["malformed"] or not report["round_trip"]["ok"]:
            status = max(status, 1)
        if not as_json:
            print(_format_check(report), file=out)
    if as_json:
        print(json.dumps(reports if len(paths) != 1 else (reports[0] if reports else None),
                         indent=2), file=out)
    return status


def _format_check(r: dict[str, Any]) -> str:
    rt = r["round_trip"]
    kinds = ", ".join(f"{k} {n}" for k, n in sorted(r["kinds"].items(), key=lambda x: (-x[1], x[0])))
    if r["verdict"]:
        shown = r["malformed"][:3]
        return visible("\n".join([f"{r['path']}: {r['verdict']}",
                                  *(f"  line {m['line']}: {m['reason']}" for m in shown),
                                  *(["  …"] if len(r["malformed"]) > len(shown) else [])]))
    verdict = "ok" if not r["malformed"] and rt["ok"] else "PROBLEMS"
    lines = [
        f"{r['path']}: {verdict}",
        f"  format {r['format']}, CLI {r['cli_version'] or '?'}, {plural(r['lines'], 'line', grouped=True)},"
        f" {plural(r['frames'], 'frame', grouped=True)}" + (f", {r['blank_lines']} blank" if r["blank_lines"] else ""),
        f"  kinds: {kinds}",
        f"  round trip: {rt['identical']:,} identical, {rt['equivalent']:,} equivalent"
        f" (same JSON, other spelling), {len(rt['different'])} different",
    ]
    if r["unknown_kinds"]:
        lines.append("  unknown kinds: " + ", ".join(
            f"line {u['line']} {u['kind']}" for u in r["unknown_kinds"][:20]))
    for m in r["malformed"]:
        lines.append(f"  line {m['line']}: {m['reason']}")
    for n in rt["different"][:20]:
        lines.append(f"  line {n}: re-encoding differs")
    return visible("\n".join(lines))


def run_summary(path: str, as_json: bool, out: TextIO, err: TextIO) -> int:
    """Print the folded state of one session."""
    try:
        # a summary never shows a line: only the places of lines are kept
        feed = load_path(Path(path), keep_raw=False, keep_entries=False, checkpoints=True)
    except InputError as exc:
        print(visible(f"cctv: {exc}"), file=err)
        return 2
    data = summarize(feed.session)
    tally = feed.entries.tally()
    verdict = not_a_session(len(feed.entries) - tally.blank, len(tally.malformed), tally.unknown,
                            tally.malformed)
    if as_json:
        print(json.dumps({"verdict": verdict, **data}, indent=2), file=out)
    elif verdict:
        print(visible(f"{path}: {verdict}"), file=out)
    else:
        print(format_summary(data), file=out)
    return 1 if verdict else 0
