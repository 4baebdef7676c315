"""Session discovery against the real captures tree, plus the bundled demo."""

from __future__ import annotations

import importlib.util
import itertools
import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from conftest import FIXTURES

from cctv.viewer.discovery import (
    SessionInfo,
    latest_session,
    list_sessions,
    projects_dir,
    read_session_info,
    sniff_format,
    subagent_files,
)




REF = FIXTURES
CAPTURES = REF / "captures"
PROJECTS = CAPTURES / "projects"
PROJECT = PROJECTS / "-home-ada-src-demo"
SUBAGENT_SESSION = "d7acffbd-7cff-4056-82e8-4364dc8df14a"
REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "viewer" / "demo" / "demo_session.jsonl"




_UUIDS = itertools.count()


def _row(**fields: object) -> str:
    return json.dumps(fields, separators=(",", ":"))


def _user(text: object, **extra: object) -> str:
    return _row(
        parentUuid=None,
        isSidechain=False,
        type="user",
        message={"role": "user", "content": text},
        uuid=f"u-{next(_UUIDS)}",
        timestamp="2026-01-01T00:00:00.000Z",
        cwd="/home/ada/proj",
        sessionId="s1",
        version="2.1.328",
        gitBranch="main",
        **extra,
    )


def _write(path: Path, *lines: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


# --------------------------------------------------------------------------- paths


def test_projects_dir_honours_claude_config_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path))
    assert projects_dir() == tmp_path / "projects"
    monkeypatch.delenv("CLAUDE_CONFIG_DIR")
    assert projects_dir() == Path.home() / ".claude" / "projects"


# --------------------------------------------------------------------------- real captures


def test_list_sessions_finds_the_ten_captured_sessions(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(CAPTURES))
    sessions = list_sessions()
    assert len(sessions) == 10
    assert {s.path for s in sessions} == set(PROJECT.glob("*.jsonl"))
    assert all("subagents" not in s.path.parts and not s.path.name.startswith("agent-") for s in sessions)
    mtimes = [s.mtime for s in sessions]
    assert mtimes == sorted(mtimes, reverse=True)
    assert list_sessions(PROJECTS) == sessions


def test_titles_and_fields_come_from_the_rows() -> None:
    by_id = {s.session_id: s for s in list_sessions(PROJECTS)}
    assert by_id["8e4b2dbb-330b-4d03-a3ef-8b4c8ce07f1e"].title == "hi [[simple]]"
    assert by_id[SUBAGENT_SESSION].title == "Use a sub-agent to survey the project. [[subagent]]"
    # the compacted session: its first prompt, not the compact summary or /compact
    assert by_id["aafe1787-82bf-4f68-ae98-84dbe071fd7f"].title == "Read the README and summarize it. [[cmp1]]"
    # interactive session: starts with mode rows, no queue-operation
    assert by_id["694a18a9-5689-4e24-b856-71f45a125c49"].title == "List the files and explain greet(). [[inter1]]"
    assert by_id["e7740f97-15e3-4079-9733-908bbce7bee3"].last_prompt == "Thanks. Now show me app.py. [[mt2]]"

    info = by_id[SUBAGENT_SESSION]
    assert info.project == "-home-ada-src-demo"
    assert info.project_path == "/home/ada/src/demo"
    assert info.git_branch == "main"
    assert info.version == "2.1.328"
    assert info.subagent_count == 1
    assert info.first_timestamp == "2026-11-29T13:59:20.973Z"
    assert info.last_timestamp == "2026-11-29T13:59:21.333Z"
    assert info.size == info.path.stat().st_size
    assert all(s.title and s.first_timestamp and s.last_timestamp for s in by_id.values())


def test_subagent_files_finds_the_agent_and_its_meta() -> None:
    found = subagent_files(PROJECT / f"{SUBAGENT_SESSION}.jsonl")
    assert len(found) == 1
    path, meta = found[0]
    assert path.name == "agent-acfff52c46df9b7f9.jsonl"
    assert path.parent.name == "subagents"
    assert meta["agentType"] == "general-purpose"
    assert meta["toolUseId"] == "toolu_01POmk2Upx4u34UIjZsjjwy3"
    assert subagent_files(PROJECT / "8e4b2dbb-330b-4d03-a3ef-8b4c8ce07f1e.jsonl") == []


def test_subagent_files_nested_legacy_and_broken_meta(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    session = _write(project / "s1.jsonl", _user("hello"))
    _write(project / "s1" / "subagents" / "agent-a1.jsonl", _user("sub", agentId="a1"))
    (project / "s1" / "subagents" / "agent-a1.meta.json").write_text('{"agentType":"Explore"}')
    wf = project / "s1" / "subagents" / "workflows" / "run1"
    _write(wf / "agent-w1.jsonl", _user("wf"))
    _write(wf / "journal.jsonl", _row(type="journal"))
    (wf / "agent-w1.meta.json").write_text("{not json")
    _write(project / "agent-old.jsonl", _user("legacy mine"))  # sessionId s1
    _write(project / "agent-other.jsonl", _row(type="user", sessionId="s2"))

    found = {p.name: meta for p, meta in subagent_files(session)}
    assert found == {"agent-a1.jsonl": {"agentType": "Explore"}, "agent-w1.jsonl": {}, "agent-old.jsonl": {}}
    assert read_session_info(session).subagent_count == 2
    # legacy agent files are not sessions
    assert [s.path.name for s in list_sessions(tmp_path)] == ["s1.jsonl"]


def test_latest_session_picks_newest_mtime(tmp_path: Path) -> None:
    root = tmp_path / "projects"
    shutil.copytree(PROJECTS, root)
    files = sorted(root.glob("*/*.jsonl"))
    for i, f in enumerate(files):
        os.utime(f, (1_700_000_000 + i, 1_700_000_000 + i))
    newest = files[3]
    os.utime(newest, (1_800_000_000, 1_800_000_000))
    # a newer sub-agent file must not win
    for agent in root.rglob("agent-*.jsonl"):
        os.utime(agent, (1_900_000_000, 1_900_000_000))
    assert latest_session(root) == newest
    assert list_sessions(root)[0].path == newest
    assert latest_session(tmp_path / "missing") is None
    assert list_sessions(tmp_path / "missing") == []


# --------------------------------------------------------------------------- sniffing


def _head(path: Path) -> bytes:
    with open(path, "rb") as fh:
        return fh.read(64 * 1024)


@pytest.mark.parametrize(
    "path",
    sorted((REF / "captures" / "stream").glob("*.jsonl")) + sorted((REF / "forge").rglob("*.jsonl")),
    ids=lambda p: f"{p.parent.name}/{p.name}",
)
def test_sniff_stream_json(path: Path) -> None:
    assert sniff_format(_head(path)) == "stream-json"


@pytest.mark.parametrize("path", sorted(PROJECTS.rglob("*.jsonl")), ids=lambda p: p.name)
def test_sniff_transcript(path: Path) -> None:
    assert sniff_format(_head(path)) == "transcript"
    assert sniff_format(_head(path)[:300]) == "transcript"  # first line cut short


@pytest.mark.parametrize(
    "head",
    [b"", b"\x00\xff\xfe garbage\n\x89PNG\r\n", b"hello world\nnot json\n", b"[1,2]\n3\n", b'{"a":1}\n{"b":2}\n'],
)
def test_sniff_unknown(head: bytes) -> None:
    assert sniff_format(head) == "unknown"


def test_sniff_mixed_majority_wins() -> None:
    disk = _row(type="user", parentUuid=None, isSidechain=False, sessionId="s")
    wire = _row(type="assistant", session_id="s", parent_tool_use_id=None)
    assert sniff_format(f"{disk}\n{disk}\n{wire}\n".encode()) == "transcript"
    assert sniff_format(f"{wire}\n{wire}\n{disk}\n".encode()) == "stream-json"
    assert sniff_format(_row(type="result", subtype="success").encode()) == "stream-json"  # no final newline
    assert sniff_format(_row(type="summary", summary="x", leafUuid="u").encode() + b"\n") == "transcript"


# --------------------------------------------------------------------------- titles


def test_title_precedence(tmp_path: Path) -> None:
    prompt = _user("fix the bug please")
    summary = _row(type="summary", summary="Fixing a bug", leafUuid="u1")
    ai = _row(type="ai-title", aiTitle="AI named it", sessionId="s1")
    custom = _row(type="custom-title", customTitle="My title", sessionId="s1")
    custom2 = _row(type="custom-title", customTitle="Renamed", sessionId="s1")

    assert read_session_info(_write(tmp_path / "p" / "a.jsonl", prompt)).title == "fix the bug please"
    assert read_session_info(_write(tmp_path / "p" / "b.jsonl", prompt, summary)).title == "Fixing a bug"
    assert read_session_info(_write(tmp_path / "p" / "c.jsonl", summary, prompt, ai)).title == "AI named it"
    info = read_session_info(_write(tmp_path / "p" / "d.jsonl", custom, prompt, ai, summary, custom2))
    assert info.title == "Renamed"  # last one wins
    assert (info.custom_title, info.ai_title, info.summary) == ("Renamed", "AI named it", "Fixing a bug")


def test_title_skips_synthetic_prompts_and_truncates(tmp_path: Path) -> None:
    long = "word " * 60
    path = _write(
        tmp_path / "p" / "s.jsonl",
        _row(type="queue-operation", operation="enqueue", sessionId="s1", content="x"),
        _user("<command-name>/clear</command-name>\n<command-message>clear</command-message>"),
        _user("<local-command-stdout>cleared</local-command-stdout>"),
        _user("<system-reminder>be nice</system-reminder>"),
        _user("[Request interrupted by user]"),
        _user("Caveat: meta", isMeta=True),
        _user("This session is being continued…", isCompactSummary=True),
        _user([{"type": "tool_result", "tool_use_id": "t", "content": "ok"}]),
        _user([{"type": "text", "text": long}]),
    )
    info = read_session_info(path)
    assert info.first_prompt == long.strip()
    assert len(info.title) <= 100 and info.title.endswith("…")
    assert info.title.startswith("word word")


def test_title_falls_back_to_command(tmp_path: Path) -> None:
    path = _write(tmp_path / "p" / "s.jsonl", _user("<command-name>/compact</command-name>"))
    assert read_session_info(path).title == "/compact"


def test_head_and_tail_of_a_big_file(tmp_path: Path) -> None:
    filler = _row(type="progress", sessionId="s1", data={"output": "x" * 1000}, timestamp="2026-01-01T00:00:01.000Z")
    path = _write(
        tmp_path / "p" / "big.jsonl",
        _user("first prompt"),
        *[filler] * 300,
        _row(type="ai-title", aiTitle="Late title", sessionId="s1"),
        _row(type="user", sessionId="s1", timestamp="2026-01-02T00:00:00.000Z", gitBranch="feature"),
    )
    info = read_session_info(path)
    assert info.size > 256 * 1024
    assert info.title == "Late title"
    assert info.first_prompt == "first prompt"
    assert info.first_timestamp == "2026-01-01T00:00:00.000Z"
    assert info.last_timestamp == "2026-01-02T00:00:00.000Z"
    assert info.git_branch == "feature"


def test_read_session_info_survives_odd_content(tmp_path: Path) -> None:
    real = (PROJECT / f"{SUBAGENT_SESSION}.jsonl").read_bytes()
    cases = {
        "truncated.jsonl": real[:1500],
        "binary.jsonl": bytes(range(256)) * 600,
        "empty.jsonl": b"",
        "mixed.jsonl": real[:900] + b"\x00\xff{{{\n" + b'{"type":"user","message":' + b"\n",
        "deep.jsonl": b'{"type":"user","message":' + b"[" * 100_000 + b"\n",
    }
    for name, data in cases.items():
        path = tmp_path / "p" / name
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(data)
        info = read_session_info(path)
        assert isinstance(info, SessionInfo)
        assert info.size == len(data)
    info = read_session_info(tmp_path / "p" / "truncated.jsonl")
    assert info.title == "Use a sub-agent to survey the project. [[subagent]]"
    missing = read_session_info(tmp_path / "p" / "nope.jsonl")
    assert missing.size == 0 and missing.title == ""


# --------------------------------------------------------------------------- demo


def _demo_frames() -> list[dict]:
    lines = DEMO.read_bytes().split(b"\n")
    assert lines[-1] == b""
    return [json.loads(line) for line in lines[:-1]]


def test_demo_every_line_is_json_and_one_session() -> None:
    frames = _demo_frames()
    assert all(isinstance(f, dict) and isinstance(f.get("type"), str) for f in frames)
    assert {f["session_id"] for f in frames if "session_id" in f} == {"5e55a0de-c7c7-4d3e-8a11-d3e000000001"}
    assert DEMO.stat().st_size < 200_000
    assert sniff_format(_head(DEMO)) == "stream-json"


def test_demo_covers_the_lifecycles() -> None:
    frames = _demo_frames()
    subtypes = [f.get("subtype") for f in frames if f["type"] == "system"]
    assert frames[[f.get("subtype") for f in frames].index("init")]["type"] == "system"
    for needed in ("init", "hook_started", "hook_response", "stop_hook_summary", "thinking_tokens", "compact_boundary"):
        assert needed in subtypes, needed
    assert any(f["type"] == "tool_progress" for f in frames)
    assert any(f.get("subtype") == "task_started" and f.get("is_backgrounded") is True for f in frames)

    agent_ids = [
        block["id"]
        for f in frames
        if f["type"] == "assistant"
        for block in f["message"]["content"]
        if block.get("type") == "tool_use" and block.get("name") in ("Agent", "Task")
    ]
    assert agent_ids
    assert any(f.get("parent_tool_use_id") == agent_ids[0] for f in frames)


def test_demo_one_result_per_prompt() -> None:
    frames = _demo_frames()
    turns: list[list[dict]] = []
    for f in frames:
        is_prompt = f["type"] == "user" and f.get("parent_tool_use_id") is None and "timestamp" not in f
        if is_prompt:
            turns.append([])
        if turns:
            turns[-1].append(f)
    assert 5 <= len(turns) <= 8
    for turn in turns:
        assert sum(f["type"] == "result" for f in turn) == 1
    assert sum(f["type"] == "result" for f in frames) == len(turns)


def test_demo_is_rebuilt_by_its_generator(monkeypatch: pytest.MonkeyPatch) -> None:
    spec = importlib.util.spec_from_file_location("make_demo", REPO / "bench" / "make_demo.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "make_demo", module)  # dataclasses look the module up
    spec.loader.exec_module(module)
    assert module.build(REF) == DEMO.read_bytes()
