"""Property tests: whatever the input, decoding and folding never raise.

The input is random bytes, or real lines from the reference recordings cut at
random points, interleaved across files and shuffled out of order. The fold
catches its own exceptions (and shows them as a problem item) so a viewer never
dies; these tests also check that it never *needs* to, i.e. no line ever ends up
as "cctv could not fold this frame". And a checkpoint taken anywhere restores to
the same state, from which the rest of the file folds to the same result.
"""

from __future__ import annotations

import functools
import random
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cctv.reducer.decode import decode_bytes, decode_line
from cctv.reducer.feed import Feed
from cctv.reducer.frames import Entry, Malformed
from cctv.reducer.lines import LineSplitter
from cctv.reducer.fold import Session
from cctv.reducer.replay.snapshot import checkpoint, restore
from cctv.reducer.state import MAIN, ProblemItem
from cctv.reducer.summary import summarize

from conftest import FIXTURES, recordings

FAST = settings(max_examples=150, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@functools.lru_cache(maxsize=1)
def _files() -> tuple[tuple[str, tuple[bytes, ...]], ...]:
    out = []
    for p in recordings():
        out.append((str(p.relative_to(FIXTURES)), tuple(p.read_bytes().splitlines())))
    return tuple(out)


def _pool() -> list[bytes]:
    files = _files()
    return [line for _, lines in files for line in lines]


def _internal_errors(session: Session) -> list[str]:
    return [i.reason for a in session.agents.values() for i in a.items
            if isinstance(i, ProblemItem) and "could not fold" in i.reason]


def _apply_all(session: Session, entries: list[Entry], agent: str | None = None) -> None:
    for e in entries:
        out = session.apply(e, agent=agent)
        assert isinstance(out, list)


def _state(session: Session) -> tuple:
    """A comparable picture of the state: the summary plus every agent's items."""
    items = {aid: [(i.kind, i.line_no, i.hidden, getattr(i, "text", None), i.turn)
                   for i in agent.items] for aid, agent in session.agents.items()}
    calls = {c.id: (c.status, c.agent, c.result_line_no, c.heartbeats, c.task_id)
             for c in session.calls.values()}
    return summarize(session), items, calls, session.status, session.activity


# --- random bytes -------------------------------------------------------------------------


@FAST
@given(st.binary(max_size=2000))
def test_random_bytes_never_raise(data: bytes) -> None:
    entries = decode_bytes(data)
    for e in entries:
        assert isinstance(e, Entry)
        if isinstance(e, Malformed):
            assert e.reason and "\n" not in e.reason
    s = Session()
    _apply_all(s, entries)
    assert not _internal_errors(s)


@FAST
@given(st.lists(st.binary(max_size=300), max_size=20), st.data())
def test_lines_split_in_any_chunks_are_the_same_lines(parts: list[bytes], data: st.DataObject) -> None:
    blob = b"\n".join(parts)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(blob)), max_size=10)))
    splitter = LineSplitter()
    got = []
    prev = 0
    for cut in cuts + [len(blob)]:
        got += splitter.feed(blob[prev:cut])
        prev = cut
    last = splitter.flush()
    if last is not None:
        got.append(last)
    whole = decode_bytes(blob)
    assert [(ln.line_no, ln.offset, ln.data) for ln in got] == \
        [(e.line_no, e.offset, e.raw) for e in whole]


@FAST
@given(st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["type", "subtype", "message", "content", "id", "task_id", "hook_id",
                         "tool_use_id", "session_id", "usage", "event", "patch", "uuid"]),
        inner, max_size=5),
    max_leaves=20), st.sampled_from(["assistant", "user", "result", "system", "stream_event",
                                     "tool_progress", "attachment", "progress", "summary"]),
    st.sampled_from(["init", "status", "task_started", "task_updated", "hook_response",
                     "compact_boundary", "thinking_tokens", "stop_hook_summary", "x"]))
def test_frames_of_a_known_type_with_random_fields(body, kind: str, subtype: str) -> None:
    import msgspec

    frame = dict(body) if isinstance(body, dict) else {"payload": body}
    frame["type"] = kind
    if kind == "system":
        frame["subtype"] = subtype
    e = decode_line(msgspec.json.encode(frame), 1, 0)
    s = Session()
    _apply_all(s, [e])
    assert not _internal_errors(s)


# --- real lines, damaged and shuffled ---------------------------------------------------------


@FAST
@given(st.data())
def test_truncated_interleaved_and_shuffled_real_lines(data: st.DataObject) -> None:
    pool = _pool()
    rng = random.Random(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    picked = [pool[rng.randrange(len(pool))] for _ in range(data.draw(st.integers(1, 120)))]
    lines = []
    for line in picked:
        roll = rng.random()
        if roll < 0.2:
            line = line[:rng.randrange(len(line) + 1)]
        elif roll < 0.25:
            line = line + line[:rng.randrange(len(line) + 1)]
        lines.append(line)
    blob = b"\n".join(lines)
    entries = decode_bytes(blob)
    # a trailing empty fragment is no line
    assert len(entries) == blob.count(b"\n") + (0 if not blob or blob.endswith(b"\n") else 1)
    s = Session()
    _apply_all(s, entries)
    assert not _internal_errors(s)
    summarize(s)
    assert s.lines == len(entries)


@FAST
@given(st.data())
def test_one_recording_out_of_order(data: st.DataObject) -> None:
    files = _files()
    name, lines = data.draw(st.sampled_from(files), label="file")
    order = data.draw(st.permutations(range(len(lines))), label="order")
    entries = [decode_line(lines[i], i + 1, 0) for i in order]
    s = Session()
    _apply_all(s, entries)
    assert not _internal_errors(s), name
    summarize(s)
    # a frame may be routed to any agent (the rows of a sub-agent file are)
    s2 = Session()
    _apply_all(s2, entries[: len(entries) // 2], agent="toolu_sub")
    _apply_all(s2, entries[len(entries) // 2:])
    assert not _internal_errors(s2), name


@FAST
@given(st.data())
def test_two_recordings_interleaved(data: st.DataObject) -> None:
    files = _files()
    (_, a), (_, b) = data.draw(st.sampled_from(files)), data.draw(st.sampled_from(files))
    flags = data.draw(st.lists(st.booleans(), min_size=len(a) + len(b),
                               max_size=len(a) + len(b)))
    ia, ib, merged = iter(a), iter(b), []
    for take_a in flags:
        nxt = next(ia, None) if take_a else next(ib, None)
        if nxt is None:
            nxt = next(ib, None) if take_a else next(ia, None)
        merged.append(nxt)
    feed = Feed()
    from cctv.reducer.lines import RawLine

    changes = feed.feed([RawLine(n, 0, line) for n, line in enumerate(merged, 1)])
    assert isinstance(changes, list)
    assert not _internal_errors(feed.session)
    assert feed.session.lines == len(a) + len(b)


# --- checkpoint and restore --------------------------------------------------------------------


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_checkpoint_restore_round_trip(data: st.DataObject) -> None:
    files = [f for f in _files() if len(f[1]) > 2]
    name, lines = data.draw(st.sampled_from(files), label="file")
    entries = [decode_line(line, n, 0) for n, line in enumerate(lines, 1)]
    k = data.draw(st.integers(0, len(entries)), label="split")

    straight = Session()
    _apply_all(straight, entries)

    head = Session()
    _apply_all(head, entries[:k])
    snapshot = checkpoint(head)
    assert isinstance(snapshot, bytes)
    at_k = _state(head)
    restored = restore(snapshot)
    assert _state(restored) == at_k, name
    # folding the rest after the restore lands where folding straight through does
    _apply_all(restored, entries[k:])
    assert _state(restored) == _state(straight), name
    # and the snapshot does not follow the session it was taken from
    _apply_all(head, entries[k:])
    assert _state(restore(snapshot)) == at_k, name


def test_checkpoint_mid_stream_keeps_streaming_items(reference: Path) -> None:
    # 04b_thinking_partial.jsonl: at line 10 a thinking block is mid-stream (see
    # test_fold_scenarios); a restore there must still let the complete frame replace it.
    lines = (reference / "captures/stream/04b_thinking_partial.jsonl").read_bytes().splitlines()
    entries = [decode_line(line, n, 0) for n, line in enumerate(lines, 1)]
    s = Session()
    _apply_all(s, entries[:10])
    r = restore(checkpoint(s))
    assert r.main.items[0].streaming
    _apply_all(r, entries[10:])
    assert [i.kind for i in r.main.items if i.kind != "turn_footer"] == ["thinking", "text"]
    assert not r.main.items[0].streaming
    assert r.agents[MAIN].items[0] is not s.agents[MAIN].items[0]
