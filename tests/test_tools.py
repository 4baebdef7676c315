"""Tests for reducer.tools: exact-fit typing, lossless round trip, summaries, hunks."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator

import msgspec
import pytest
from conftest import FIXTURES
from hypothesis import given, settings
from hypothesis import strategies as st

from cctv.reducer.tools import (
    Bash,
    Command,
    Edit,
    EditOp,
    MultiEdit,
    Raw,
    Read,
    Write,
    edit_hunks,
    tool_from_use,
    tool_summary,
    tool_to_use,
)




# ---------------------------------------------------------------- recordings


def _walk_tool_uses(obj: object) -> Iterator[dict]:
    """Every ``{"type": "tool_use", ...}`` block anywhere inside a decoded line."""
    if isinstance(obj, dict):
        if obj.get("type") == "tool_use" and "name" in obj and "input" in obj:
            yield obj
        for value in obj.values():
            yield from _walk_tool_uses(value)
    elif isinstance(obj, list):
        for value in obj:
            yield from _walk_tool_uses(value)


def _recorded_tool_uses() -> list[tuple[str, str, object]]:
    """(file:line, name, input) for every tool_use block in the reference recordings."""
    ref = FIXTURES
    files = sorted([*(ref / "forge").rglob("*.jsonl"), *(ref / "captures").rglob("*.jsonl")])
    found = []
    for path in files:
        for line_no, line in enumerate(path.read_bytes().splitlines(), 1):
            if not line.strip():
                continue
            for block in _walk_tool_uses(msgspec.json.decode(line)):
                found.append((f"{path.relative_to(ref)}:{line_no}", block["name"], block["input"]))
    return found


@pytest.fixture(scope="module")
def recorded() -> list[tuple[str, str, object]]:
    return _recorded_tool_uses()


def _same(a: object, b: object) -> bool:
    """Deep equality that also tells bool from int and compares dict key sets."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def test_recordings_round_trip_losslessly(recorded: list[tuple[str, str, object]]) -> None:
    assert len(recorded) >= 100
    for where, name, input in recorded:
        back_name, back_input = tool_to_use(tool_from_use(name, input))
        assert back_name == name, where
        assert _same(back_input, input), where


def test_recordings_round_trip_through_json(recorded: list[tuple[str, str, object]]) -> None:
    """Typed tools encode to the same JSON object as the original input."""
    for where, name, input in recorded:
        _, back = tool_to_use(tool_from_use(name, input))
        assert json.loads(json.dumps(back)) == input, where


def test_recordings_exercise_typed_variants(recorded: list[tuple[str, str, object]]) -> None:
    kinds = Counter(
        (name, type(tool_from_use(name, input)).__name__) for _, name, input in recorded
    )
    # Counts as recorded; every typed variant present in the recordings is hit.
    assert kinds[("Bash", "Bash")] == 32
    assert kinds[("Read", "Read")] == 16
    assert kinds[("Write", "Write")] == 6
    assert kinds[("Edit", "Edit")] == 4
    # The forge 2.1.220 real_session_* baselines redact Read inputs to {"_redacted": true}.
    assert kinds[("Read", "Raw")] == 3
    assert kinds[("Bash", "Raw")] == 0
    assert kinds[("Write", "Raw")] == 0
    assert kinds[("Edit", "Raw")] == 0
    # Every other tool (MCP, Agent, TodoWrite, Grep, Skill, ...) stays Raw.
    for (name, kind), _ in kinds.items():
        if name not in {"Bash", "Read", "Write", "Edit", "MultiEdit"}:
            assert kind == "Raw", name
    assert any(name.startswith("mcp__") for name, _ in kinds)


def test_recorded_bash_keys(recorded: list[tuple[str, str, object]]) -> None:
    keys = {k for _, name, input in recorded if name == "Bash" for k in input}
    assert keys == {"command", "description", "run_in_background"}


# ---------------------------------------------------------------- exact fit


@pytest.mark.parametrize(
    ("name", "input", "expected"),
    [
        ("Read", {"file_path": "a.py"}, Read("a.py")),
        ("Read", {"file_path": "a.py", "offset": 10, "limit": 50}, Read("a.py", offset=10, limit=50)),
        ("Read", {"file_path": "doc.pdf", "pages": "1-5"}, Read("doc.pdf", pages="1-5")),
        ("Write", {"file_path": "a.py", "content": "x\n"}, Write("a.py", "x\n")),
        (
            "Edit",
            {"file_path": "a.py", "old_string": "a", "new_string": "b", "replace_all": False},
            Edit("a.py", "a", "b", replace_all=False),
        ),
        ("Edit", {"file_path": "a.py", "old_string": "a", "new_string": "b"}, Edit("a.py", "a", "b")),
        (
            "MultiEdit",
            {"file_path": "a.py", "edits": [{"old_string": "a", "new_string": "b"}]},
            MultiEdit("a.py", [EditOp("a", "b")]),
        ),
        ("Bash", {"command": "ls"}, Bash("ls")),
        (
            "Bash",
            {
                "command": "sleep 9",
                "description": "wait",
                "timeout": 120000,
                "run_in_background": True,
                "dangerouslyDisableSandbox": False,
            },
            Bash("sleep 9", "wait", 120000, True, False),
        ),
        ("/compact", {}, Command("/compact")),
        ("/release", {"args": "1.2"}, Command("/release", "1.2")),
    ],
)
def test_typed_when_input_fits(name: str, input: dict, expected: object) -> None:
    tool = tool_from_use(name, input)
    assert tool == expected
    assert _same(tool_to_use(tool)[1], input)
    assert tool_to_use(tool)[0] == name


@pytest.mark.parametrize(
    ("name", "input"),
    [
        # extra / unknown key
        ("Edit", {"file_path": "a", "old_string": "a", "new_string": "b", "extra": 1}),
        ("Read", {"_redacted": True}),
        ("Bash", {"command": "ls", "workdir": "/tmp"}),
        ("MultiEdit", {"file_path": "a", "edits": [{"old_string": "a", "new_string": "b", "x": 0}]}),
        ("/compact", {"argv": "x"}),
        # missing key
        ("Write", {"file_path": "a"}),
        ("Edit", {"file_path": "a", "old_string": "a"}),
        ("MultiEdit", {"file_path": "a"}),
        # wrong value type
        ("Read", {"file_path": 7}),
        ("Read", {"file_path": "a", "offset": "10"}),
        ("Read", {"file_path": "a", "offset": True}),
        ("Read", {"file_path": "a", "limit": 5.0}),
        ("Read", {"file_path": "a", "offset": None}),
        ("Edit", {"file_path": "a", "old_string": "a", "new_string": "b", "replace_all": 1}),
        ("Bash", {"command": ["ls", "-la"]}),
        ("Bash", {"command": "ls", "timeout": True}),
        ("MultiEdit", {"file_path": "a", "edits": {"old_string": "a", "new_string": "b"}}),
        ("MultiEdit", {"file_path": "a", "edits": [["a", "b"]]}),
        ("/release", {"args": ["1.2"]}),
        # not a dict at all
        ("Bash", "ls -la"),
        ("Read", None),
        ("Write", ["a", "b"]),
        # names without a typed variant
        ("mcp__forge__workers__spawn", {"charter": "c", "label": "l"}),
        ("mcp__fs__Read", {"file_path": "a.py"}),
        ("Grep", {"pattern": "x"}),
        ("Skill", {"skill": "release"}),
        ("SlashCommand", {"command": "/release"}),
        ("read", {"file_path": "a.py"}),
        ("/", {}),
    ],
)
def test_raw_when_input_does_not_fit(name: str, input: object) -> None:
    tool = tool_from_use(name, input)
    assert tool == Raw(name, input)
    back_name, back_input = tool_to_use(tool)
    assert back_name == name
    assert back_input is input


def test_absent_optionals_stay_absent() -> None:
    _, back = tool_to_use(tool_from_use("Read", {"file_path": "a.py", "limit": 3}))
    assert back == {"file_path": "a.py", "limit": 3}
    _, back = tool_to_use(tool_from_use("Edit", {"file_path": "a", "old_string": "", "new_string": ""}))
    assert "replace_all" not in back
    # An explicit false is kept, not dropped as a default.
    _, back = tool_to_use(tool_from_use("Bash", {"command": "ls", "run_in_background": False}))
    assert back == {"command": "ls", "run_in_background": False}


def test_tools_are_frozen_and_hashable() -> None:
    tool = tool_from_use("Bash", {"command": "ls"})
    with pytest.raises(AttributeError):
        tool.command = "rm"  # type: ignore[misc]
    assert hash(tool) == hash(Bash("ls"))


# ---------------------------------------------------------------- summaries


@pytest.mark.parametrize(
    ("tool", "summary"),
    [
        (Bash("ls -la"), "Bash: ls -la"),
        (Bash("  cd /tmp\n  make all\n"), "Bash: cd /tmp …"),
        (Edit("path/to/file.py", "a", "b"), "Edit path/to/file.py"),
        (Edit("f.py", "a", "b", replace_all=True), "Edit f.py (all)"),
        (Read("file.py"), "Read file.py"),
        (Read("file.py", offset=10, limit=51), "Read file.py:10-60"),
        (Read("file.py", offset=10), "Read file.py:10-"),
        (Read("file.py", limit=20), "Read file.py:1-20"),
        (Read("doc.pdf", pages="2-3"), "Read doc.pdf pages 2-3"),
        (Write("a.txt", "one\ntwo\n"), "Write a.txt (2 lines)"),
        (Write("a.txt", "one"), "Write a.txt (1 line)"),
        (Write("a.txt", ""), "Write a.txt (0 lines)"),
        (MultiEdit("m.py", [EditOp("a", "b"), EditOp("c", "d")]), "MultiEdit m.py (2 edits)"),
        (Command("/compact"), "/compact"),
        (Command("/release", "1.2 --dry"), "/release 1.2 --dry"),
        (Raw("Grep", {"pattern": "TODO", "-n": True}), "Grep: TODO"),
        (Raw("TaskList", {}), "TaskList"),
        (Raw("Read", {"_redacted": True}), "Read"),
        (Raw("Weird", "not a dict"), "Weird"),
    ],
)
def test_summary(tool: object, summary: str) -> None:
    assert tool_summary(tool) == summary


def test_summary_is_one_line_and_bounded() -> None:
    text = tool_summary(Bash("x" * 1000))
    assert "\n" not in text and len(text) < 200
    assert "\n" not in tool_summary(Raw("Agent", {"prompt": "do\nthings"}))


def test_summary_flattens_control_characters() -> None:
    assert tool_summary(Read("a\nb.py")) == "Read a\u23ceb.py"
    assert tool_summary(Bash("echo \x1b[31mred\tx")) == "Bash: echo \ufffd[31mred x"
    assert tool_summary(Raw("X", {"a": "\u2028z"})) == "X: z"
    assert tool_summary(Command("/x", "a\rb")) == "/x a \u2026"


def test_summary_for_every_recorded_tool(recorded: list[tuple[str, str, object]]) -> None:
    for where, name, input in recorded:
        text = tool_summary(tool_from_use(name, input))
        assert text and "\n" not in text, where


# ---------------------------------------------------------------- edit hunks


def test_edit_hunks() -> None:
    assert edit_hunks(Edit("f", "old", "new")) == [("old", "new")]
    multi = MultiEdit("f", [EditOp("a", "b"), EditOp("c", "d", replace_all=True)])
    assert edit_hunks(multi) == [("a", "b"), ("c", "d")]
    assert edit_hunks(MultiEdit("f", [])) == []
    assert edit_hunks(Write("f", "x")) == []
    assert edit_hunks(Raw("Edit", {"file_path": "f"})) == []


def test_edit_hunks_from_recordings(recorded: list[tuple[str, str, object]]) -> None:
    edits = [tool_from_use(n, i) for _, n, i in recorded if n == "Edit"]
    assert edits
    for tool in edits:
        assert edit_hunks(tool) == [(tool.old_string, tool.new_string)]


# ---------------------------------------------------------------- properties

_json_leaf = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
_json = st.recursive(
    _json_leaf,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
_keys = st.sampled_from(
    [
        "file_path", "offset", "limit", "pages", "content", "old_string", "new_string",
        "replace_all", "edits", "command", "description", "timeout", "run_in_background",
        "dangerouslyDisableSandbox", "args", "workdir", "_redacted",
    ]
) | st.text(max_size=8)
_names = st.sampled_from(
    ["Read", "Write", "Edit", "MultiEdit", "Bash", "/compact", "/release", "/", "mcp__x__y", "Grep", "Skill"]
) | st.text(max_size=12)
_edit_op = st.fixed_dictionaries(
    {"old_string": st.text(), "new_string": st.text()}, optional={"replace_all": st.booleans()}
)
_well_formed = st.one_of(
    st.tuples(
        st.just("Read"),
        st.fixed_dictionaries(
            {"file_path": st.text()},
            optional={"offset": st.integers(), "limit": st.integers(), "pages": st.text()},
        ),
    ),
    st.tuples(st.just("Write"), st.fixed_dictionaries({"file_path": st.text(), "content": st.text()})),
    st.tuples(
        st.just("Edit"),
        st.fixed_dictionaries(
            {"file_path": st.text(), "old_string": st.text(), "new_string": st.text()},
            optional={"replace_all": st.booleans()},
        ),
    ),
    st.tuples(
        st.just("MultiEdit"),
        st.fixed_dictionaries({"file_path": st.text(), "edits": st.lists(_edit_op, max_size=3)}),
    ),
    st.tuples(
        st.just("Bash"),
        st.fixed_dictionaries(
            {"command": st.text()},
            optional={
                "description": st.text(),
                "timeout": st.integers() | st.floats(allow_nan=False),
                "run_in_background": st.booleans(),
                "dangerouslyDisableSandbox": st.booleans(),
            },
        ),
    ),
    st.tuples(
        st.text(min_size=1).map(lambda s: "/" + s),
        st.fixed_dictionaries({}, optional={"args": st.text()}),
    ),
)


@settings(max_examples=300)
@given(name=_names, input=st.dictionaries(_keys, _json, max_size=6) | _json)
def test_random_inputs_round_trip(name: str, input: object) -> None:
    back_name, back_input = tool_to_use(tool_from_use(name, input))
    assert back_name == name
    assert _same(back_input, input)


@settings(max_examples=300)
@given(case=_well_formed)
def test_well_formed_inputs_are_typed_and_round_trip(case: tuple[str, dict]) -> None:
    name, input = case
    tool = tool_from_use(name, input)
    assert not isinstance(tool, Raw)
    assert tool_to_use(tool) == (name, input)
    assert _same(tool_to_use(tool)[1], input)
    assert "\n" not in tool_summary(tool)


@settings(max_examples=200)
@given(case=_well_formed, key=st.text(max_size=8), value=_json)
def test_any_extra_key_makes_raw(case: tuple[str, dict], key: str, value: object) -> None:
    name, input = case
    if key in input or (key == "args" and name.startswith("/")):
        return
    noisy = {**input, key: value}
    known = {
        "Read": {"file_path", "offset", "limit", "pages"},
        "Bash": {"command", "description", "timeout", "run_in_background", "dangerouslyDisableSandbox"},
        "Edit": {"replace_all"},
    }
    if key in known.get(name, set()):
        return  # adding a known optional key may still fit the schema
    assert tool_from_use(name, noisy) == Raw(name, noisy)
