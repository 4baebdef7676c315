"""Decoding: every reference recording decodes losslessly, and bad input never raises.

The recordings are the CLI's own bytes (forge/ at 2.1.156 and 2.1.220, captures/
at 2.1.328, stream-json stdout, the host's stdin, on-disk transcripts and their
sub-agent files). Every line must decode to a typed frame, keep its exact bytes,
line number and byte offset, and re-encode to the same JSON.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import msgspec
import pytest

import cctv.reducer.decode as decode_mod
from cctv.reducer import frames as F
from cctv.reducer.decode import decode_bytes, decode_line, detect_format, extras, reencode
from cctv.reducer.feed import Feed, read_file_lines

from conftest import FIXTURES, recordings

_JSON = msgspec.json.Decoder()


def _entries(path: Path) -> tuple[bytes, list[F.Entry]]:
    data = path.read_bytes()
    return data, decode_bytes(data)


# --- the recordings ----------------------------------------------------------------------


def test_recordings_are_there(reference: Path) -> None:
    """The suite below is only as good as its data: make sure we really walk it."""
    files = recordings()
    names = {str(p.relative_to(reference)) for p in files}
    assert len(files) >= 100
    assert "forge/2.1.220/backgrounded_bash_alive_at_result.stdin.jsonl" in names
    assert ("captures/projects/-home-ada-src-demo/d7acffbd-7cff-4056-82e8-4364dc8df14a/"
            "subagents/agent-acfff52c46df9b7f9.jsonl") in names
    assert "captures/stream/04b_thinking_partial.jsonl" in names


def test_recording_decodes_with_nothing_malformed(recording: Path) -> None:
    data, entries = _entries(recording)
    bad = [(e.line_no, e.reason) for e in entries if isinstance(e, F.Malformed)]
    assert bad == []
    assert not [e for e in entries if isinstance(e, F.Blank)]
    # nothing unknown by accident: every top-level type of the reference is modelled
    assert [e.kind_key for e in entries if isinstance(e, F.Unknown)] == []
    assert len(entries) == data.count(b"\n") + (0 if data.endswith(b"\n") else 1)


def test_generic_kinds_across_all_recordings(reference: Path) -> None:
    """The exact set of kinds that decode to a generic frame: no Unknown at all,
    and a system subtype that WIRE.md lists but the fold has no rule for
    (``commands_changed``, 2.1.220)."""
    unknown: Counter[str] = Counter()
    generic: Counter[str] = Counter()
    for path in recordings():
        for e in decode_bytes(path.read_bytes()):
            if isinstance(e, F.Unknown):
                unknown[e.kind_key] += 1
            elif isinstance(e, F.SystemOther):
                generic[e.kind_key] += 1
    assert unknown == Counter()
    assert generic == Counter({"system/commands_changed": 2})


def test_recording_round_trips(recording: Path) -> None:
    """``reencode(entry)`` is the same JSON as the original line, for every line."""
    _, entries = _entries(recording)
    for e in entries:
        again = reencode(e)
        assert _JSON.decode(again) == _JSON.decode(e.raw), f"line {e.line_no}"


def test_recording_raw_bytes_line_numbers_and_offsets_are_exact(recording: Path) -> None:
    data, entries = _entries(recording)
    assert [e.line_no for e in entries] == list(range(1, len(entries) + 1))
    for e in entries:
        assert data[e.offset:e.offset + len(e.raw)] == e.raw, f"line {e.line_no}"
        end = e.offset + len(e.raw)
        assert end == len(data) or data[end:end + 1] == b"\n", f"line {e.line_no}"
        assert e.offset == 0 or data[e.offset - 1:e.offset] == b"\n"
    # the lines, put back together, are the file
    rebuilt = b"\n".join(e.raw for e in entries) + (b"\n" if data.endswith(b"\n") else b"")
    assert rebuilt == data


def test_recording_read_in_small_chunks_gives_the_same_lines(recording: Path) -> None:
    """The file reader hands lines across chunk boundaries without losing a byte."""
    _, whole = _entries(recording)
    feed = Feed()
    for batch in read_file_lines(recording, chunk_size=997):
        feed.feed(batch)
    assert [(e.line_no, e.offset, e.raw) for e in feed.entries] == \
        [(e.line_no, e.offset, e.raw) for e in whole]
    assert [type(e) for e in feed.entries] == [type(e) for e in whole]


# --- extras -------------------------------------------------------------------------------


def test_extras_keeps_unmodelled_fields_only(reference: Path) -> None:
    # captures/stream/01_simple_text.jsonl line 1 is system/init; `capabilities`
    # (a list of feature flags) is not modelled by reducer.frames.Init, `cwd` is.
    path = reference / "captures/stream/01_simple_text.jsonl"
    init = decode_bytes(path.read_bytes())[0]
    assert isinstance(init, F.Init)
    original = json.loads(init.raw)
    more = extras(init)
    assert more["capabilities"] == original["capabilities"]
    assert "msg_lifecycle_v1" in more["capabilities"]
    assert "cwd" not in more and init.cwd == original["cwd"] == "/home/ada/src/demo"
    assert "type" not in more and "subtype" not in more and "session_id" not in more
    # modelled + extras is the whole frame
    assert set(more) | {k for k in original if k not in more} == set(original)


def test_extras_reports_nested_unmodelled_keys(reference: Path) -> None:
    # line 2 of 01_simple_text is an assistant frame; message.role / message.type /
    # message.stop_sequence are not modelled, message.content and message.id are.
    path = reference / "captures/stream/01_simple_text.jsonl"
    asst = decode_bytes(path.read_bytes())[1]
    assert isinstance(asst, F.Assistant)
    more = extras(asst)
    assert more["message"]["role"] == "assistant"
    assert "content" not in more["message"] and "id" not in more["message"]
    assert "parent_tool_use_id" not in more


def test_extras_of_unknown_is_the_whole_object() -> None:
    e = decode_line(b'{"type":"brand_new_kind","x":[1,2],"y":{"z":null}}', 3, 40)
    assert isinstance(e, F.Unknown)
    assert extras(e) == {"type": "brand_new_kind", "x": [1, 2], "y": {"z": None}}


# --- format detection ---------------------------------------------------------------------


def _expected_format(path: Path) -> str:
    rel = path.relative_to(FIXTURES).parts
    return "transcript" if rel[:2] == ("captures", "projects") else "stream-json"


def test_recording_format_is_detected_from_content(recording: Path) -> None:
    data = recording.read_bytes()
    assert detect_format(data.splitlines()) == _expected_format(recording)


def test_recording_format_reaches_the_session(recording: Path) -> None:
    feed = Feed()
    for batch in read_file_lines(recording):
        feed.feed(batch)
    assert feed.session.format == _expected_format(recording)


def test_format_ignores_the_file_name(reference: Path, tmp_path: Path) -> None:
    src = reference / "captures/projects/-home-ada-src-demo/8e4b2dbb-330b-4d03-a3ef-8b4c8ce07f1e.jsonl"
    dst = tmp_path / "stream-json-output.jsonl"
    dst.write_bytes(src.read_bytes())
    feed = Feed()
    for batch in read_file_lines(dst):
        feed.feed(batch)
    assert feed.session.format == "transcript"


def test_mixed_and_unknown_content_still_decodes(reference: Path) -> None:
    stream = (reference / "captures/stream/01_simple_text.jsonl").read_bytes()
    disk = (reference / "captures/projects/-home-ada-src-demo/"
            "8e4b2dbb-330b-4d03-a3ef-8b4c8ce07f1e.jsonl").read_bytes()
    entries = decode_bytes(stream + disk)
    assert not [e for e in entries if isinstance(e, F.Malformed)]
    assert detect_format([b'{"type":"keep_alive"}', b'{"type":"x"}']) == "unknown"


# --- bad input ----------------------------------------------------------------------------


GOOD = b'{"type":"keep_alive"}'

BAD_LINES: list[tuple[bytes, str]] = [
    (b'{"type":"user", "message": {', "invalid JSON"),
    (b'{"type":"user"}}', "invalid JSON"),
    (b'\xff\xfe{"type":"keep_alive"}', "not UTF-8"),
    (b'{"type":"user","message":{"role":"user","content":"caf\xe9"}}', "not UTF-8"),
    (b'[1, 2, 3]', "not a JSON object"),
    (b'"just a string"', "not a JSON object"),
    (b'null', "not a JSON object"),
    (b'{"no_type": 1}', "no \"type\""),
    (b'{"type": 7}', "\"type\" is not a string"),
    (b'{"type":"assistant"}', "assistant: Object missing required field `message`"),
    (b'{"type":"system","subtype":"task_started"}',
     "system/task_started: Object missing required field `task_id`"),
    (b'{"type":"tool_progress"}', "missing required field `tool_use_id`"),
    (b'{"type":"result","duration_ms":"soon"}', "result:"),
    # not UTF-8 where msgspec does not look (a field it skips, a Raw one)
    (b'{"type":"keep_alive","note":"caf\xe9"}', "not UTF-8: invalid byte at column 33"),
    (b'{"type":"user","message":{"content":"x"},"tool_use_result":"\xff"}',
     "not UTF-8: invalid byte at column 61"),
    # a key the fold reads, of the wrong type (the fuzzing found these crash a widget)
    (b'{"type":"system","subtype":"compact_boundary","compact_metadata":{"pre_tokens":"9k"}}',
     "system/compact_boundary: Expected `int | null`, got `str` - at `$.compact_metadata.pre_tokens`"),
    (b'{"type":"system","subtype":"background_tasks_changed","tasks":[{"task_id":"t","subagent_type":{}}]}',
     "Expected `str | null`, got `object` - at `$.tasks[0].subagent_type`"),
    (b'{"type":"result","modelUsage":{"m":{"contextWindow":"1M"}}}',
     "result: Expected `int | null`, got `str` - at `$.modelUsage[...].contextWindow`"),
    (b'{"type":"system","subtype":"stop_hook_summary","hookInfos":[{"durationMs":"2s"}]}',
     "at `$.hookInfos[0].durationMs`"),
    (b'{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Task","input":{"description":7}}]}}',
     "assistant: Expected `str | null`, got `int` - at `$.message.content[0].input.description`"),
    # nested too deep: a free-form value, content blocks, the whole line
    (b'{"type":"assistant","message":{"content":[{"type":"tool_use","input":' + b"[" * 49 + b"]" * 49 + b"}]}}",
     "assistant: nested too deep (a value more than 48 levels deep)"),
    (b'{"type":"user","message":{"content":' + b'[{"type":"tool_result","content":' * 7 + b'"x"'
     + b"}]" * 7 + b"}}", "at `$.message.content[0].content[0].content[0].content[0].content[0]"),
    (b"[" * 5000 + b"]" * 5000, "nested too deep (more than 64 levels)"),
]


def _check_reason(reason: str) -> None:
    assert reason and "\n" not in reason and len(reason) < 300
    assert "Traceback" not in reason


@pytest.mark.parametrize("line,why", BAD_LINES, ids=[w for _, w in BAD_LINES])
def test_bad_line_is_malformed_with_a_reason(line: bytes, why: str) -> None:
    e = decode_line(line, 12, 345)
    assert isinstance(e, F.Malformed)
    assert (e.line_no, e.offset, e.raw) == (12, 345, line)
    assert why in e.reason
    _check_reason(e.reason)
    assert reencode(e) == line and extras(e) == {}


def test_decoding_goes_on_after_bad_lines() -> None:
    lines = [GOOD] + [bad for bad, _ in BAD_LINES] + [GOOD]
    data = b"\n".join(lines) + b"\n"
    entries = decode_bytes(data)
    assert len(entries) == len(lines)
    assert isinstance(entries[0], F.KeepAlive) and isinstance(entries[-1], F.KeepAlive)
    assert entries[-1].line_no == len(lines)
    for i, (bad, why) in enumerate(BAD_LINES, start=2):
        e = entries[i - 1]
        assert isinstance(e, F.Malformed) and e.line_no == i and e.raw == bad, why
        assert data[e.offset:e.offset + len(bad)] == bad


def test_truncated_last_line(reference: Path) -> None:
    # 11_multi_turn has 16 lines; cut the last one (the final command_lifecycle) in half
    data = (reference / "captures/stream/11_multi_turn.jsonl").read_bytes()
    lines = data.splitlines()
    cut = data[: len(data) - 1 - len(lines[-1]) // 2]
    entries = decode_bytes(cut)
    assert len(entries) == 16
    last = entries[-1]
    assert isinstance(last, F.Malformed) and last.line_no == 16
    assert "truncated" in last.reason
    _check_reason(last.reason)
    assert not [e for e in entries[:-1] if isinstance(e, F.Malformed)]
    # a live reader holds the fragment instead (it may still be completed)
    assert len(decode_bytes(cut, final=False)) == 15


def test_truncated_last_line_through_the_file_reader(tmp_path: Path) -> None:
    p = tmp_path / "cut.jsonl"
    p.write_bytes(GOOD + b"\n" + GOOD + b'\n{"type":"result","subtype":"succ')
    feed = Feed()
    for batch in read_file_lines(p):
        feed.feed(batch)
    assert [type(e).__name__ for e in feed.entries] == ["KeepAlive", "KeepAlive", "Malformed"]
    assert feed.session.malformed == [(3, feed.entries[2].reason)]


def test_a_30_mb_line_decodes() -> None:
    big = "x" * (30 * 1024 * 1024)
    line = msgspec.json.encode({
        "type": "user", "session_id": "s",
        "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_big", "content": big}]},
    })
    data = GOOD + b"\n" + line + b"\n" + GOOD + b"\n"
    entries = decode_bytes(data)
    assert [type(e) for e in entries] == [F.KeepAlive, F.User, F.KeepAlive]
    user = entries[1]
    assert user.line_no == 2 and user.offset == len(GOOD) + 1 and user.raw == line
    assert user.message.content[0].content == big


def test_a_line_over_the_limit_is_malformed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(decode_mod, "MAX_LINE_BYTES", 1000)
    line = msgspec.json.encode({"type": "user", "message": {"content": "y" * 2000}})
    entries = decode_bytes(GOOD + b"\n" + line + b"\n" + GOOD)
    assert [type(e) for e in entries] == [F.KeepAlive, F.Malformed, F.KeepAlive]
    bad = entries[1]
    assert bad.line_no == 2 and bad.raw == line
    assert "line too long" in bad.reason
    _check_reason(bad.reason)


def test_blank_and_crlf_lines() -> None:
    data = GOOD + b"\r\n\r\n   \n" + GOOD + b"\r\n"
    entries = decode_bytes(data)
    assert [type(e) for e in entries] == [F.KeepAlive, F.Blank, F.Blank, F.KeepAlive]
    last = entries[-1]
    assert last.raw == GOOD and data[last.offset:last.offset + len(GOOD)] == GOOD
    assert last.line_no == 4


def test_unknown_type_and_subtype_are_kept() -> None:
    raw_type = b'{"type":"ambient_hint","suggestion":"try this","uuid":"u1"}'
    raw_sub = b'{"type":"system","subtype":"memory_recall","mode":"select","memories":[]}'
    e1 = decode_line(raw_type, 5, 50)
    e2 = decode_line(raw_sub, 6, 120)
    assert isinstance(e1, F.Unknown)
    assert (e1.type, e1.subtype, e1.kind_key, e1.raw, e1.line_no) == \
        ("ambient_hint", None, "ambient_hint", raw_type, 5)
    assert isinstance(e2, F.SystemOther) and not isinstance(e2, F.Unknown)
    assert (e2.subtype, e2.kind_key, e2.raw, e2.offset) == \
        ("memory_recall", "system/memory_recall", raw_sub, 120)
    assert extras(e2) == {"mode": "select", "memories": []}
    for e in (e1, e2):
        assert _JSON.decode(reencode(e)) == _JSON.decode(e.raw)


def test_decoder_never_raises_on_odd_values() -> None:
    odd = [
        b'{"type":"assistant","message":{"content":[{"type":"tool_use","input":1e999}]}}',
        b'{"type":"user","message":{"content":null}}',
        b'{"type":"system","subtype":7}',
        b'{"type":"stream_event","event":"nope"}',
        b'{"type":"result","usage":{"input_tokens":null,"output_tokens":null}}',
        b'{"type":"assistant","message":{"id":"m","content":[],"usage":{"input_tokens":-1}}}',
        b'{"type":"user","message":{"content":"x"},"tool_use_result":"not an object"}',
        b'{' * 10_000,
        b'\x00\x01\x02',
    ]
    for i, line in enumerate(odd, 1):
        e = decode_line(line, i, 0)
        assert isinstance(e, F.Entry) and e.line_no == i and e.raw == line
        if isinstance(e, F.Malformed):
            _check_reason(e.reason)


def test_the_depth_limits_leave_room_for_real_values() -> None:
    """48 levels inside a tool's input decode (real frames nest 14 deep in all);
    the values are plain dicts and lists, as with ``Any``."""
    deep = b'{"a":' * 47 + b"[1]" + b"}" * 47
    line = b'{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t","name":"X","input":' \
        + deep + b"}]}}"
    e = decode_line(line)
    assert isinstance(e, F.Assistant)
    value = e.message.content[0].input
    for _ in range(47):
        assert type(value) is dict
        value = value["a"]
    assert value == [1]
    assert reencode(e) == line


def test_undeclared_keys_of_a_checked_object_stay_in_the_line() -> None:
    line = (b'{"type":"rate_limit_event","rate_limit_info":{"status":"allowed_warning",'
            b'"utilization":0.91,"brandNew":{"x":1}}}')
    e = decode_line(line)
    assert isinstance(e, F.RateLimitEvent)
    assert e.rate_limit_info == {"status": "allowed_warning", "utilization": 0.91}
    assert extras(e) == {"rate_limit_info": {"brandNew": {"x": 1}}}
    assert reencode(e) == line


@pytest.mark.parametrize(("line", "deeper"), [
    (b"[" * 64 + b"]" * 64, False),
    (b"[" * 65 + b"]" * 65, True),
    (b"[" * 65, True),  # cut short: what stays open counts
    (b'["' + b"[" * 100 + b'"]', False),  # inside a string
    (b'["\\\\"' + b"," + b"[" * 65 + b"]" * 65 + b"]", True),  # an escaped backslash ends the string
    (b'["\\"' + b"[" * 100 + b'"]', False),  # an escaped quote does not
    (b'{"a":' * 70 + b"1" + b"}" * 70, True),
])
def test_nesting_exceeds(line: bytes, deeper: bool) -> None:
    from cctv.reducer.decode import nesting_exceeds

    assert nesting_exceeds(line) is deeper
