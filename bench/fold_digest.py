#!/usr/bin/env python3
"""A digest of what the reducer produces, to prove an optimisation changed nothing.

For each file: every decoded entry (all fields, raw bytes included), the change
records each line's ``Feed.feed`` returned (each as its class and fields:
``ItemAdded(agent='', index=3)``), and the whole public folded state
(the attributes not starting with ``_`` of every part of the ``Session``, as
one object under the session's name: the session's public state is theirs;
walked deeply: items, calls, turns, tasks, hooks, agents…; shared objects are
written once, then referenced).
Files are the reference recordings plus a few MB built by ``build_big.py`` in
each format. Run it before and after a change and compare::

    python bench/fold_digest.py > /tmp/before.txt
    # ... change the reducer ...
    python bench/fold_digest.py > /tmp/after.txt && diff /tmp/before.txt /tmp/after.txt

``--dump DIR`` also writes the full text per file, to diff when digests differ.
``--no-changes`` leaves the change records out: the digest of the entries and
the state alone, to show that a change to the records changed nothing else.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import sys
from pathlib import Path
from typing import Any

import msgspec

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "bench"))
import checkout  # noqa: E402

checkout.use(REPO)  # this checkout's code as the cctv package, installed or not
sys.path.insert(0, str(HERE))

from build_big import DEFAULT_REF, build  # noqa: E402

from cctv.reducer.feed import Feed, read_file_lines  # noqa: E402
from cctv.reducer.fold import Session  # noqa: E402


class _Walker:
    def __init__(self, ignore: frozenset[str] = frozenset()) -> None:
        self.ignore = ignore
        """Field names left out (a field a change adds on purpose, to show
        that nothing else changed)."""
        self.seen: dict[int, int] = {}
        self.keep: list[Any] = []  # keep walked objects alive so ids stay unique

    def walk(self, obj: Any, out: list[str], depth: int = 0) -> None:
        if obj is None or isinstance(obj, (bool, int, float, str, bytes)):
            out.append(repr(obj))
            return
        if isinstance(obj, msgspec.Raw):
            out.append("Raw(" + repr(bytes(obj)) + ")")
            return
        if isinstance(obj, (list, tuple)) and not hasattr(obj, "_fields"):
            out.append("[" if isinstance(obj, list) else "(")
            for v in obj:
                self.walk(v, out, depth + 1)
                out.append(",")
            out.append("]" if isinstance(obj, list) else ")")
            return
        if isinstance(obj, (set, frozenset)):
            out.append("{" + ",".join(sorted(repr(v) for v in obj)) + "}")
            return
        if isinstance(obj, dict):
            out.append("{")
            for k, v in obj.items():
                out.append(repr(k) + ":")
                self.walk(v, out, depth + 1)
                out.append(",")
            out.append("}")
            return
        # an object: write it once, then refer to it
        ref = self.seen.get(id(obj))
        if ref is not None:
            out.append(f"@{ref}")
            return
        self.seen[id(obj)] = len(self.seen)
        self.keep.append(obj)
        out.append(f"#{self.seen[id(obj)]}{type(obj).__name__}<")
        for name, value in sorted(_fields(obj), key=lambda nv: nv[0]):  # any field order
            if name in self.ignore:
                continue
            out.append(name + "=")
            self.walk(value, out, depth + 1)
            out.append(" ")
        out.append(">")


def _fields(obj: Any) -> list[tuple[str, Any]]:
    if isinstance(obj, Session):  # its public state: that of its parts, flattened
        return [field for part in obj.parts for field in _fields(part)]
    if isinstance(obj, msgspec.Struct):
        return [(f, getattr(obj, f)) for f in obj.__struct_fields__]
    if dataclasses.is_dataclass(obj):
        return [(f.name, getattr(obj, f.name)) for f in dataclasses.fields(obj)]
    if hasattr(obj, "_fields"):  # NamedTuple
        return list(zip(obj._fields, obj))
    names: list[str] = []
    for cls in type(obj).__mro__:
        names += [s for s in getattr(cls, "__slots__", ()) if s not in names]
    if hasattr(obj, "__dict__"):
        names += [k for k in vars(obj) if k not in names]
    return [(n, getattr(obj, n)) for n in names
            if not n.startswith("_") and hasattr(obj, n)]


def digest_file(path: Path, batch_lines: int = 1, ignore: frozenset[str] = frozenset(),
                changes: bool = True) -> tuple[str, str]:
    """(digest, full text) for one file, fed ``batch_lines`` lines at a time
    (0: whole ``read_file_lines`` batches), leaving out the fields ``ignore``
    (and the change records unless ``changes``)."""
    feed = Feed()
    walker = _Walker(ignore)
    out: list[str] = ["changes:"] if changes else []
    for batch in read_file_lines(path):
        step = batch_lines or len(batch)
        for start in range(0, len(batch), step):
            records = feed.feed(batch[start:start + step])
            if changes:
                out += map(repr, records)
                out.append("\n")
    if feed.session.format == "transcript":
        from cctv.viewer.loader import load_subagents

        load_subagents(feed, path)
    out.append("entries:")
    walker.walk(list(feed.entries), out)
    walker.walk({agent: list(log) for agent, log in feed.agent_entries.items()}, out)
    out.append("\nsession:")
    walker.walk(feed.session, out)
    text = "".join(out)
    return hashlib.sha256(text.encode()).hexdigest()[:16], text


def default_files(ref: Path, size_mb: float) -> list[Path]:
    files = sorted(p for p in ref.rglob("*.jsonl") if not p.name.endswith(".stdin.jsonl"))
    for fmt in ("stream-json", "transcript"):
        big = HERE / "out" / f"digest-{fmt}-{size_mb:g}mb.jsonl"
        if not big.exists():
            build(big, size_mb=size_mb, fmt=fmt, ref=ref, quiet=True)
        files.append(big)
    return files


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="*", type=Path)
    ap.add_argument("--ref", type=Path, default=DEFAULT_REF)
    ap.add_argument("--size-mb", type=float, default=5, help="size of the built files")
    ap.add_argument("--dump", type=Path, help="write the full text per file into this folder")
    ap.add_argument("--batch", type=int, default=1, metavar="N",
                    help="feed N lines at a time (default 1: a change list per line; "
                         "0: whole read_file_lines batches)")
    ap.add_argument("--no-changes", dest="changes", action="store_false",
                    help="leave the change records out (the entries and the state alone)")
    ap.add_argument("--ignore", action="append", default=[], metavar="FIELD",
                    help="leave this field out of every object (repeatable): a field a "
                         "change adds on purpose, to show nothing else changed")
    args = ap.parse_args(argv)
    files = args.files or default_files(args.ref, args.size_mb)
    for path in files:
        digest, text = digest_file(path, args.batch, frozenset(args.ignore), args.changes)
        print(f"{digest}  {path}")
        if args.dump:
            args.dump.mkdir(parents=True, exist_ok=True)
            (args.dump / (path.name + ".txt")).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
