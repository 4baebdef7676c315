"""``cctv sessions --live``: real recordings written into a fake projects tree a
line at a time (and at their recorded pace by ``cctv replay --emit``), the
states read back through the index as a user would, at each step."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import pytest

from cctv.reducer.live_state import APPROVAL_AFTER_S
from cctv.viewer.cli import main

from conftest import FIXTURES

DEMO = FIXTURES / "captures/projects/-home-ada-src-demo"
TOOLS = DEMO / "f70c6abd-bc92-44a7-80e8-76abec8cb9d7.jsonl"
BACKGROUND = DEMO / "e321c1d0-19a4-4a0d-819a-a0cf937b8a13.jsonl"
INTERACTIVE = DEMO / "694a18a9-5689-4e24-b856-71f45a125c49.jsonl"
PERMISSION = FIXTURES / "forge/2.1.220/permission_suggestions_write.jsonl"
LIVE_KEYS = {"state", "state_since", "activity", "context_pct"}


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cfg"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


@pytest.fixture
def projects(tmp_path: Path) -> Path:
    folder = tmp_path / "projects" / "-home-ada-src-demo"
    folder.mkdir(parents=True)
    return folder.parent


class Writer:
    """One session file under ``projects``, written a line at a time."""

    def __init__(self, projects: Path, source: Path, name: str | None = None) -> None:
        self.lines = source.read_bytes().splitlines(True)
        self.path = projects / "-home-ada-src-demo" / (name or source.name)
        self.path.write_bytes(b"")
        self.written = 0

    def through(self, needle: bytes) -> int:
        """Write up to and including the first line holding ``needle``; its number."""
        n = next(i for i, line in enumerate(self.lines, 1) if needle in line and i > self.written)
        return self.upto(n)

    def upto(self, n: int) -> int:
        with self.path.open("ab") as fh:
            fh.writelines(self.lines[self.written:n])
        self.written = n
        return n

    def quiet(self, seconds: float) -> None:
        """As if nothing had been written for ``seconds``."""
        then = time.time() - seconds
        os.utime(self.path, (then, then))


def live(projects: Path, capsys: pytest.CaptureFixture[str], *flags: str) -> list[dict]:
    assert main(["sessions", str(projects), "--live", "--json", *flags]) == 0
    return json.loads(capsys.readouterr().out)


def state_of(projects: Path, capsys, writer: Writer) -> dict:
    (row,) = [r for r in live(projects, capsys) if r["path"] == str(writer.path)]
    return row


def test_each_step_of_a_session_with_tools(projects: Path, capsys) -> None:
    w = Writer(projects, TOOLS)
    w.through(b'"type":"user"')  # the prompt
    w.quiet(1)
    row = state_of(projects, capsys, w)
    assert set(row) >= LIVE_KEYS | {"session_id", "path", "title", "cost_usd", "live"}
    assert row["state"] == "working" and row["activity"].startswith("generating")
    w.through(b'"command":"python3 test_utils.py')
    w.quiet(1)
    row = state_of(projects, capsys, w)
    assert (row["state"], row["activity"]) == \
        ("working", "Bash: python3 test_utils.py && python3 app.py · 1s")
    w.quiet(APPROVAL_AFTER_S + 3)  # nothing since the call: a prompt, perhaps
    row = state_of(projects, capsys, w)
    assert (row["state"], row["activity"]) == ("needs_approval", "waiting on Bash (approval?)")
    w.through(b'"tool_use_id"')  # its result
    w.quiet(1)
    assert state_of(projects, capsys, w)["state"] == "working"
    w.upto(len(w.lines))
    w.quiet(120)
    row = state_of(projects, capsys, w)
    assert row["state"] == "needs_you" and row["activity"] == ""
    assert row["cost_usd"] == pytest.approx(0.06536)
    # since the turn ended: two minutes ago, on the file system's clock
    since = datetime.fromisoformat(row["state_since"]).timestamp()
    assert 119 <= time.time() - since <= 125


def test_a_permission_prompt_on_stdout(projects: Path, capsys) -> None:
    w = Writer(projects, PERMISSION, "8d82af14-70f1-487f-92d8-346b9effbe7b.jsonl")
    w.through(b'"subtype":"can_use_tool"')
    w.quiet(30)
    row = state_of(projects, capsys, w)
    assert (row["state"], row["activity"]) == ("needs_approval", "waiting on Write (approval)")
    w.upto(len(w.lines))
    assert state_of(projects, capsys, w)["state"] == "needs_you"


def test_the_ones_that_need_you_come_first_and_a_quiet_one_is_not_live(projects: Path,
                                                                        capsys) -> None:
    working = Writer(projects, TOOLS, "working.jsonl")
    working.through(b'"command":"python3 test_utils.py')
    done = Writer(projects, INTERACTIVE)
    done.upto(len(done.lines))
    asking = Writer(projects, PERMISSION, "asking.jsonl")
    asking.through(b'"subtype":"can_use_tool"')
    old = Writer(projects, BACKGROUND)
    old.upto(len(old.lines))
    old.quiet(2 * 3600)
    rows = live(projects, capsys)
    assert [(Path(r["path"]).name, r["state"]) for r in rows] == [
        ("asking.jsonl", "needs_approval"), (done.path.name, "needs_you"),
        ("working.jsonl", "working")]
    # two hours back, it is listed
    rows = live(projects, capsys, "--within", "3h")
    assert (old.path.name, "needs_you") in [(Path(r["path"]).name, r["state"]) for r in rows]
    # the text output: a mark and the words
    assert main(["sessions", str(projects), "--live"]) == 0
    text = capsys.readouterr().out.splitlines()
    assert text[0].startswith("? needs approval · ") and "waiting on Write (approval)" in text[0]
    assert text[1].startswith("◆ needs you · ")


def test_within_needs_live_and_a_span(projects: Path, capsys) -> None:
    with pytest.raises(SystemExit):
        main(["sessions", str(projects), "--within", "5m"])
    with pytest.raises(SystemExit):
        main(["sessions", str(projects), "--live", "--within", "soon"])
    capsys.readouterr()
    assert live(projects, capsys) == []


def test_replayed_at_its_pace_into_the_tree(projects: Path, capsys, tmp_path: Path) -> None:
    """``cctv replay --emit`` writes the recording into the tree at its pace; the
    states seen while it runs are ones the recording goes through, and it ends
    needing you."""
    target = projects / "-home-ada-src-demo" / INTERACTIVE.name
    with target.open("wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "cctv.viewer.cli", "replay", str(INTERACTIVE),
                                 "--emit"], stdout=out, env=os.environ.copy())
        seen = set()
        while proc.poll() is None:
            rows = live(projects, capsys)
            seen |= {r["state"] for r in rows}
            time.sleep(0.2)
    assert proc.returncode == 0
    assert seen <= {"working", "needs_you", "needs_approval"}
    (row,) = live(projects, capsys)
    assert row["state"] == "needs_you" and row["session_id"] == INTERACTIVE.stem
