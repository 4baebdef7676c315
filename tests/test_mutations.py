"""Mutated real frames, from decode to render: nothing raises anywhere.

Each example takes one real recording, breaks a few of its lines the way a
damaged file or a buggy writer would (a key deleted, a value of another type,
a value nested hundreds deep, bytes that are not UTF-8, a line cut short) and
pushes the whole file through everything a user can reach:

* the decoder (every line an entry; a malformed one says why, and the
  decoder's own safety net, "decoder error", never fires);
* the fold (:class:`reducer.feed.Feed`; its own safety net, "could not fold",
  never fires);
* every renderer: :func:`widgets.cards.render_item` and
  :func:`~widgets.cards.estimate_height` for every item the fold made,
  collapsed and expanded, wide and narrow; the tasks panel's rows; the status
  bar's text; the raw view's formatting of every line;
* ``cctv check`` (text and JSON) and ``cctv summary --json``.

A wrong type must be caught where the frame is decoded (a malformed line with
its reason), not by a renderer's try/except: so the renderers are called here
directly, with no safety net.
"""

from __future__ import annotations

import functools
import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.console import Console

from cctv.reducer.decode import decode_bytes
from cctv.reducer.feed import Feed
from cctv.reducer.frames import Malformed
from cctv.reducer.lines import LineSplitter
from cctv.reducer.pretty import raw_view
from cctv.reducer.fold import Session
from cctv.reducer.state import ProblemItem
from cctv.viewer.headless import run_check, run_summary
from cctv.widgets.cards import Palette, RenderContext, estimate_height, render_item
from cctv.widgets.status_bar import _fit, status_parts
from cctv.widgets.tasks_panel import render_row, task_rows

from conftest import FIXTURES, recordings

SETTINGS = settings(max_examples=120, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

_MAX_LINES = 160
"""Recordings up to this many lines (all but the biggest on-disk sessions): one
example folds and renders a whole recording."""


@functools.lru_cache(maxsize=1)
def _recordings() -> tuple[tuple[str, tuple[bytes, ...]], ...]:
    files = recordings() + sorted((FIXTURES / "public").rglob("*.jsonl"))
    out = []
    for path in files:
        lines = tuple(path.read_bytes().splitlines())
        if 0 < len(lines) <= _MAX_LINES:
            out.append((str(path.relative_to(FIXTURES)), lines))
    return tuple(out)


# --- mutations --------------------------------------------------------------------------

_OTHER_VALUES: tuple[Any, ...] = (
    "text", "", "\x1b[31mred\x1b[0m\x07", "\u202eevil", 0, -1, 2**70, 1.5, -0.0, 1e308,
    True, False, None, [], {}, [1, "a", None], {"x": {"y": [1]}}, {"type": "text"},
    [{"type": "tool_use"}], "2026-13-45T99:99:99Z",
)


_DEEP = "@@deep@@"


def _nested(depth: int, leaf: bytes = b"1", as_list: bool = True) -> bytes:
    """JSON bytes of ``leaf`` inside ``depth`` arrays (or objects): deeper than
    the json module can write."""
    if as_list:
        return b"[" * depth + leaf + b"]" * depth
    return b'{"a":' * depth + leaf + b"}" * depth


def _dumps(obj: Any, deep: bytes = b"", ascii: bool = True) -> bytes:
    """``obj`` as JSON, with the string :data:`_DEEP` replaced by ``deep``."""
    return json.dumps(obj, ensure_ascii=ascii).encode("utf-8", "surrogatepass").replace(b'"' + _DEEP.encode() + b'"', deep)


def _paths(value: Any, prefix: tuple = (), out: list | None = None, limit: int = 400) -> list:
    """Every path to a value inside ``value`` (keys and indexes), breadth first."""
    out = [] if out is None else out
    queue = [(prefix, value)]
    while queue and len(out) < limit:
        path, v = queue.pop(0)
        children = v.items() if isinstance(v, dict) else enumerate(v) if isinstance(v, list) else ()
        for k, child in children:
            out.append(path + (k,))
            queue.append((path + (k,), child))
    return out


def _parent(obj: Any, path: tuple) -> Any:
    for key in path[:-1]:
        obj = obj[key]
    return obj


@st.composite
def mutated_line(draw: st.DrawFn, line: bytes) -> bytes:
    """``line`` damaged one way."""
    kind = draw(st.sampled_from(["delete", "retype", "nest", "utf8", "truncate", "retype", "delete"]))
    if kind == "truncate":
        return line[: draw(st.integers(0, max(len(line) - 1, 0)))]
    if kind == "utf8":
        at = draw(st.integers(0, len(line)))
        bad = draw(st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xe2\x82", b"\x80\x80"]))
        return line[:at] + bad + line[at:]
    try:
        obj = json.loads(line)
    except ValueError:
        return line
    paths = _paths(obj)
    if not isinstance(obj, dict) or not paths:
        return line
    path = draw(st.sampled_from(paths))
    parent = _parent(obj, path)
    key = path[-1]
    deep = b""
    if kind == "delete":
        del parent[key]
    elif kind == "retype":
        parent[key] = draw(st.sampled_from(_OTHER_VALUES))
    else:  # nest: around the value
        depth = draw(st.sampled_from([30, 50, 70, 120, 500, 900, 1500]))
        deep = _nested(depth, json.dumps(parent[key]).encode(), draw(st.booleans()))
        parent[key] = _DEEP
    return _dumps(obj, deep, draw(st.booleans()))


@dataclass(frozen=True)
class Damaged:
    """A recording with some lines damaged; its repr names them (not the whole file)."""

    name: str
    data: bytes
    changed: tuple[tuple[int, bytes], ...]

    def __repr__(self) -> str:
        lines = ", ".join(f"line {n}: {line[:300]!r}" for n, line in self.changed)
        return f"Damaged({self.name}: {lines})"


@st.composite
def damaged_recording(draw: st.DrawFn) -> Damaged:
    name, lines = draw(st.sampled_from(_recordings()))
    out = list(lines)
    changed: dict[int, bytes] = {}
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, len(out) - 1))
        out[i] = changed[i + 1] = draw(mutated_line(out[i]))
    return Damaged(name, b"\n".join(out) + b"\n", tuple(sorted(changed.items())))


# --- everything a user can reach ----------------------------------------------------------


def _fold(data: bytes) -> Feed:
    feed = Feed()
    splitter = LineSplitter()
    feed.feed(splitter.feed(data))
    last = splitter.flush()
    if last is not None:
        feed.feed([last])
    return feed


def _internal_errors(session: Session) -> list[str]:
    return [i.reason for a in session.agents.values() for i in a.items
            if isinstance(i, ProblemItem) and "could not fold" in i.reason]


def _render_everything(session: Session) -> int:
    ctx = RenderContext(session, Console(width=200, color_system="truecolor"), Palette())
    drawn = 0
    for agent in session.agents.values():
        for item in agent.items:
            for width in (24, 100):
                for expanded in (False, True):
                    strips = render_item(item, width, expanded, ctx)
                    assert isinstance(strips, list)
                    assert estimate_height(item, width, expanded, session) >= 0
                    drawn += 1
    for row in task_rows(session, now=1.9e9):
        for width in (30, 120):
            render_row(row, width)
    for following in (True, False):
        parts = status_parts(session, source="/tmp/x.jsonl", following=following, now=1.9e9)
        for width in (40, 160):
            assert isinstance(_fit(parts, width).plain, str)
    return drawn


def _check_everything(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "damaged.jsonl"
    path.write_bytes(data)
    for as_json in (False, True):
        out, err = io.StringIO(), io.StringIO()
        assert run_check([str(path)], as_json, out, err) in (0, 1), err.getvalue()
        if as_json:
            json.loads(out.getvalue())
    out, err = io.StringIO(), io.StringIO()
    assert run_summary(str(path), True, out, err) in (0, 1), err.getvalue()  # 1: not a session at all
    json.loads(out.getvalue())


def _through_everything(tmp_path: Path, data: bytes) -> Feed:
    entries = decode_bytes(data)
    assert len(entries) == data.count(b"\n")
    safety_net = [e.reason for e in entries if isinstance(e, Malformed)
                  and e.reason.startswith("decoder error")]
    assert safety_net == []
    for e in entries:
        view = raw_view(e.raw, reason=e.reason if isinstance(e, Malformed) else None)
        assert isinstance(view.text, str)
    feed = _fold(data)
    assert _internal_errors(feed.session) == []
    _render_everything(feed.session)
    _check_everything(tmp_path, data)
    return feed


@SETTINGS
@given(damaged_recording())
def test_a_damaged_recording_never_raises(tmp_path_factory: pytest.TempPathFactory,
                                          case: Damaged) -> None:
    _through_everything(tmp_path_factory.mktemp("m"), case.data)


# --- the cases fuzzing found, each on a real frame ---------------------------------------------


def _line(name: str, kind: str) -> dict[str, Any]:
    for raw in (FIXTURES / name).read_bytes().splitlines():
        obj = json.loads(raw)
        if f"{obj.get('type')}/{obj.get('subtype')}".startswith(kind) or obj.get("type") == kind:
            return obj
    raise LookupError(kind)


def _with(name: str, replace: dict[int, bytes]) -> bytes:
    lines = (FIXTURES / name).read_bytes().splitlines()
    for i, line in replace.items():
        lines[i] = line
    return b"\n".join(lines) + b"\n"


def _index(name: str, kind: str) -> int:
    for i, raw in enumerate((FIXTURES / name).read_bytes().splitlines()):
        obj = json.loads(raw)
        if f"{obj.get('type')}/{obj.get('subtype')}" == kind or obj.get("type") == kind:
            return i
    raise LookupError(kind)


def _malformed(feed: Feed) -> dict[int, str]:
    return dict(feed.session.malformed)


COMPACT = "captures/stream/10_compact_manual.jsonl"
BACKGROUND = "captures/stream/06_background_bash.jsonl"
TOOLS = "captures/stream/03_tools.jsonl"


def test_a_compaction_with_a_string_token_count_is_a_malformed_line(tmp_path: Path) -> None:
    i = _index(COMPACT, "system/compact_boundary")
    obj = _line(COMPACT, "system/compact_boundary")
    obj["compact_metadata"]["pre_tokens"] = "13.5k"
    feed = _through_everything(tmp_path, _with(COMPACT, {i: json.dumps(obj).encode()}))
    assert _malformed(feed) == {i + 1: "system/compact_boundary: Expected `int | null`, "
                                       "got `str` - at `$.compact_metadata.pre_tokens`"}
    assert feed.session.compactions == []


def test_a_background_task_with_an_object_for_its_description_is_a_malformed_line(
        tmp_path: Path) -> None:
    i = _index(BACKGROUND, "system/background_tasks_changed")
    obj = _line(BACKGROUND, "system/background_tasks_changed")
    obj["tasks"] = [{"task_id": "b1", "task_type": "local_bash", "description": {"text": "x"}}]
    feed = _through_everything(tmp_path, _with(BACKGROUND, {i: json.dumps(obj).encode()}))
    assert _malformed(feed) == {i + 1: "system/background_tasks_changed: Expected `str | null`, "
                                       "got `object` - at `$.tasks[0].description`"}


def test_a_rate_limit_with_a_string_utilization_is_a_malformed_line(tmp_path: Path) -> None:
    line = json.dumps({"type": "rate_limit_event", "rate_limit_info": {
        "status": "allowed_warning", "utilization": "91%"}, "session_id": "s"}).encode()
    feed = _through_everything(tmp_path, _with(TOOLS, {3: line}))
    assert _malformed(feed) == {4: "rate_limit_event: Expected `float | null`, got `str` - "
                                   "at `$.rate_limit_info.utilization`"}


def test_a_sub_agent_call_whose_type_is_a_list_is_a_malformed_line(tmp_path: Path) -> None:
    name = "captures/stream/05_subagent.jsonl"
    lines = (FIXTURES / name).read_bytes().splitlines()
    i = next(n for n, raw in enumerate(lines) if b'"name":"Agent"' in raw or b'"name":"Task"' in raw)
    obj = json.loads(lines[i])
    block = next(b for b in obj["message"]["content"] if b.get("type") == "tool_use")
    block["input"]["subagent_type"] = ["general-purpose"]
    feed = _through_everything(tmp_path, _with(name, {i: json.dumps(obj).encode()}))
    reason = _malformed(feed)[i + 1]
    assert reason.startswith("assistant: Expected `str | null`, got `array` - at `$.message.content[")
    assert reason.endswith("].input.subagent_type`")


@pytest.mark.parametrize("depth", [100, 500, 900, 1500, 5000])
def test_a_value_nested_deep_is_a_malformed_line(tmp_path: Path, depth: int) -> None:
    lines = (FIXTURES / TOOLS).read_bytes().splitlines()
    i = next(n for n, raw in enumerate(lines) if b'"tool_use"' in raw)
    obj = json.loads(lines[i])
    block = next(b for b in obj["message"]["content"] if b.get("type") == "tool_use")
    block["input"]["deep"] = _DEEP
    feed = _through_everything(tmp_path, _with(TOOLS, {i: _dumps(obj, _nested(depth))}))
    assert _malformed(feed)[i + 1].startswith("assistant: nested too deep") or \
        _malformed(feed)[i + 1] == "nested too deep (more than 64 levels)"


@pytest.mark.parametrize("depth", [65, 500, 900])
def test_an_unread_field_nested_deep_is_shown_and_checked_without_recursion(
        tmp_path: Path, depth: int) -> None:
    line = _dumps({"type": "keep_alive", "extra": _DEEP}, _nested(depth))
    data = _with(TOOLS, {3: line})
    feed = _through_everything(tmp_path, data)
    view = raw_view(line)
    assert view.notes == ("nested more than 64 levels deep: shown as it was read",)
    assert not view.is_json and view.text.startswith('{"type": "keep_alive"')
    out = io.StringIO()
    run_check([str(tmp_path / "damaged.jsonl")], False, out, io.StringIO())
    assert "line 4: nested more than 64 levels deep" in out.getvalue()
    assert feed.session.kinds["keep_alive"] == 1


def test_bytes_that_are_not_utf8_in_an_unread_field_are_a_malformed_line(tmp_path: Path) -> None:
    # msgspec skips a field it does not model without looking at its bytes:
    # check's round trip used to raise on them
    lines = (FIXTURES / TOOLS).read_bytes().splitlines()
    bad = lines[1][:-1] + b',"zz":"caf\xe9"}'
    feed = _through_everything(tmp_path, _with(TOOLS, {1: bad}))
    column = bad.index(b"\xe9") + 1
    assert _malformed(feed) == {2: f"not UTF-8: invalid byte at column {column}"}


def test_the_raw_view_of_a_deep_line_is_its_bytes() -> None:
    for line in (b"[" * 5000, b'{"a":' * 3000 + b"1" + b"}" * 3000):
        view = raw_view(line)
        assert not view.is_json and "nested more than 64 levels deep" in view.notes[0]


def test_real_frames_are_not_rejected_by_the_limits() -> None:
    """The limits are far from real data: every recording decodes with nothing malformed."""
    files = recordings()
    bad = [(f.name, e.line_no, e.reason) for f in files for e in decode_bytes(f.read_bytes())
           if isinstance(e, Malformed)]
    assert bad == []
    decoded = msgspec.json.decode((FIXTURES / TOOLS).read_bytes().splitlines()[1])
    assert decoded["type"] == "assistant"


# --- names and the index's own file -------------------------------------------------------------
#
# The layer around the sessions: any name the file system allows, and any damage to the
# index file, give every session listed and searched, a clear line, never a traceback.

_DEMO = sorted((FIXTURES / "captures" / "projects" / "-home-ada-src-demo").glob("*.jsonl"))[:3]

_NAME = st.binary(min_size=1, max_size=40).map(lambda b: b.replace(b"/", b"_").replace(b"\0", b"_")) \
    .filter(lambda b: b not in (b".", b".."))
"""A file or folder name: any bytes but ``/`` and NUL (UTF-8 or not, controls, spaces)."""


def _index_env(base: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(base / "cache"))
    monkeypatch.setenv("HOME", str(base / "home"))
    projects = base / "projects"
    projects.mkdir()
    return projects


def _listed(projects: Path, *flags: str) -> tuple[list[dict], str]:
    from cctv.viewer.index.listing import run_sessions

    out, err = io.StringIO(), io.StringIO()
    assert run_sessions(str(projects), True, "--no-index" not in flags, out, err) == 0, err.getvalue()
    return json.loads(out.getvalue()), err.getvalue()


@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(folder=_NAME, names=st.lists(_NAME, min_size=1, max_size=3, unique=True))
def test_any_file_names_are_listed_searched_and_printable(
        tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch,
        folder: bytes, names: list[bytes]) -> None:
    import os

    from cctv.viewer.index.listing import run_search, run_sessions
    from cctv.viewer.storage import forget_notes

    forget_notes()
    base = tmp_path_factory.mktemp("names")
    projects = _index_env(base, monkeypatch)
    where = os.path.join(os.fsencode(projects), folder)
    os.makedirs(where, exist_ok=True)
    made = set()
    for name, source in zip(names, _DEMO):
        path = os.path.join(where, name + b".jsonl")
        made.add(path)
        with open(path, "wb") as fh:
            fh.write(source.read_bytes())
    for flags in ((), ("--no-index",)):
        rows, err = _listed(projects, *flags)
        assert err == "" and {os.fsencode(r["path"]) for r in rows} == made
    text, err = io.StringIO(), io.StringIO()
    assert run_sessions(str(projects), False, True, text, err) == 0
    text.getvalue().encode("utf-8")  # whatever the names, the listing can be written
    hits, err = io.StringIO(), io.StringIO()
    assert run_search("greet", str(projects), False, True, hits, err) in (0, 1)
    hits.getvalue().encode("utf-8")
    assert err.getvalue() == ""


@st.composite
def index_damage(draw: st.DrawFn) -> tuple[str, list[tuple[float, int]]]:
    """How to damage a file: bytes overwritten at places (as fractions of its
    length), the file cut short, or a run of it zeroed."""
    kind = draw(st.sampled_from(["flip", "cut", "zero"]))
    spots = draw(st.lists(st.tuples(st.floats(0, 0.999), st.integers(0, 255)), min_size=1,
                          max_size=12))
    return kind, spots


def _damaged(data: bytes, kind: str, spots: list[tuple[float, int]]) -> bytes:
    out = bytearray(data)
    if kind == "cut":
        return bytes(out[: int(spots[0][0] * len(out))])
    for where, value in spots:
        at = int(where * len(out))
        if kind == "flip":
            out[at] = value
        else:
            out[at:at + 64 + value] = bytes(len(out[at:at + 64 + value]))
    return bytes(out)


def _sound_index(projects: Path) -> bytes:
    """The bytes of a sound index of ``projects``."""
    from cctv.viewer.index import SessionIndex
    from cctv.viewer.index.store import index_file

    index = SessionIndex(projects)
    index.refresh()
    index.close()
    return index_file(projects).read_bytes()


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(damage=index_damage())
def test_any_damage_to_the_index_file_is_a_line_and_a_rebuild(
        tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch,
        damage: tuple[str, list[tuple[float, int]]]) -> None:
    import shutil

    from cctv.viewer.index import SessionIndex
    from cctv.viewer.index.store import index_file
    from cctv.viewer.storage import forget_notes, take_notes

    forget_notes()
    base = tmp_path_factory.mktemp("index")
    projects = _index_env(base, monkeypatch)
    folder = projects / "-home-ada-src-demo"
    folder.mkdir()
    for source in _DEMO:
        shutil.copyfile(source, folder / source.name)
    target = index_file(projects)
    target.write_bytes(_damaged(_sound_index(projects), *damage))
    index = SessionIndex(projects)
    index.refresh()
    rows = index.rows()
    assert sorted(r.path for r in rows) == sorted(str(folder / s.name) for s in _DEMO)
    assert index.search("greet")
    index.close()
    for note in take_notes():  # each a line: what was found, what cctv did
        assert "\n" not in str(note) and str(note).endswith(("rebuilt", "for this run"))
    rows, err = _listed(projects)  # and the command line, after it
    assert len(rows) == len(_DEMO) and "Traceback" not in err
