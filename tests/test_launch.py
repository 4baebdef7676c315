"""Which source the command line picks: tail, demo, paths, run, and bad words."""

from __future__ import annotations

import os
import shutil
from pathlib import Path


from cctv.viewer.cli import main
from cctv.viewer.paths import demo_path
from cctv.viewer.launch import _intro, build_source
from cctv.viewer.sources import CommandSource, FileTail

from conftest import FIXTURES

PROJECTS = FIXTURES / "captures" / "projects"


def test_tail_follows_the_most_recently_written_session(tmp_path: Path, monkeypatch) -> None:
    root = tmp_path / "cfg"
    shutil.copytree(PROJECTS, root / "projects")
    sessions = sorted((root / "projects").glob("*/*.jsonl"))
    newest = sessions[3]
    for i, path in enumerate(sessions):
        os.utime(path, (1_000_000 + i, 1_000_000 + i))
    os.utime(newest, (2_000_000, 2_000_000))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(root))
    source = build_source(["tail"])
    assert isinstance(source, FileTail) and source.follow
    assert source.path == newest.resolve()
    assert _intro(["tail"], source) == f"Following the most recent session: {source.path}"


def test_tail_without_sessions_is_an_error_but_bare_cctv_shows_the_demo(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path))
    assert "no session found under" in build_source(["tail"])
    monkeypatch.setattr("sys.stdin.isatty", lambda: True, raising=False)
    source = build_source([])
    assert isinstance(source, FileTail) and source.path == demo_path().resolve()
    assert "bundled demo" in _intro([], source)


def test_paths_run_and_demo(tmp_path: Path) -> None:
    demo = build_source(["demo"])
    assert isinstance(demo, FileTail) and not demo.follow
    missing = tmp_path / "not-yet.jsonl"
    assert build_source([str(missing)]) == (
        f"{missing}: no such file (cctv tail {missing} waits for it to appear)")
    for words in (["tail", str(missing)], ["--wait", str(missing)]):
        src = build_source(words)
        assert isinstance(src, FileTail) and src.follow and src.path == missing  # waited for
    assert isinstance(build_source(["run", "--", "claude", "-p", "hi"]), CommandSource)
    assert build_source(["run"]) == "usage: cctv run -- COMMAND [ARGS…]"
    assert "is a directory" in build_source([str(tmp_path)])
    assert build_source(["-"]) == "stdin"


def test_bad_words_exit_2_with_one_line(capsys) -> None:
    assert main(["run"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("cctv: usage")
