"""The fast paths bench/ measured into the reducer give the same results as the plain ones,
and the big-session builder makes what it says.

- A system frame decoded straight by its subtype (and an init through its twin
  Struct with shared lists) equals the two-step decode, for every recorded
  system line and for crafted bad ones (same frame, or the same malformed reason).
- Feed leaves the garbage collector as it found it: enabled or not, nothing frozen.
- ``bench/build_big.py`` is deterministic, and its copies get fresh ids: two
  copies of the recordings fold to twice the calls, tasks and hooks of one.
"""

from __future__ import annotations

import gc
import sys
from pathlib import Path

import msgspec
import pytest

from cctv.reducer import decode as D
from cctv.reducer.decode import decode_line
from cctv.reducer.feed import Feed, read_file_lines
from cctv.reducer.frames import SYSTEM_SUBTYPES, Malformed, System
from cctv.reducer.lines import LineSplitter

from conftest import FIXTURES, recordings

BENCH = Path(__file__).resolve().parents[1] / "bench"


def _two_step(data: bytes):
    """The general path of the decoder: the union, then the system subtype."""
    frame = D._FRAME_DECODER.decode(data)
    assert type(frame) is System
    cls = SYSTEM_SUBTYPES.get(frame.subtype)
    if cls is None:
        return D._OTHER_SYSTEM_DECODER.decode(data)
    try:
        return msgspec.json.Decoder(cls).decode(data)
    except msgspec.ValidationError as exc:
        return Malformed(reason=f"system/{frame.subtype}: {exc}")


def _system_lines() -> list[bytes]:
    out = []
    for path in recordings():
        for line in path.read_bytes().splitlines():
            if line.startswith(b'{"type":"system","subtype":"'):
                out.append(line)
    return out


def test_system_fast_path_equals_two_step_decode_on_every_recorded_line():
    lines = _system_lines()
    assert len(lines) > 500
    inits = 0
    for line in lines:
        fast = decode_line(line)
        slow = _two_step(line)
        slow.raw = line
        assert type(fast) is type(slow)
        assert fast == slow, line[:120]
        inits += fast.kind_key == "system/init"
    assert inits > 50


@pytest.mark.parametrize("line", [
    b'{"type":"system","subtype":"init","tools":5}',
    b'{"type":"system","subtype":"init","tools":[1]}',
    b'{"type":"system","subtype":"init","tools":null}',
    b'{"type":"system","subtype":"init"}',
    b'{"type":"system","subtype":"init","tools":[],"mcp_servers":[{"a":1},{"a":true}]}',
    b'{"type":"system","subtype":"init","tools":["a"],"uuid":5}',
    b'{"type":"system","subtype":"init","subtype":"status"}',
    b'{"type":"system","subtype":"hook_started"}',
    b'{"type":"system","subtype":"hook_started","hook_id":"h","subtype":"hook_response"}',
    b'{"type":"system","subtype":"hook\\u005fstarted","hook_id":"h"}',
    b'{"type":"system","subtype":"thinking_tokens","estimated_tokens":"many"}',
])
def test_system_fast_path_equals_two_step_decode_on_crafted_lines(line):
    fast = decode_line(line)
    try:
        slow = _two_step(line)
    except msgspec.ValidationError:
        slow = None  # the union rejects it: the general path reports it (checked below)
    if slow is None:
        assert isinstance(fast, Malformed) and fast.reason.startswith("system: ")
        return
    slow.raw = line
    assert type(fast) is type(slow) and fast == slow


def test_equal_init_lists_are_shared_and_equal_to_a_plain_decode():
    a = b'{"type":"system","subtype":"init","tools":["Bash","Read"],"uuid":"u1","agents":["x"]}'
    b = b'{"type":"system","subtype":"init","tools":["Bash","Read"],"uuid":"u2","agents":["y"]}'
    D._INIT_LIST_CACHE.clear()  # a full cache is emptied on the next miss
    ea, eb = decode_line(a), decode_line(b)
    assert ea.tools == ["Bash", "Read"] and ea.tools is eb.tools
    assert ea.agents == ["x"] and eb.agents == ["y"]
    plain = msgspec.json.Decoder(SYSTEM_SUBTYPES["init"]).decode(b)
    plain.raw = b
    assert eb == plain


def _lines(n: int) -> list:
    data = b"".join(b'{"type":"rate_limit_event","rate_limit_info":{"status":"allowed"},"n":%d}\n' % i
                    for i in range(n))
    return LineSplitter().feed(data)


@pytest.mark.parametrize("n", [3, 2500])
@pytest.mark.parametrize("enabled", [True, False])
def test_feed_leaves_the_collector_as_it_found_it(n, enabled):
    was = gc.isenabled()
    frozen_before = gc.get_freeze_count()  # another test's app may have frozen some
    try:
        (gc.enable if enabled else gc.disable)()
        feed = Feed()
        feed.feed(_lines(n))
        assert gc.isenabled() is enabled
        assert gc.get_freeze_count() == frozen_before
        assert feed.session.kinds["rate_limit_event"] == n
    finally:
        (gc.enable if was else gc.disable)()


def test_feed_does_not_undo_someone_elses_freeze():
    was = gc.isenabled()
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        assert frozen > 0
        gc.enable()
        Feed().feed(_lines(2500))
        assert gc.get_freeze_count() >= frozen
    finally:
        gc.unfreeze()
        (gc.enable if was else gc.disable)()


# --- bench/build_big.py -------------------------------------------------------------------


@pytest.fixture(scope="module")
def build_big():
    sys.path.insert(0, str(BENCH))
    try:
        import build_big
    finally:
        sys.path.remove(str(BENCH))
    return build_big


def _fold(path: Path) -> Feed:
    feed = Feed()
    for batch in read_file_lines(path):
        feed.feed(batch)
    return feed


@pytest.mark.parametrize("fmt", ["stream-json", "transcript"])
def test_build_big_is_deterministic_and_copies_get_fresh_ids(build_big, tmp_path, fmt):
    templates = build_big.templates_for(fmt, FIXTURES)
    one_pass = sum(p.stat().st_size for p in templates) / 1e6
    one, again = tmp_path / "one.jsonl", tmp_path / "again.jsonl"
    build_big.build(one, size_mb=one_pass, fmt=fmt, ref=FIXTURES, quiet=True)
    build_big.build(again, size_mb=one_pass, fmt=fmt, ref=FIXTURES, quiet=True)
    assert one.read_bytes() == again.read_bytes()

    # every recording once, then each again: the second copies must add as many
    # distinct calls, tasks and hooks as the first (no id is reused)
    two = tmp_path / "two.jsonl"
    facts = build_big.build(two, size_mb=2 * one_pass, fmt=fmt, ref=FIXTURES, quiet=True)
    assert facts["copies"] > len(templates)
    s1, s2 = _fold(one).session, _fold(two).session
    assert not s1.malformed and not s2.malformed
    assert s1.session_ids == [facts["session_id"]] == s2.session_ids
    per_template = {}
    for p in templates:
        s = _fold(p).session
        per_template[p] = (len(s.calls), len(s.tasks), len(s.hooks))
    assert (len(s1.calls), len(s1.tasks), len(s1.hooks)) == tuple(
        sum(v[i] for v in per_template.values()) for i in range(3))
    assert len(s2.calls) > len(s1.calls) or not s1.calls
    assert len(s2.hooks) > len(s1.hooks) or not s1.hooks
    unpaired = [c for c in s2.calls.values() if c.result_line_no is None]
    assert len(unpaired) <= 2 * sum(1 for c in s1.calls.values() if c.result_line_no is None)


# --- rewinds found by depth equal rewinds found by walking ---------------------------------


def _rows_session(rows, walk_only: bool):
    from cctv.reducer.fold import Session

    s = Session()
    if walk_only:
        s.parts.chain._on_path = None  # the reference walk for every row
    changes = []
    for i, (kind, uuid, parent, meta, tool_result) in enumerate(rows, 1):
        row = {"type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": "s", "isMeta": meta}
        if kind == "user":
            row["message"] = {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t", "content": "x"}] if tool_result else f"hello {i}"}
        elif kind == "assistant":
            row["message"] = {"id": f"m{i}", "content": [{"type": "text", "text": f"a{i}"}]}
        else:
            row["attachment"] = {"type": "date"}
        changes.append(s.apply(decode_line(msgspec.json.encode(row), i, 0)))
    items = {a: [(it.index, it.hidden, it.version) for it in ag.items] for a, ag in s.agents.items()}
    return changes, s.rewinds, items


def test_rewinds_by_depth_equal_rewinds_by_walking():
    """Random parent graphs: reused uuids (re-parenting), parents named before
    their rows, cycles, tool results and meta rows; and long chains with
    attachments between messages and a few rewinds."""
    import random

    rng = random.Random(7)
    fast_rewinds = 0
    for trial in range(400):
        pool = [f"u{k}" for k in range(rng.randint(2, 30))]
        rows, seen = [], []
        for i in range(rng.randint(1, 40)):
            kind = rng.choice(["user", "assistant", "assistant", "attachment"])
            r = rng.random()
            parent = (seen[-1] if r < 0.5 and seen else rng.choice(seen) if r < 0.7 and seen
                      else None if r < 0.8 else rng.choice(pool))
            uuid = rng.choice(pool) if rng.random() < 0.2 else f"n{trial}_{i}"
            rows.append((kind, uuid, parent, rng.random() < 0.05, rng.random() < 0.2))
            seen.append(uuid)
        fast = _rows_session(rows, walk_only=False)
        assert fast == _rows_session(rows, walk_only=True), rows
        fast_rewinds += fast[1]
    for trial in range(3):
        rows, prev, msgs = [], None, []
        for i in range(2000):
            kind = "attachment" if i % 3 == 1 else rng.choice(["user", "assistant"])
            parent = rng.choice(msgs) if kind != "attachment" and msgs and rng.random() < 0.01 else prev
            rows.append((kind, f"c{trial}_{i}", parent, False, False))
            prev = rows[-1][1]
            if kind != "attachment":
                msgs.append(prev)
        fast = _rows_session(rows, walk_only=False)
        assert fast == _rows_session(rows, walk_only=True)
        assert fast[1] > 0
    assert fast_rewinds > 0
