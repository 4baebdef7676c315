#!/usr/bin/env python3
"""Build ``viewer/demo/demo_session.jsonl`` from real recorded CLI frames.

The demo is one coherent multi-turn stream-json session stitched from the
CLI 2.1.328 stdout recordings in ``tests/fixtures/captures/stream``:

* every recorded frame is copied byte for byte, except that each source run's
  session id is replaced, as text, by one demo session id (key order and all
  other bytes untouched; the id also occurs inside paths such as
  ``output_file``);
* each turn starts with a host prompt frame in the shape the SDK writes to the
  CLI's stdin (``forge/2.1.220/*.stdin.jsonl``): the prompt text is the
  ``queue-operation`` enqueue content the CLI recorded on disk for that run,
  and its uuid is the run's ``command_uuid`` (or the on-disk prompt row's uuid);
* the stop-hook run did not put ``stop_hook_summary`` on stdout, so its two
  on-disk ``system/stop_hook_summary`` rows are converted to wire frames (the
  transcript envelope dropped, ``parent_tool_use_id``/``session_id``/``uuid``
  appended) and placed where the CLI wrote them;
* the SessionStart hook pair of the hooks run is moved to the very start, where
  a session's startup hooks belong;
* the recorder's ``[[scenario]]`` tags are removed from every string, and the
  compaction's ``pre_tokens`` (1,225 in the tiny scripted context) is stated as
  a plausible 38,412, so the demo reads like a real session.

Deterministic: same inputs, same bytes. Usage::

    python bench/make_demo.py            # (re)write the demo
    python bench/make_demo.py --check    # exit 1 if the file is stale
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DEFAULT_REF = REPO / "tests" / "fixtures"
DEFAULT_OUT = REPO / "viewer" / "demo" / "demo_session.jsonl"

DEMO_SESSION_ID = "5e55a0de-c7c7-4d3e-8a11-d3e000000001"
MAX_BYTES = 200_000

PROJECT = "captures/projects/-home-ada-src-demo"


@dataclass(frozen=True)
class TurnSpec:
    """One demo turn: segment ``segment`` of a stream recording and its prompt."""

    stream: str  # stdout recording, relative to the reference dir
    session: str  # the run's session id (its on-disk transcript lives in PROJECT)
    segment: int = 0  # n-th turn inside the recording (split at command_lifecycle queued)
    prompt: int = 0  # n-th host enqueue in the run's transcript


# In recording order, so the turns start in timestamp order.
TURNS: tuple[TurnSpec, ...] = (
    TurnSpec("captures/stream/04_thinking.jsonl", "ea7beb5b-577d-4669-a8a0-870ccd7b4b6b"),
    TurnSpec("captures/stream/05_subagent.jsonl", "d7acffbd-7cff-4056-82e8-4364dc8df14a"),
    TurnSpec("captures/stream/06_background_bash.jsonl", "e321c1d0-19a4-4a0d-819a-a0cf937b8a13"),
    TurnSpec("captures/stream/07_hooks.jsonl", "142bb34b-89e4-4e11-b4ed-b3397e45f6d4"),
    TurnSpec("captures/stream/10_compact_manual.jsonl", "aafe1787-82bf-4f68-ae98-84dbe071fd7f", 0, 0),
    TurnSpec("captures/stream/10_compact_manual.jsonl", "aafe1787-82bf-4f68-ae98-84dbe071fd7f", 1, 1),
    TurnSpec("captures/stream/10_compact_manual.jsonl", "aafe1787-82bf-4f68-ae98-84dbe071fd7f", 2, 2),
)

# Transcript envelope fields that a wire frame does not carry.
_ENVELOPE = {
    "parentUuid",
    "logicalParentUuid",
    "isSidechain",
    "timestamp",
    "uuid",
    "userType",
    "entrypoint",
    "cwd",
    "sessionId",
    "session_id",
    "version",
    "gitBranch",
    "slug",
    "promptId",
}


@dataclass
class Frame:
    raw: bytes  # one line, no newline
    obj: dict[str, Any]


def _dumps(obj: Any) -> bytes:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode()


_MARKER = re.compile(rb"\[\[[A-Za-z0-9_]+\]\]")
"""The ``[[scenario]]`` tags the recording script put in prompts to pick a script."""

DEMO_PRE_COMPACT_TOKENS = 38_412
"""The scripted model's context was tiny (the recording says 1,225 → 2,787
tokens, which reads as a compaction that grew the context); the demo states a
plausible size of the conversation before ``/compact``."""


def _natural(raw: bytes) -> bytes:
    """The frame without the recorder's scenario tags, as a real session reads."""
    raw = re.sub(rb"(?<=\S) " + _MARKER.pattern, b"", raw)  # "… so far? [[cmp2]]"
    raw = re.sub(_MARKER.pattern + rb" ?", b"", raw)  # "[[sub_survey]] List …"
    return re.sub(rb'"pre_tokens":1225\b', b'"pre_tokens":%d' % DEMO_PRE_COMPACT_TOKENS, raw)


def _read_frames(path: Path, old_sid: str) -> list[Frame]:
    frames = []
    for line in path.read_bytes().split(b"\n"):
        if not line.strip():
            continue
        raw = _natural(line.replace(old_sid.encode(), DEMO_SESSION_ID.encode()))
        frames.append(Frame(raw, json.loads(raw)))
    return frames


def _segments(frames: list[Frame]) -> list[list[Frame]]:
    """Split a recording into turns at each ``command_lifecycle`` "queued"."""
    segs: list[list[Frame]] = [[]]
    for f in frames:
        if f.obj.get("type") == "command_lifecycle" and f.obj.get("state") == "queued" and segs[-1]:
            segs.append([])
        segs[-1].append(f)
    return segs


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_bytes().split(b"\n") if line.strip()]


def _prompt(spec: TurnSpec, rows: list[dict[str, Any]], seg: list[Frame]) -> Frame:
    enqueued = [
        r["content"]
        for r in rows
        if r.get("type") == "queue-operation"
        and r.get("operation") == "enqueue"
        and isinstance(r.get("content"), str)
        and not r["content"].startswith("<")  # the CLI's own <task-notification> re-queues
    ]
    text = _natural(enqueued[spec.prompt].encode()).decode()
    uuid = next(
        (f.obj["command_uuid"] for f in seg if f.obj.get("type") == "command_lifecycle"),
        None,
    )
    if uuid is None:
        uuid = next(
            r["uuid"]
            for r in rows
            if r.get("type") == "user" and not r.get("isMeta")
            and _natural(str(r.get("message", {}).get("content")).encode()).decode() == text
        )
    obj = {
        "type": "user",
        "message": {"role": "user", "content": text},
        "session_id": DEMO_SESSION_ID,
        "parent_tool_use_id": None,
        "uuid": uuid,
    }
    raw = _dumps(obj)
    return Frame(raw, json.loads(raw))


def _stop_hook_summaries(rows: list[dict[str, Any]], seg: list[Frame]) -> list[Frame]:
    """Insert the run's on-disk stop_hook_summary rows into ``seg`` as wire frames."""
    out = list(seg)
    for row in rows:
        if row.get("type") != "system" or row.get("subtype") != "stop_hook_summary":
            continue
        obj: dict[str, Any] = {"type": "system", "subtype": "stop_hook_summary"}
        obj.update({k: v for k, v in row.items() if k not in _ENVELOPE and k not in obj})
        obj["parent_tool_use_id"] = None
        obj["session_id"] = DEMO_SESSION_ID
        obj["uuid"] = row["uuid"]
        raw = _dumps(obj)
        frame = Frame(raw, json.loads(raw))
        parent = row.get("parentUuid")
        at = next((i + 1 for i, f in enumerate(out) if parent and f.obj.get("uuid") == parent), None)
        if at is None:  # parent was an attachment row: after the last Stop hook_response
            at = max(
                i + 1
                for i, f in enumerate(out)
                if f.obj.get("subtype") == "hook_response" and f.obj.get("hook_event") == "Stop"
            )
        out.insert(at, frame)
    return out


def build(ref: Path = DEFAULT_REF) -> bytes:
    """Return the demo file's bytes."""
    startup: list[Frame] = []
    turns: list[list[Frame]] = []
    for spec in TURNS:
        frames = _read_frames(ref / spec.stream, spec.session)
        seg = _segments(frames)[spec.segment]
        rows = _rows(ref / PROJECT / f"{spec.session}.jsonl")
        moved = [f for f in seg if f.obj.get("hook_event") == "SessionStart"]
        startup.extend(moved)
        seg = [f for f in seg if f not in moved]
        if any(r.get("subtype") == "stop_hook_summary" for r in rows):
            seg = _stop_hook_summaries(rows, seg)
        turns.append([_prompt(spec, rows, seg), *seg])
    frames = startup + [f for turn in turns for f in turn]
    data = b"".join(f.raw + b"\n" for f in frames)
    _validate(frames, turns, data)
    return data


def _validate(frames: list[Frame], turns: list[list[Frame]], data: bytes) -> None:
    assert len(data) < MAX_BYTES, len(data)
    assert not _MARKER.search(data), "a scenario tag is left"
    for f in frames:
        assert json.loads(f.raw) == f.obj
        sid = f.obj.get("session_id")
        assert sid in (None, DEMO_SESSION_ID), sid
    assert any(f.obj.get("compact_metadata", {}).get("pre_tokens") == DEMO_PRE_COMPACT_TOKENS for f in frames)
    uuids = [f.obj["uuid"] for f in frames if "uuid" in f.obj]
    assert len(uuids) == len(set(uuids)), "duplicate uuid"
    prompts = [
        f for f in frames if f.obj.get("type") == "user" and f.obj.get("parent_tool_use_id") is None and "timestamp" not in f.obj
    ]
    results = [f for f in frames if f.obj.get("type") == "result"]
    assert len(prompts) == len(results) == len(TURNS), (len(prompts), len(results))
    # Turns start in time order. Inside a run the CLI's own frame order is kept,
    # which is not strictly timestamp order (WIRE.md: timestamps are display-only).
    starts = [min(f.obj["timestamp"] for f in turn if "timestamp" in f.obj) for turn in turns]
    assert starts == sorted(starts), "turns out of time order"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ref", type=Path, default=DEFAULT_REF, help="recordings directory (default tests/fixtures)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--check", action="store_true", help="fail if --out differs from a fresh build")
    args = parser.parse_args(argv)
    data = build(args.ref)
    if args.check:
        current = args.out.read_bytes() if args.out.exists() else b""
        if current != data:
            print(f"{args.out} is stale; run bench/make_demo.py", file=sys.stderr)
            return 1
        print(f"{args.out} is up to date")
        return 0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(data)
    frames = data.count(b"\n")
    print(f"wrote {args.out} ({len(data)} bytes, {frames} frames, {len(TURNS)} turns)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
