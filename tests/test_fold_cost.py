"""No cost that grows with the session: the structures the fold asks on every
frame are sets and pruned indexes, not lists scanned from the start. (The
figures are bench/decode_fold.py's; these tests check the structures.)"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from cctv.reducer.feed import Feed, read_file_lines
from cctv.reducer.summary import summarize

from conftest import FIXTURES

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import build_big  # noqa: E402


def _fold(path: Path) -> Feed:
    feed = Feed()
    for batch in read_file_lines(path):
        feed.feed(batch)
    return feed


@pytest.mark.parametrize("fmt", build_big.FORMATS)
def test_a_fresh_session_id_per_copy_is_folded_as_that_many_sessions(tmp_path: Path, fmt: str) -> None:
    out = tmp_path / "big.jsonl"
    facts = build_big.build(out, size_mb=1.5, fmt=fmt, ref=FIXTURES, quiet=True, sessions="per-copy")
    data = out.read_bytes()
    key = rb'"session_id":"([^"]+)"' if fmt == "stream-json" else rb'"sessionId":"([^"]+)"'
    in_file = list(dict.fromkeys(m.group(1).decode() for m in re.finditer(key, data)))
    assert len(in_file) > 5 and facts["sessions"] == "per-copy"
    s = _fold(out).session
    assert s.session_ids == in_file  # every id once, in the order they came
    assert summarize(s)["session_ids"] == in_file
    one = tmp_path / "one.jsonl"
    build_big.build(one, size_mb=1.5, fmt=fmt, ref=FIXTURES, quiet=True)
    assert len(_fold(one).session.session_ids) == 1


def test_asking_the_activity_forgets_calls_that_are_over() -> None:
    # forge/2.1.220/multi_turn.jsonl and captures/stream/03_tools.jsonl, asked after every line
    # as the status bar does: the calls it keeps looking at are only the ones still open
    for name in ("forge/2.1.220/multi_turn.jsonl", "captures/stream/03_tools.jsonl",
                 "forge/2.1.220/backgrounded_bash_lifecycle.jsonl"):
        feed = Feed()
        for batch in read_file_lines(FIXTURES / name):
            for line in batch:
                feed.feed([line])
                feed.session.activity
        s = feed.session
        open_calls = s.parts.calls._open_calls
        assert all(not c.finished and not c.background for c in open_calls.values()), name
        assert len(open_calls) <= len([c for c in s.calls.values() if not c.finished])
