#!/usr/bin/env python3
"""Narrowing the session browser's list as you type, on many real titles.

    python bench/browse_narrow.py [PROJECTS_DIR]

Reads the rows of PROJECTS_DIR from the session index (default: the
fixtures' real projects tree, 46 sessions; give ``bench/out/index-tree-*/projects``
for 2,000), then times one keystroke's narrowing (:func:`viewer.screens.browse.narrow`)
for a few queries, against Textual's fuzzy matcher (the command palette's,
what the browser used before) over the same titles and projects, stopped after
``--budget`` seconds per query.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
import checkout  # noqa: E402

checkout.use(ROOT)  # this checkout's code as the cctv package, installed or not

QUERIES = ("ref", "refactor", "refactor timeline", "please fix the tests", "rfctr")


def fuzzy_rows(rows, query: str, budget: float) -> tuple[int, float, bool]:
    from textual.fuzzy import Matcher

    matcher = Matcher(query)
    start = time.perf_counter()
    found = 0
    for row in rows:
        if max(matcher.match(row.title[:200]), matcher.match(row.project)) > 0:
            found += 1
        if time.perf_counter() - start > budget:
            return found, time.perf_counter() - start, False
    return found, time.perf_counter() - start, True


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("projects", nargs="?", type=Path,
                    default=ROOT / "tests" / "fixtures" / "public" / "claude-code-log" / "real_projects")
    ap.add_argument("--budget", type=float, default=10.0)
    args = ap.parse_args(argv)
    os.environ.setdefault("XDG_CACHE_HOME", tempfile.mkdtemp(prefix="cctv-bench-"))
    from cctv.viewer.index import SessionIndex
    from cctv.viewer.screens.browse import narrow

    index = SessionIndex(args.projects)
    index.refresh()
    rows = index.rows()
    print(f"{len(rows):,} sessions under {args.projects}")
    for query in QUERIES:
        t0 = time.perf_counter()
        shown = narrow(rows, query)
        ours = time.perf_counter() - t0
        found, theirs, done = fuzzy_rows(rows, query, args.budget)
        print(f"  {query!r:24} narrow {ours * 1000:8.2f} ms, {len(shown):5} rows   "
              f"textual.fuzzy {theirs * 1000:9.1f} ms{'' if done else ' (stopped: budget)'}, "
              f"{found:5} rows")
    index.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
