#!/usr/bin/env python3
"""Build a big session (~100 MB) by repeating real recorded frames with fresh ids.

The input is the real CLI output under ``tests/fixtures``: for ``stream-json``
every stdout recording (``forge/2.1.220``, ``forge/2.1.156-raw``,
``captures/stream``), for ``transcript`` every main session file of the on-disk
projects tree (``captures/projects/<project>/<session>.jsonl``, progress,
attachment and metadata rows included). Each recording is a *template*; the
output is a seeded shuffle of template copies, each copied byte for byte except
for its ids:

* every id — uuids (``uuid``, ``parentUuid``, ``hook_id``, ``command_uuid``,
  ``promptId``…), ``msg_…`` message ids, ``req_…`` request ids, ``toolu_…``
  tool_use ids (and so their ``tool_use_id`` / ``parent_tool_use_id`` /
  ``<id>-heartbeat-<n>`` references), task ids, agent ids, and any other value
  of an id-named key — is replaced, as text, wherever it occurs in the copy
  (inside paths and JSON-in-strings too), by a fresh id of the same shape, the
  same for every occurrence in one copy and never reused by another copy, so the
  fold sees distinct calls, turns, tasks and hooks rather than duplicates;
* every session id becomes the one session id of the big session (a long
  session has one), so the fold sees a single session; with
  ``--sessions per-copy`` each copy gets a fresh session id instead (a stream
  of many ``claude -p`` runs, resumed sessions, concatenated logs), so the
  fold sees thousands of session ids;
* for ``transcript``, each copy's first root row (``"parentUuid":null``) is
  hung under the previous copy's last row, so the file is one conversation
  chain, as a long session's file is (later roots, e.g. after a compaction,
  stay roots; ``--one-chain`` hangs those too, like a long session that never
  compacted).

For ``stream-json`` the SDK's control frames (``control_request`` /
``control_response`` / ``control_cancel_request``: the per-process
initialize handshake, ~half the recorded bytes from a few big ``initialize``
responses) are kept only in the first copy of each template; a long session
has one such handshake, not one per turn. Everything else (``system/init`` is
emitted per query, so it stays) is repeated as recorded.

Deterministic (``--seed``): same reference files and arguments, same bytes.
Fast: each template is cut once into literal and id parts, and a copy is a
``bytes.join`` of the parts with that copy's ids.

Usage::

    python bench/build_big.py bench/out/big-stream-json.jsonl
    python bench/build_big.py --size-mb 100 --format transcript bench/out/big-transcript.jsonl
"""

from __future__ import annotations

import argparse
import json
import random
import re
import string
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_REF = REPO / "tests" / "fixtures"

FORMATS = ("stream-json", "transcript")

_UUID = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_PREFIXED = re.compile(rb"(?<![A-Za-z0-9_])(?:toolu|srvtoolu|msg|req)_[A-Za-z0-9]{8,}(?![A-Za-z0-9_])")
_ID_VALUE = re.compile(r"^(?:[A-Za-z]+_)*[A-Za-z0-9]+$")
"""A bare or prefixed id (``bw5qhzqlt``, ``acfff52c46df9b7f9``, ``tool_use_1``);
composites with ``-`` (``hook-PreToolUse-toolu_…``) are not ids themselves, their
inner ids are rewritten."""

_SESSION_KEYS = frozenset({"session_id", "sessionId", "new_conversation_id"})
_NOT_IDS = frozenset({"modelId", "callback_id", "runId", "run_id"})
_CONTROL = (b'{"type":"control_request"', b'{"type":"control_response"',
            b'{"type":"control_cancel_request"')

_HEX = "0123456789abcdef"
_LOWER = string.ascii_lowercase + string.digits
_B62 = string.ascii_letters + string.digits


def _is_id_key(key: str) -> bool:
    if key in _NOT_IDS:
        return False
    low = key.lower()
    return (low.endswith("id") or low.endswith("uuid") or low.endswith("_ids")
            or key == "supersedes")


def _walk_ids(obj: object, key: str | None, ids: set[str], sessions: set[str]) -> None:
    if isinstance(obj, dict):
        for k, v in obj.items():
            _walk_ids(v, k, ids, sessions)
    elif isinstance(obj, list):
        for v in obj:
            _walk_ids(v, key, ids, sessions)
    elif isinstance(obj, str) and key is not None:
        if key in _SESSION_KEYS:
            sessions.add(obj)
        elif _is_id_key(key) and len(obj) >= 5 and _ID_VALUE.match(obj):
            ids.add(obj)


@dataclass
class Template:
    path: Path
    data: bytes
    parts: list[bytes] = field(default_factory=list)
    """Literal bytes at even indexes, token indexes (as ``slot``) at odd ones."""
    slots: list[int] = field(default_factory=list)
    tokens: list[bytes] = field(default_factory=list)
    session_slots: frozenset[int] = frozenset()
    body_parts: list[bytes] = field(default_factory=list)
    body_slots: list[int] = field(default_factory=list)


def _cut(data: bytes, pattern: re.Pattern[bytes], index: dict[bytes, int]) -> tuple[list[bytes], list[int]]:
    parts: list[bytes] = []
    slots: list[int] = []
    pos = 0
    for m in pattern.finditer(data):
        parts.append(data[pos:m.start()])
        slots.append(index[m.group(0)])
        pos = m.end()
    parts.append(data[pos:])
    return parts, slots


def load_template(path: Path, fmt: str) -> Template:
    data = path.read_bytes()
    if not data.endswith(b"\n"):
        data += b"\n"
    ids: set[str] = set()
    sessions: set[str] = set()
    for line in data.splitlines():
        try:
            _walk_ids(json.loads(line), None, ids, sessions)
        except ValueError:
            continue
    tokens = {t.encode() for t in ids}
    tokens.update(_UUID.findall(data))
    tokens.update(_PREFIXED.findall(data))
    tokens.update(s.encode() for s in sessions)
    # first-appearance order, so fresh ids are drawn in a stable order
    order = sorted(tokens, key=lambda t: (data.find(t), t))
    index = {t: i for i, t in enumerate(order)}
    alternation = b"|".join(re.escape(t) for t in sorted(order, key=len, reverse=True))
    pattern = re.compile(rb"(?<![A-Za-z0-9_])(?:" + alternation + rb")(?![A-Za-z0-9_])")
    tpl = Template(path, data, tokens=order)
    tpl.session_slots = frozenset(index[s.encode()] for s in sessions if s.encode() in index)
    tpl.parts, tpl.slots = _cut(data, pattern, index)
    if fmt == "stream-json":
        body = b"".join(ln for ln in data.splitlines(keepends=True) if not ln.startswith(_CONTROL))
    else:
        body = data
    tpl.body_parts, tpl.body_slots = _cut(body, pattern, index)
    return tpl


def templates_for(fmt: str, ref: Path) -> list[Path]:
    if fmt == "stream-json":
        paths = [*sorted((ref / "forge").glob("*/*.jsonl")), *sorted((ref / "captures" / "stream").glob("*.jsonl"))]
        return [p for p in paths if not p.name.endswith(".stdin.jsonl")]
    return sorted((ref / "captures" / "projects").glob("*/*.jsonl"))


class IdMint:
    """Fresh ids of the same shape as the originals, never issued twice."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.issued: set[bytes] = set()

    def fresh(self, original: bytes) -> bytes:
        text = original.decode()
        if _UUID.fullmatch(original):
            prefix, body = "", text
        else:
            prefix, _, body = text.rpartition("_")
            prefix = prefix + "_" if prefix else ""
        if all(c in _HEX or c == "-" for c in body):
            alphabet = _HEX
        elif all(c in _LOWER for c in body):
            alphabet = _LOWER
        else:
            alphabet = _B62
        if len(body) < 8:
            body = body + "x" * (8 - len(body))
        choice = self.rng.choice
        while True:
            new = (prefix + "".join(c if c == "-" else choice(alphabet) for c in body)).encode()
            if new not in self.issued and new != original:
                self.issued.add(new)
                return new


SESSIONS = ("one", "per-copy")


def _copy(tpl: Template, body: bool, mint: IdMint, session_id: bytes) -> bytes:
    parts, slots = (tpl.body_parts, tpl.body_slots) if body else (tpl.parts, tpl.slots)
    new = [session_id if i in tpl.session_slots else mint.fresh(t) for i, t in enumerate(tpl.tokens)]
    out = [parts[0]]
    for slot, literal in zip(slots, parts[1:]):
        out.append(new[slot])
        out.append(literal)
    return b"".join(out)


_ROOT = b'"parentUuid":null'


def _chain_all(chunk: bytes, last_uuid: bytes | None) -> tuple[bytes, bytes | None]:
    """Hang every root row of the copy under the row with a uuid before it."""
    out = []
    for line in chunk.splitlines(keepends=True):
        if last_uuid is not None and _ROOT in line:
            line = line.replace(_ROOT, b'"parentUuid":"' + last_uuid + b'"', 1)
        try:
            row = json.loads(line)
        except ValueError:
            row = None
        if isinstance(row, dict) and isinstance(row.get("uuid"), str):
            last_uuid = row["uuid"].encode()
        out.append(line)
    return b"".join(out), last_uuid


def _chain_after(chunk: bytes, last_uuid: bytes | None) -> tuple[bytes, bytes | None]:
    """Hang the copy's first root row under ``last_uuid``; return it and its own last uuid."""
    if last_uuid is not None:
        at = chunk.find(_ROOT)
        if at >= 0:
            chunk = chunk[:at] + b'"parentUuid":"' + last_uuid + b'"' + chunk[at + len(_ROOT):]
    for line in reversed(chunk.splitlines()):
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if isinstance(row, dict) and isinstance(row.get("uuid"), str):
            return chunk, row["uuid"].encode()
    return chunk, last_uuid


def build(out: Path, *, size_mb: float = 100, fmt: str = "stream-json", seed: int = 1,
          ref: Path = DEFAULT_REF, quiet: bool = False, one_chain: bool = False,
          sessions: str = "one") -> dict[str, object]:
    """Write the big session to ``out``; returns a few facts about it.

    ``sessions`` is ``"one"`` (every copy in one session) or ``"per-copy"``
    (a fresh session id for each copy)."""
    if sessions not in SESSIONS:
        raise ValueError(f"sessions must be one of {SESSIONS}, not {sessions!r}")
    t0 = time.perf_counter()
    rng = random.Random(seed)
    mint = IdMint(rng)
    session_id = mint.fresh(b"00000000-0000-4000-8000-000000000000")
    templates = [load_template(p, fmt) for p in templates_for(fmt, ref)]
    if not templates:
        raise SystemExit(f"no {fmt} recordings under {ref}")
    target = int(size_mb * 1_000_000)
    written = copies = 0
    seen: set[int] = set()
    last_uuid: bytes | None = None
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    with open(tmp, "wb") as fh:
        while written < target:
            order = list(range(len(templates)))
            rng.shuffle(order)
            for i in order:
                sid = session_id if sessions == "one" else mint.fresh(session_id)
                chunk = _copy(templates[i], i in seen, mint, sid)
                seen.add(i)
                if fmt == "transcript":
                    chunk, last_uuid = (_chain_all if one_chain else _chain_after)(chunk, last_uuid)
                fh.write(chunk)
                written += len(chunk)
                copies += 1
                if written >= target:
                    break
    tmp.replace(out)
    facts = {"path": str(out), "format": fmt, "bytes": written, "copies": copies,
             "templates": len(templates), "seed": seed, "sessions": sessions,
             "session_id": session_id.decode() if sessions == "one" else None,
             "seconds": round(time.perf_counter() - t0, 2)}
    if not quiet:
        print(f"wrote {out}: {written / 1e6:.1f} MB, {copies} copies of {len(templates)} "
              f"{fmt} recordings (seed {seed}, session ids: {sessions}) in {facts['seconds']} s",
              file=sys.stderr)
    return facts


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path, help="output .jsonl path")
    ap.add_argument("--size-mb", type=float, default=100, help="target size in MB (10^6 bytes)")
    ap.add_argument("--format", choices=FORMATS, default="stream-json")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--ref", type=Path, default=DEFAULT_REF, help="the recordings folder (default tests/fixtures)")
    ap.add_argument("--one-chain", action="store_true",
                    help="transcript: hang every root row (compactions too) under the row before")
    ap.add_argument("--sessions", choices=SESSIONS, default="one",
                    help="one session id for the whole file (default), or a fresh one per copy")
    args = ap.parse_args(argv)
    build(args.out, size_mb=args.size_mb, fmt=args.format, seed=args.seed, ref=args.ref,
          one_chain=args.one_chain, sessions=args.sessions)
    return 0


if __name__ == "__main__":
    sys.exit(main())
