"""A giant line decoded in pieces (reducer.giant, viewer.sources.FileTail) gives
the entry the plain decode gives, holds its text once, and finds its strings
whatever escapes, UTF-8 sequences and surrogate pairs the piece boundaries cut."""

from __future__ import annotations

import asyncio
import json
import tracemalloc
from pathlib import Path

import msgspec
from hypothesis import given, settings, strategies as st

from cctv.reducer import giant
from cctv.reducer.decode import decode_line
from cctv.reducer.feed import Feed
from cctv.reducer.state import MAIN
from cctv.reducer.queries import contains_folded, search_parts, search_text
from cctv.viewer.sources import GIANT_LINE, FileTail, Lines
from conftest import FIXTURES

TOOLS = FIXTURES / "captures" / "stream" / "03_tools.jsonl"

# text that makes every kind of escape and UTF-8 length, and surrogate pairs
_TEXT = st.text(alphabet=st.sampled_from(list('ab"\\\n\t\x00\x1b/é€😀ß ')), min_size=0, max_size=300)


def _tool_result_line(text: str, ensure_ascii: bool, with_result: bool) -> bytes:
    frame = {"type": "user", "message": {"role": "user", "content": [
        {"tool_use_id": "toolu_1", "type": "tool_result", "content": text}]},
        "parent_tool_use_id": None, "session_id": "s", "uuid": "u-1"}
    if with_result:
        frame["tool_use_result"] = {"stdout": text, "stderr": "", "interrupted": False}
    return json.dumps(frame, ensure_ascii=ensure_ascii).encode()


def _same(entry, plain) -> bool:
    """Equal entries; a ``Raw`` field equal when it decodes to the same value
    (the split one holds the text encoded again, escaped its own way)."""
    raws = [f for f in getattr(plain, "__struct_fields__", ())
            if type(getattr(plain, f)) is msgspec.Raw]
    for name in raws:
        a, b = getattr(entry, name), getattr(plain, name)
        if (msgspec.json.decode(a) if len(a) else None) != (msgspec.json.decode(b) if len(b) else None):
            return False
    blank = {name: msgspec.Raw() for name in raws}
    return msgspec.structs.replace(entry, **blank) == msgspec.structs.replace(plain, **blank)


def _split_decode(line: bytes, min_len: int, piece: int):
    spans = giant.long_strings(line, min_len)
    assert spans is not None
    skel = giant.skeleton(line, spans)
    for n, (start, end) in enumerate(spans):
        skel.strings[giant.placeholder(n)] = giant.read_string(
            giant.memory_reader(line), start, end, piece=piece)
    return giant.fill(decode_line(skel, 1, 0, False), skel.strings)


@settings(max_examples=300, deadline=None)
@given(text=_TEXT, ensure_ascii=st.booleans(), with_result=st.booleans(),
       piece=st.integers(1, 9))
def test_the_split_decode_is_the_plain_decode(text: str, ensure_ascii: bool, with_result: bool,
                                              piece: int) -> None:
    line = _tool_result_line(text, ensure_ascii, with_result)
    plain = decode_line(line, 1, 0, False)
    entry = _split_decode(line, 12, piece)  # longer than the frame's own values
    assert _same(entry, plain)
    if with_result:  # the Raw field is JSON again, with the text in it
        assert msgspec.json.decode(entry.tool_use_result)["stdout"] == text


def test_keys_and_short_strings_stay_in_the_skeleton() -> None:
    line = json.dumps({"type": "user", "k" * 50: 1, "message": {"role": "user",
                       "content": "y" * 100}}).encode()
    spans = giant.long_strings(line, 40)
    assert spans is not None and [line[s:e] for s, e in spans] == [b"y" * 100]
    assert len(giant.skeleton(line, spans)) < len(line) - 50


def test_a_string_is_built_in_place_not_copied() -> None:
    data = json.dumps("line of a log\n" * 1_500_000).encode()  # 22.5 MB of text
    tracemalloc.start()
    try:
        text = giant.read_string(giant.memory_reader(data), 1, len(data) - 1)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert text == "line of a log\n" * 1_500_000
    assert peak < 1.3 * len(text)  # the text, once, and a piece or two


def test_search_finds_a_word_at_the_end_of_a_giant_text_window_by_window() -> None:
    parts = ["Bash", "x" * 3_000_000 + " NeedLE at the end", "stderr"]
    assert contains_folded(parts, "needle at the end", window=1000)
    assert contains_folded(parts, "end\nstderr", window=1000)  # across the join, as before
    assert not contains_folded(parts, "needle-not-there", window=1000)
    # a match cut by every window boundary
    text = "ab" * 5000 + "Straße"
    for window in (1, 2, 3, 7, 64):
        assert contains_folded([text], "strasse", window=window)


def _giant_session(tmp_path: Path, output: str) -> Path:
    lines = TOOLS.read_text().splitlines()
    for i, line in enumerate(lines):
        frame = json.loads(line)
        content = frame.get("message", {}).get("content")
        if frame.get("type") == "user" and isinstance(content, list) and content \
                and content[0].get("type") == "tool_result":
            content[0]["content"] = output
            frame["tool_use_result"] = {"stdout": output, "stderr": "", "interrupted": False,
                                        "isImage": False}
            lines[i] = json.dumps(frame)
            break
    path = tmp_path / "giant.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


async def _batches(path: Path) -> list[list]:
    batches = []
    async for event in FileTail(path, follow=False, chunk_size=1 << 20).events():
        if isinstance(event, Lines):
            batches.append(event.lines)
    return batches


def test_a_file_s_giant_line_folds_as_the_plain_decode_folds(tmp_path: Path) -> None:
    output = "".join(f"é line {i} \x1b[31m\"q\"\n" for i in range(20)) + \
        "".join(f"é line {i} \x1b[31m\n" for i in range(20, 500_000))  # > GIANT_LINE
    path = _giant_session(tmp_path, output)
    batches = asyncio.run(_batches(path))
    lines = [line for batch in batches for line in batch]
    big = [line for line in lines if type(line.data) is giant.GiantLine]
    assert len(big) == 1 and big[0].data.size > GIANT_LINE and len(big[0].data) < 2000
    assert [big[0]] in batches  # alone in its batch
    split, plain = Feed(keep_raw=False), Feed(keep_raw=False)
    for batch in batches:
        split.feed(batch)
    plain.feed([(n, offset, line) for n, (offset, line) in enumerate(_offsets(path), start=1)])
    assert split.entries == plain.entries  # byte for byte: a Raw field holds the JSON as written
    items = [i for i in split.session.agents[MAIN].items if getattr(i, "call", None) is not None]
    assert any(output in search_text(i) for i in items)
    assert any(contains_folded(search_parts(i), "é line 499999 \x1b[31m") for i in items)


def test_a_giant_line_of_many_quotes_is_decoded_the_plain_way(tmp_path: Path) -> None:
    output = "".join(f'{{"n": {i}, "s": "v"}}\n' for i in range(600_000))  # JSON: \" everywhere
    path = _giant_session(tmp_path, output)
    lines = [line for batch in asyncio.run(_batches(path)) for line in batch]
    assert not any(type(line.data) is giant.GiantLine for line in lines)
    assert max(len(line.data) for line in lines) > GIANT_LINE
    assert all(type(line.data) is bytes for line in lines)


def _offsets(path: Path):
    offset = 0
    for line in path.read_bytes().split(b"\n")[:-1]:
        yield offset, line
        offset += len(line) + 1


def test_the_pretty_head_is_the_start_of_the_whole_pretty_print() -> None:
    from cctv.reducer.pretty import pretty_head

    recordings = sorted((FIXTURES / "captures" / "stream").glob("*.jsonl"))[:6]
    lines = [line for path in recordings for line in path.read_bytes().split(b"\n") if line]
    assert len(lines) > 50
    for line in lines:
        whole = msgspec.json.format(line, indent=2)
        assert pretty_head(line, 10 ** 9) == whole
        for limit in (1, 40, 500):
            head = pretty_head(line, limit)
            assert head is not None and whole.startswith(head) and len(head) >= min(limit, len(whole))
    assert pretty_head(b'{"a": [1, 2, {"b": "c\\"}"}], "d": {}}', 10 ** 9) == \
        msgspec.json.format(b'{"a": [1, 2, {"b": "c\\"}"}], "d": {}}', indent=2)
    assert pretty_head(b"not json at all", 100) is None
    assert pretty_head(b"[" * 100, 10 ** 6) is None  # deeper than MAX_DEPTH: shown as bytes


def test_the_raw_view_of_a_giant_line_formats_only_its_start() -> None:
    from cctv.reducer.pretty import raw_view

    line = _tool_result_line("x" * 3_000_000, True, True)
    view = raw_view(line[:64 * 1024], limit=16 * 1024, size=len(line))
    assert view.is_json and view.truncated and len(view.text) <= 16 * 1024
    assert view.text.startswith('{\n  "type": "user",\n  "message": {')
    assert any("of a 5.7 MiB line" in note for note in view.notes)
