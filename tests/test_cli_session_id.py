"""A saved session named by its id, or the first characters of it (what
``cctv sessions`` prints), opens as its path does: in the viewer, ``summary``,
``check``, ``export`` and ``replay``."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cctv.viewer.cli import _session_arg, main
from cctv.viewer.index.scan import sessions_by_id

from conftest import FIXTURES

PROJECT = FIXTURES / "captures" / "projects" / "-home-ada-src-demo"
SESSION = "d7acffbd-7cff-4056-82e8-4364dc8df14a"


@pytest.fixture
def projects(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A config root whose projects folder holds the demo project, plus a second
    project with two sessions whose ids begin alike."""
    root = tmp_path / "cfg"
    shutil.copytree(PROJECT, root / "projects" / PROJECT.name)
    other = root / "projects" / "-home-ada-src-other"
    other.mkdir()
    for suffix in ("1", "2"):
        shutil.copyfile(PROJECT / f"{SESSION}.jsonl",
                        other / f"abcdef0{suffix}-0000-4000-8000-00000000000{suffix}.jsonl")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(root))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    return root / "projects"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_a_session_id_or_its_start_names_the_file(projects: Path) -> None:
    path = projects / PROJECT.name / f"{SESSION}.jsonl"
    assert sessions_by_id(SESSION) == [path]
    assert sessions_by_id(SESSION[:8].upper()) == [path]  # ids are read without case
    assert len(sessions_by_id("abcdef0") or []) == 2
    assert sessions_by_id("abcdef03") == []
    assert sessions_by_id("d7ac") is None  # too short to be taken for an id
    assert sessions_by_id("notes.txt") is None and sessions_by_id("summary") is None
    assert _session_arg(SESSION[:8]) == str(path)
    assert _session_arg("missing.jsonl") == "missing.jsonl"  # a path stays a path


def test_summary_check_and_export_take_an_id_as_they_take_the_path(
        projects: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = str(projects / PROJECT.name / f"{SESSION}.jsonl")
    for command in (["summary"], ["summary", "--json"], ["check"], ["export", "--md"]):
        by_path = run(capsys, command[0], path, *command[1:])
        by_id = run(capsys, command[0], SESSION[:8], *command[1:])
        assert by_id == by_path and by_path[0] == 0 and by_path[1]


def test_an_id_that_starts_several_sessions_is_refused_with_their_ids(
        projects: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["summary", "abcdef0"])
    out, err = capsys.readouterr()
    assert exc.value.code == 2 and not out
    assert "'abcdef0' starts 2 session ids" in err
    assert "abcdef01-0000-4000-8000-000000000001" in err and "give more of it" in err
    code, out, err = run(capsys, "summary", "abcdef02")
    assert code == 0 and "abcdef0" not in err


def test_a_word_that_is_no_command_file_or_session_says_so(
        projects: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "facade1")
    assert code == 2 and not out
    assert "'facade1' is not a cctv command, a file or a session id" in err


def test_the_viewer_opens_a_session_named_by_its_id(
        projects: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[list[str]] = []
    monkeypatch.setattr("cctv.viewer.launch.launch", lambda args: opened.append(args) or 0)
    monkeypatch.setattr("cctv.viewer.replay.emit.run_emit",
                        lambda path, **_: opened.append(["replay", path]) or 0)
    path = str(projects / PROJECT.name / f"{SESSION}.jsonl")
    assert main([SESSION[:8]]) == 0
    assert main(["tail", SESSION]) == 0
    assert main(["replay", SESSION[:8], "--emit"]) == 0
    assert opened == [[path], ["tail", path], ["replay", path]]


def test_an_id_shared_by_two_project_folders_lists_their_paths(
        projects: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The same session copied into another project folder: there is no more of
    the id to give, so the answer names both files (usage error, exit 2)."""
    copy = projects / "-home-ada-src-other" / f"{SESSION}.jsonl"
    shutil.copyfile(PROJECT / f"{SESSION}.jsonl", copy)
    for word in (SESSION, SESSION[:8]):
        with pytest.raises(SystemExit) as exc:
            main(["summary", word])
        out, err = capsys.readouterr()
        assert exc.value.code == 2 and not out
        assert f"'{word}' is the id of 2 sessions, in different project folders" in err
        assert f"  {projects / PROJECT.name / f'{SESSION}.jsonl'}\n" in err and f"  {copy}\n" in err
        assert "give more of it" not in err


def test_fewer_than_6_characters_of_an_id_asks_for_6(
        projects: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for word in (SESSION[:5], SESSION[:4]):
        with pytest.raises(SystemExit) as exc:
            main(["summary", word])
        out, err = capsys.readouterr()
        assert exc.value.code == 2 and "give its first 6 characters or more" in err
    code, out, err = run(capsys, "summary", "add")  # a word, not an id's start
    assert code != 0 and "6 characters" not in err


def test_browse_takes_an_id_to_list_the_sessions_it_names(
        projects: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """``cctv browse ID``: the browser over the projects folder, the id in its
    search box (the sessions it names listed first, to pick from); a folder
    stays a folder; an id too short or naming no session is refused (exit 2)."""
    opened: list[tuple[str | None, str]] = []
    monkeypatch.setattr("cctv.viewer.launch.launch_browser",
                        lambda directory=None, *, use_index=True, search="":
                        opened.append((directory, search)) or 0)
    copy = projects / "-home-ada-src-other" / f"{SESSION}.jsonl"
    shutil.copyfile(PROJECT / f"{SESSION}.jsonl", copy)
    assert main(["browse", SESSION[:8]]) == 0
    assert main(["browse", SESSION]) == 0
    assert main(["browse", str(projects)]) == 0
    assert main(["browse"]) == 0
    assert opened == [(None, SESSION[:8]), (None, SESSION), (str(projects), ""), (None, "")]
    for word, says in ((SESSION[:5], "give its first 6 characters or more"),
                       ("abcdef03", f"no session id under {projects} starts with it")):
        with pytest.raises(SystemExit) as exc:
            main(["browse", word])
        assert exc.value.code == 2 and says in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["summary", SESSION])
    assert f"(cctv browse {SESSION} lists them to pick from)" in capsys.readouterr().err
