"""The index reads a live session on from where it stopped, and gets what a fresh read gets.

A session is written in pieces (a cut mid-line included) into ``tmp_path``;
after each piece :func:`viewer.index.extract.extract` is asked for the texts
after the lines already indexed, as the browser's refresh asks, with the
read kept between calls. The last row, and all texts gathered along the way,
must equal one fresh read of the whole file; and each step must read only the
bytes that were added.
"""

from __future__ import annotations

import os
import shutil
import time
from collections import Counter
from pathlib import Path

import pytest

from conftest import FIXTURES
from cctv.viewer.index import SessionIndex
from cctv.viewer.index import extract as extract_module
from cctv.viewer.index.extract import SessionRead, extract
from cctv.viewer.index.rows import TextRow

OLD = 1_700_000_000
REAL = FIXTURES / "public" / "claude-code-log" / "real_projects"
SESSIONS = sorted(p for p in REAL.glob("*/*.jsonl"))[:12] + [
    FIXTURES / "public" / "claude-code-log" / "sidechain.jsonl",  # CLI 1.0: inline sub-agent rows
]


@pytest.fixture(autouse=True)
def _no_kept_reads():
    extract_module._READS.clear()
    yield
    extract_module._READS.clear()


def _copy(src: Path, dst_dir: Path) -> Path:
    dst = dst_dir / src.parent.name / src.name
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(src, dst)
    sub = src.parent / src.stem
    if sub.is_dir():
        shutil.copytree(sub, dst.parent / src.stem)
    for legacy in src.parent.glob("agent-*.jsonl"):
        shutil.copy(legacy, dst.parent / legacy.name)
    return dst


def _text_key(t: TextRow) -> tuple:
    return t.file or "", t.line, t.role, t.body, t.chars, t.agent or "", t.timestamp or ""


@pytest.mark.parametrize("src", SESSIONS, ids=lambda p: p.stem[:8])
def test_reading_on_gets_what_a_fresh_read_gets(src: Path, tmp_path: Path) -> None:
    data = src.read_bytes()
    path = _copy(src, tmp_path)
    cuts = sorted({min(len(data), c) for c in (len(data) // 3, len(data) // 3 + 7,
                                                (2 * len(data)) // 3, len(data))})
    path.write_bytes(b"")
    texts = []
    lines = 0
    written = 0
    for cut in cuts:
        with path.open("ab") as fh:
            fh.write(data[written:cut])
        written = cut
        before = extract_module._READS.get(str(path))
        start = before.end if before is not None else 0
        got = extract(str(path), str(path.parent), cut, 0.0, lines, keep=True)
        kept = extract_module._READS[str(path)]
        if before is not None:
            assert kept is before  # read on, not again
        assert kept.main.offset == cut and start <= got.indexed_bytes <= cut
        texts += got.texts
        lines = got.lines
    fresh = extract(str(path), str(path.parent), len(data), 0.0, 0)
    assert got.row == fresh.row
    assert (got.indexed_bytes, got.lines, got.tail) == (fresh.indexed_bytes, fresh.lines, fresh.tail)
    # every text once, sub-agents' too (a text whose row came in a later piece, later)
    assert sorted(texts, key=_text_key) == sorted(fresh.texts, key=_text_key)


def test_a_rewritten_file_is_read_again(tmp_path: Path) -> None:
    src = next(s for s in SESSIONS if s.stat().st_size > 10_000)
    path = _copy(src, tmp_path)
    extract(str(path), str(path.parent), path.stat().st_size, 0.0, 0, keep=True)
    first = extract_module._READS[str(path)]
    data = src.read_bytes()
    path.write_bytes(b" " + data[1:])  # same size, other bytes: not an append
    extract(str(path), str(path.parent), path.stat().st_size, 0.0, 0, keep=True)
    assert extract_module._READS[str(path)] is not first


def test_kept_reads_are_bounded(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(extract_module, "KEPT_READS", 2)
    for src in [s for s in SESSIONS if s.stat().st_size][:4]:
        path = _copy(src, tmp_path)
        extract(str(path), str(path.parent), path.stat().st_size, 0.0, 0, keep=True)
    assert len(extract_module._READS) == 2
    assert all(isinstance(r, SessionRead) for r in extract_module._READS.values())


def test_a_sub_agent_filed_before_its_call_was_named_is_read_again(tmp_path: Path) -> None:
    """A sub-agent file with no call id in its .meta.json is filed under the call
    whose result names its agent id; until that result is read, a read files it
    under a stand-in. Read on past the result, the kept read would keep the
    stand-in: it is read again, and equals a fresh read."""
    src = REAL / "-experiments-worktrees" / "ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl"
    lines = src.read_bytes().splitlines(keepends=True)
    naming = next(i for i, line in enumerate(lines) if b'"agentId":"a52886dc180afb356"' in line
                  and b'"toolUseResult"' in line)
    path = _copy(src, tmp_path)
    path.write_bytes(b"".join(lines[:naming]))
    first = extract(str(path), str(path.parent), path.stat().st_size, 0.0, 0, keep=True)
    kept = extract_module._READS[str(path)]
    assert "agent-a52886dc180afb356" in kept.feed.session.agents  # the stand-in
    path.write_bytes(b"".join(lines))
    got = extract(str(path), str(path.parent), path.stat().st_size, 0.0, first.lines, keep=True)
    again = extract_module._READS[str(path)]
    assert again is not kept and "agent-a52886dc180afb356" not in again.feed.session.agents
    fresh = extract(str(path), str(path.parent), path.stat().st_size, 0.0, 0)
    assert got.row == fresh.row


# --------------------------------------------------------------------------- every split point

APPENDED = [
    FIXTURES / "captures" / "projects" / "-home-ada-src-demo" / "142bb34b-89e4-4e11-b4ed-b3397e45f6d4.jsonl",
    FIXTURES / "captures" / "projects" / "-home-ada-src-demo" / "d7acffbd-7cff-4056-82e8-4364dc8df14a.jsonl",
    REAL / "-Users-dain-workspace-claude-code-log-sample" / "b45ad5d8-81fb-4bcb-baba-19d9f503d731.jsonl",
]
"""Hooks, a sub-agent in its own file, a real session of tool calls and results."""


def _indexed_texts(index: SessionIndex) -> Counter:
    """Every text row of the index, each with how many times it is there."""
    return Counter(index.store.db.execute(
        "SELECT line, role, body, ts, chars, file, agent FROM texts").fetchall())


@pytest.mark.parametrize("src", APPENDED, ids=lambda p: p.stem[:8])
def test_an_appended_index_equals_a_fresh_one_at_every_split_point(src: Path, tmp_path: Path,
                                                                    monkeypatch) -> None:
    """The file written up to each line boundary, indexed, then the rest appended
    and indexed again: the index holds exactly the texts a fresh index of the
    whole file holds, each once (the first appended line's found, the
    boundary's not twice). Every other split is read on from a kept read
    (a live file), the others from the index's stored state alone."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    path = _copy(src, tmp_path / "projects")
    data = src.read_bytes()
    fresh = SessionIndex(tmp_path / "projects", use_index=False, workers=1)
    fresh.refresh()
    want = _indexed_texts(fresh)
    assert sum(want.values()) > 10 and max(want.values()) == 1
    ends = [i + 1 for i, byte in enumerate(data) if byte == 0x0A][:-1]
    appended = 0
    for n, end in enumerate(ends):
        extract_module._READS.clear()
        path.write_bytes(data[:end])
        stamp = time.time() if n % 2 else OLD
        os.utime(path, (stamp, stamp))
        index = SessionIndex(tmp_path / "projects", use_index=False, workers=1)
        index.refresh()
        path.write_bytes(data)
        os.utime(path, (stamp + 1, stamp + 1))
        appended += index.refresh().appended
        assert _indexed_texts(index) == want, f"split after line {n + 1} ({end} bytes)"
    assert appended >= len(ends) - 2  # (a file shorter than the head compared is read anew)
