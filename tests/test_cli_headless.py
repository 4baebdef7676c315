"""``cctv check`` and ``cctv summary``: exit codes, text and JSON output, bad paths."""

from __future__ import annotations

import json
import re
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from cctv.viewer.cli import main

STREAM = "captures/stream/"

SUMMARY_KEYS = {
    "format", "session_id", "cli_version", "model", "lines", "malformed", "kinds", "turns",
    "tool_calls", "tasks", "subagents", "heartbeats", "hooks", "thinking_tokens",
    "compactions", "permission_denials", "cost_usd", "usage", "is_error",
}


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def kind_counts(path: Path) -> dict[str, int]:
    """Frame kinds counted straight from the JSON, independently of reducer.frames."""
    counts: Counter[str] = Counter()
    for line in path.read_bytes().splitlines():
        d = json.loads(line)
        sub = d.get("subtype")
        if d["type"] in ("system", "result") and sub:
            counts[f"{d['type']}/{sub}"] += 1
        else:
            counts[d["type"]] += 1
    return dict(counts)


@pytest.fixture
def dirty(reference: Path, tmp_path: Path) -> Path:
    """01_simple_text.jsonl with garbage after line 1 and a cut-off last line."""
    lines = (reference / STREAM / "01_simple_text.jsonl").read_bytes().splitlines()
    new = lines[:1] + [b"{oops", b"[1,2]"] + lines[1:] + [lines[0][:25]]
    p = tmp_path / "dirty.jsonl"
    p.write_bytes(b"\n".join(new))
    return p


# --- check ---------------------------------------------------------------------------------


def test_check_clean_recording(capsys, reference: Path) -> None:
    path = reference / STREAM / "07_hooks.jsonl"
    code, out, err = run(capsys, "check", str(path))
    assert code == 0 and err == ""
    assert f"{path}: ok" in out
    assert "format stream-json, CLI 2.1.328, 29 lines" in out
    assert "0 different" in out


def test_check_json(capsys, reference: Path) -> None:
    path = reference / STREAM / "07_hooks.jsonl"
    code, out, _ = run(capsys, "check", "--json", str(path))
    assert code == 0
    report = json.loads(out)
    assert {"path", "format", "cli_version", "lines", "frames", "kinds", "unknown_kinds",
            "malformed", "round_trip"} <= set(report)
    assert (report["format"], report["cli_version"], report["lines"]) == ("stream-json", "2.1.328", 29)
    assert report["kinds"] == kind_counts(path)
    assert report["malformed"] == [] and report["unknown_kinds"] == []
    rt = report["round_trip"]
    assert rt["ok"] and rt["different"] == [] and rt["identical"] + rt["equivalent"] == 29


def test_check_on_disk_transcript(capsys, reference: Path) -> None:
    path = reference / "captures/projects/-home-ada-src-demo/d7acffbd-7cff-4056-82e8-4364dc8df14a.jsonl"
    code, out, _ = run(capsys, "check", "--json", str(path))
    report = json.loads(out)
    assert code == 0 and report["format"] == "transcript" and report["round_trip"]["ok"]
    assert report["kinds"]["queue-operation"] == 2 and report["kinds"]["cost-state"] == 1


def test_check_malformed_exits_1_and_names_the_lines(capsys, dirty: Path) -> None:
    code, out, _ = run(capsys, "check", str(dirty))
    assert code == 1
    assert "PROBLEMS" in out
    assert "line 2: invalid JSON" in out
    assert "line 3: not a JSON object" in out
    assert "line 6: invalid JSON: truncated" in out

    code, out, _ = run(capsys, "check", "--json", str(dirty))
    assert code == 1
    report = json.loads(out)
    assert [m["line"] for m in report["malformed"]] == [2, 3, 6]
    assert all(m["reason"] and "\n" not in m["reason"] for m in report["malformed"])
    assert report["lines"] == 6 and report["frames"] == 3


def test_check_several_paths(capsys, reference: Path, dirty: Path, tmp_path: Path) -> None:
    clean = reference / STREAM / "01_simple_text.jsonl"
    code, out, _ = run(capsys, "check", "--json", str(clean), str(dirty))
    assert code == 1
    assert [r["path"] for r in json.loads(out)] == [str(clean), str(dirty)]
    code, out, err = run(capsys, "check", str(clean), str(tmp_path / "gone.jsonl"))
    assert code == 2
    assert f"{clean}: ok" in out and "gone.jsonl" in err


# --- summary -------------------------------------------------------------------------------


def test_summary_json_values(capsys, reference: Path) -> None:
    # captures/stream/06_background_bash.jsonl (see test_fold_scenarios): one turn, two Bash
    # calls, the background task b0q8m16pb and the foreground task bx04gjnra, both completed;
    # result total_cost_usd 0.0172, usage 3600 in / 140 out.
    path = reference / STREAM / "06_background_bash.jsonl"
    code, out, err = run(capsys, "summary", "--json", str(path))
    assert code == 0 and err == ""
    d = json.loads(out)
    assert SUMMARY_KEYS <= set(d)
    assert {k: d[k] for k in ("format", "session_id", "cli_version", "model", "lines", "malformed",
                              "turns", "subagents", "heartbeats", "thinking_tokens",
                              "compactions", "permission_denials", "cost_usd", "is_error")} == {
        "format": "stream-json", "session_id": "e321c1d0-19a4-4a0d-819a-a0cf937b8a13",
        "cli_version": "2.1.328", "model": "claude-opus-5-5", "lines": 15, "malformed": [],
        "turns": 1, "subagents": 0, "heartbeats": 0, "thinking_tokens": 0, "compactions": [],
        "permission_denials": 0, "cost_usd": 0.0172, "is_error": False,
    }
    assert d["kinds"] == kind_counts(path)
    assert {k: d["tool_calls"][k] for k in ("total", "failed", "unpaired", "by_name")} == \
        {"total": 2, "failed": 0, "unpaired": 0, "by_name": {"Bash": 2}}
    assert d["tasks"] == [
        {"task_id": "b0q8m16pb", "task_type": "local_bash",
         "description": "Run a short job in the background", "status": "done",
         "state": "completed", "backgrounded": True, "tool_use_id": "toolu_01G6thRvt0rXtpg0Dj7BVl43",
         "agent_id": None, "kind": "shell", "duration_s": None},
        {"task_id": "bx04gjnra", "task_type": "local_bash", "description": "Run the app",
         "status": "done", "state": "completed", "backgrounded": False,
         "tool_use_id": "toolu_01X8w3Zd2Kg1UQdO5P8LJ4N1", "agent_id": None, "kind": "shell",
         "duration_s": 5.04},
    ]
    assert d["hooks"] == {"runs": 0, "failed": 0, "stop_summaries": 0}
    assert d["usage"] == {"input_tokens": 3600, "output_tokens": 140,
                          "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}


@pytest.mark.parametrize("name,expect", [
    # 07_hooks: 6 hook runs, the first Stop hook exits 2; 6 hook heartbeats (see scenarios)
    ("07_hooks.jsonl", {"hooks": {"runs": 6, "failed": 1, "stop_summaries": 0}, "heartbeats": 6}),
    # 10_compact_manual: one manual compaction 1225 -> 2787 tokens, 3 results: two prompts the
    # model answered and /compact (num_turns 0, local_command "compact"): 3 prompts, 2 turns
    ("10_compact_manual.jsonl", {"turns": 2, "prompts": 3, "status": "idle", "compactions": [
        {"trigger": "manual", "pre_tokens": 1225, "post_tokens": 2787}]}),
    # 04_thinking: thinking_tokens deltas 6 x 11
    ("04_thinking.jsonl", {"thinking_tokens": 66}),
    # 05_subagent: one sub-agent with two calls of its own
    ("05_subagent.jsonl", {"subagents": 1}),
])
def test_summary_json_other_recordings(capsys, reference: Path, name: str, expect: dict) -> None:
    code, out, _ = run(capsys, "summary", "--json", str(reference / STREAM / name))
    d = json.loads(out)
    assert code == 0 and SUMMARY_KEYS <= set(d)
    assert {k: d[k] for k in expect} == expect


def test_summary_of_permission_denial(capsys, reference: Path) -> None:
    code, out, _ = run(capsys, "summary", "--json",
                       str(reference / "forge/2.1.220/permission_deny.jsonl"))
    d = json.loads(out)
    assert code == 0 and d["permission_denials"] == 1
    assert (d["tool_calls"]["failed"], d["tool_calls"]["denied"]) == (1, 1)


def test_summary_text(capsys, reference: Path) -> None:
    code, out, _ = run(capsys, "summary", str(reference / STREAM / "06_background_bash.jsonl"))
    assert code == 0
    assert "e321c1d0-19a4-4a0d-819a-a0cf937b8a13" in out
    assert "stream-json" in out and "2.1.328" in out
    assert "$0.0172" in out and "Bash 2" in out
    assert len(out.splitlines()) < 20


def test_summary_counts_one_of_a_thing_in_the_singular(capsys, reference: Path) -> None:
    # 05_subagent: one prompt, one sub-agent, one task; 07_hooks: one tool call. They
    # read "(1 prompts)", "1 sub-agents", "1 calls"
    code, out, _ = run(capsys, "summary", str(reference / STREAM / "05_subagent.jsonl"))
    assert code == 0
    assert "  turns    1 (1 prompt)  cost $0.0287" in out
    assert "  agents   1 sub-agent  1 task (0 running)" in out
    code, out, _ = run(capsys, "summary", str(reference / STREAM / "07_hooks.jsonl"))
    assert "  tools    1 tool call (0 failed, 0 denied, 0 interrupted, 0 without result): Bash 1" in out
    assert not re.search(r"\b1 [a-z-]+s\b", out.replace("0 runs", ""))


def test_summary_of_malformed_file_lists_the_lines(capsys, dirty: Path) -> None:
    code, out, _ = run(capsys, "summary", "--json", str(dirty))
    assert code == 0
    assert [m["line"] for m in json.loads(out)["malformed"]] == [2, 3, 6]
    code, out, _ = run(capsys, "summary", str(dirty))
    assert "line 2: invalid JSON" in out and "line 6: invalid JSON: truncated" in out


# --- bad paths -------------------------------------------------------------------------------


@pytest.mark.parametrize("command", [["check"], ["check", "--json"], ["summary"],
                                     ["summary", "--json"]])
def test_missing_file_and_directory(capsys, tmp_path: Path, command: list[str]) -> None:
    for bad in (tmp_path / "no-such-session.jsonl", tmp_path):
        code, out, err = run(capsys, *command, str(bad))
        assert code == 2
        assert "Traceback" not in err and "Traceback" not in out
        lines = err.strip().splitlines()
        assert len(lines) == 1 and str(bad) in lines[0]


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0,
                    reason="needs a non-root POSIX user to make a file unreadable")
def test_unreadable_file(capsys, tmp_path: Path) -> None:
    p = tmp_path / "locked.jsonl"
    p.write_text('{"type":"keep_alive"}\n')
    p.chmod(0)
    try:
        code, _, err = run(capsys, "summary", str(p))
    finally:
        p.chmod(0o600)
    assert code == 2 and len(err.strip().splitlines()) == 1 and str(p) in err


def test_empty_file(capsys, tmp_path: Path) -> None:
    p = tmp_path / "empty.jsonl"
    p.write_bytes(b"")
    code, out, _ = run(capsys, "check", "--json", str(p))
    assert code == 0 and json.loads(out)["lines"] == 0
    code, out, _ = run(capsys, "summary", "--json", str(p))
    assert code == 0 and json.loads(out)["format"] == "unknown"


# --- the installed command ---------------------------------------------------------------------


def test_console_script_runs(reference: Path, tmp_path: Path) -> None:
    path = reference / STREAM / "11_multi_turn.jsonl"
    exe = shutil.which("cctv")
    cmd = [exe] if exe else [sys.executable, "-m", "cctv.viewer.cli"]
    res = subprocess.run([*cmd, "summary", "--json", str(path)], capture_output=True,
                         text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    d = json.loads(res.stdout)
    assert (d["turns"], d["cost_usd"], d["session_id"]) == \
        (2, 0.0215, "e7740f97-15e3-4079-9733-908bbce7bee3")

    res = subprocess.run([*cmd, "check", str(tmp_path / "missing.jsonl")], capture_output=True,
                         text=True, timeout=60)
    assert res.returncode == 2
    assert res.stderr.strip().count("\n") == 0 and "missing.jsonl" in res.stderr
    assert "Traceback" not in res.stderr

    res = subprocess.run([sys.executable, "-m", "cctv.viewer.cli", "check", str(path)],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 0 and ": ok" in res.stdout
