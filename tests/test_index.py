"""The session index over real projects trees: rows as the viewer folds them,
incremental updates (append, mid-write, truncation, deletion), a corrupt or
old index, two writers at once, and a projects tree left untouched.

Every test runs with ``XDG_CACHE_HOME``, ``CLAUDE_CONFIG_DIR`` and ``HOME`` in
``tmp_path``: nothing real is read or written.
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from cctv.reducer.format import compact_count
from cctv.reducer.roles import ROLES
from cctv.viewer.cli import main
from cctv.viewer.index import SessionIndex, resolve_root
from cctv.viewer.index.scan import scan
from cctv.viewer.index.store import index_file
from cctv.viewer.loader import load_path

from conftest import FIXTURES

refresh_module = importlib.import_module("cctv.viewer.index.refresh")

CAPTURES = FIXTURES / "captures" / "projects"
REAL = FIXTURES / "public" / "claude-code-log" / "real_projects"
OLD = 1_700_000_000
"""A fixed modification time for the copied files: nothing is live, output is stable."""

SESSION_KEYS = {"session_id", "path", "project", "project_dir", "title", "first_prompt",
                "git_branch", "started", "last_activity", "duration_s", "status", "turns",
                "prompts", "tool_calls", "cost_usd", "cost_source", "input_tokens", "output_tokens",
                "cache_read_tokens", "cache_write_tokens", "model", "bytes", "subagents", "live"}
HIT_KEYS = {"session_id", "session_path", "path", "line", "role", "agent", "chars", "snippet"}


def build_tree(base: Path, *, captures: bool = True, real: bool = True) -> Path:
    """A config root ``base/cfg`` whose ``projects/`` holds copies of the real
    recordings (sub-agent folders and legacy ``agent-*.jsonl`` files included),
    every file dated :data:`OLD`. Returns the projects folder."""
    projects = base / "cfg" / "projects"
    projects.mkdir(parents=True)
    if captures:
        for project in CAPTURES.iterdir():
            shutil.copytree(project, projects / project.name)
    if real:
        for project in REAL.iterdir():
            shutil.copytree(project, projects / project.name)
    for path in projects.rglob("*"):
        os.utime(path, (OLD, OLD))
    return projects


def tree_state(root: Path) -> dict[str, tuple[bytes | None, int, int]]:
    """Every entry under ``root``: its bytes (files), mode and mtime in ns."""
    state = {}
    for path in sorted(root.rglob("*")):
        st = path.lstat()
        data = path.read_bytes() if path.is_file() else None
        state[str(path.relative_to(root))] = (data, st.st_mode, st.st_mtime_ns)
    st = root.stat()
    state["."] = (None, st.st_mode, st.st_mtime_ns)
    return state


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cfg"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


@pytest.fixture
def projects(tmp_path: Path) -> Path:
    return build_tree(tmp_path)


def sessions_in(projects: Path) -> list[Path]:
    """The session files of a tree: every file of the scan but the empty ones."""
    return [Path(f.path) for f in scan(projects) if Path(f.path).stat().st_size]


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out = capsys.readouterr()
    return code, out.out, out.err


# --------------------------------------------------------------------------- rows


def test_every_session_is_a_row_folded_like_the_viewer(projects: Path, capsys) -> None:
    index = SessionIndex(projects)
    report = index.refresh()
    rows = index.rows()
    files = sorted(p for p in projects.glob("*/*.jsonl")
                   if not p.name.startswith("agent-") and p.stat().st_size)
    assert sorted(r.path for r in rows) == sorted(str(p) for p in files)
    empty = [p for p in projects.glob("*/*.jsonl") if not p.stat().st_size]
    assert len(empty) == 17 and index.empty() == len(empty)  # read once, kept, not sessions
    assert report.read == len(files) + len(empty) and not report.errors
    code, out, err = run_cli(["sessions", str(projects)], capsys)
    assert len(out.splitlines()) == len(files) and "cctv: 17 empty files skipped" in err
    for row in rows:
        assert "/subagents/" not in row.path and not Path(row.path).name.startswith("agent-")
        feed = load_path(row.path)
        session = feed.session
        assert row.title == session.title
        assert row.tool_calls == len(session.calls)
        assert row.prompts == sum(1 for t in session.turns if t.prompt)
        assert row.output_tokens == session.usage.output_tokens
        assert row.model == session.model
        assert row.bytes == Path(row.path).stat().st_size
    by_id = {r.session_id: r for r in rows}
    sub = by_id["d7acffbd-7cff-4056-82e8-4364dc8df14a"]
    assert sub.subagents == 1 and sub.project == "/home/ada/src/demo"
    assert sub.project_dir == str(projects / "-home-ada-src-demo")
    workflow = by_id["ef958aa1-0e93-49f0-bb71-150f63befcd1"]
    assert workflow.subagents == len(list((projects / "-experiments-worktrees"
                                           / workflow.session_id).rglob("agent-*.jsonl")))


def test_a_summary_of_another_session_does_not_title_this_one(projects: Path) -> None:
    """The sample project's files open with summaries whose leaves are in other
    sessions: the title is the first prompt, in the list and in the viewer."""
    index = SessionIndex(projects)
    index.refresh()
    path = projects / "-Users-dain-workspace-claude-code-log-sample" / \
        "fe869ecb-c176-478f-9734-7e4b8ef12cff.jsonl"
    row = next(r for r in index.rows() if r.path == str(path))
    leaves = {json.loads(ln)["leafUuid"]: json.loads(ln)["summary"]
              for ln in path.read_text().splitlines() if '"type":"summary"' in ln}
    uuids = {json.loads(ln).get("uuid") for ln in path.read_text().splitlines()}
    assert leaves and not set(leaves) & uuids
    assert row.title not in leaves.values()
    assert row.title.startswith("Hey Claude, can you please add a Github Action")
    assert load_path(path).session.title == row.title


def test_sessions_json_has_exactly_the_documented_keys(projects: Path, capsys) -> None:
    code, out, _ = run_cli(["sessions", str(projects.parent), "--json"], capsys)
    assert code == 0
    rows = json.loads(out)
    assert len(rows) == len(sessions_in(projects)) and rows
    for row in rows:
        assert set(row) == SESSION_KEYS
        assert row["live"] is False
        assert row["cost_usd"] is None or isinstance(row["cost_usd"], float)
    by_id = {r["session_id"]: r for r in rows}
    demo = by_id["d7acffbd-7cff-4056-82e8-4364dc8df14a"]
    assert demo["started"].startswith("20") and demo["last_activity"] >= demo["started"]
    assert demo["duration_s"] > 0 and demo["git_branch"]
    # a projects folder itself, or the default from CLAUDE_CONFIG_DIR, list the same
    code, out2, _ = run_cli(["sessions", str(projects), "--json"], capsys)
    assert json.loads(out2) == rows
    code, out3, _ = run_cli(["sessions", "--json"], capsys)
    assert json.loads(out3) == rows
    code, text, _ = run_cli(["sessions"], capsys)
    assert code == 0 and len(text.splitlines()) == len(rows)


def test_sessions_are_listed_newest_activity_first_whatever_the_files_dates(
        projects: Path, capsys) -> None:
    """Every file of this tree has the same date (a copied or restored folder):
    the list still follows the sessions' own last timestamps, as the browser
    does, and the newest file date breaks a tie."""
    code, out, _ = run_cli(["sessions", str(projects), "--json"], capsys)
    rows = json.loads(out)
    stamps = [r["last_activity"] or "" for r in rows]
    assert stamps == sorted(stamps, reverse=True) and len(set(stamps)) > 5
    # an older session touched now is not thereby the newest: its rows say when it was active
    oldest = next(r for r in reversed(rows) if r["last_activity"])
    os.utime(oldest["path"], None)
    code, out, _ = run_cli(["sessions", str(projects), "--json"], capsys)
    again = [r["session_id"] for r in json.loads(out)]
    assert again.index(oldest["session_id"]) > again.index(rows[0]["session_id"])
    # the text listing has the same order
    code, text, _ = run_cli(["sessions", str(projects)], capsys)
    assert [line.rsplit("[", 1)[1].rstrip("]") for line in text.splitlines()] == again


def test_search_json_names_the_line_that_matched(projects: Path, capsys) -> None:
    code, out, _ = run_cli(["search", "Pydanctic", "--json"], capsys)
    hits = json.loads(out)
    assert code == 0 and hits
    for hit in hits:
        assert set(hit) == HIT_KEYS and hit["role"] in ROLES
        line = Path(hit["path"]).read_text().splitlines()[hit["line"] - 1]
        assert "pydanctic" in line.lower()
        assert "pydanctic" in hit["snippet"].lower()
    code, out, _ = run_cli(["search", "zzqxnotawordanywhere", "--json"], capsys)
    assert json.loads(out) == [] and code == 1


def test_search_covers_what_a_reader_sees_each_hit_with_its_role_and_line(
        projects: Path, capsys) -> None:
    """Tool output (an ``ls -la`` listing), thinking, hook output, notices and a
    compaction summary are found, each under its role, at the line holding it;
    ``--role`` keeps one role."""
    index = SessionIndex(projects)
    index.refresh()
    for word, role in [("drwxr", "tool_result"), ("CLAUDE.md", "thinking"), ("clmail", "hook"),
                       ("interrupted", "notice"), ("continued", "compaction")]:
        code, out, _ = run_cli(["search", word, str(projects), "--json", "--role", role], capsys)
        hits = json.loads(out)
        assert code == 0 and hits and {h["role"] for h in hits} == {role}, word
        for hit in hits:
            row = Path(hit["path"]).read_text().splitlines()[hit["line"] - 1]
            assert word.split(".")[0].lower() in row.lower(), (word, hit)
    roles = {h.role for h in index.search("drwxr")}
    assert "tool_result" in roles
    with pytest.raises(SystemExit) as exit_:
        main(["search", "drwxr", "--role", "nonsense"])
    assert exit_.value.code == 2 and "invalid choice" in capsys.readouterr().err


def test_search_lists_every_hit_or_says_how_many_more(projects: Path, capsys) -> None:
    """No silent cap: a common word gives every hit (more than the 200 it once
    stopped at); ``--limit N`` gives N and a last line with how many more."""
    index = SessionIndex(projects)
    index.refresh()
    total = index.hit_count("the")
    assert total > 1000
    code, out, _ = run_cli(["search", "the", str(projects)], capsys)
    assert len(out.splitlines()) == total
    code, out, _ = run_cli(["search", "the", str(projects), "--json"], capsys)
    assert len(json.loads(out)) == total
    code, out, _ = run_cli(["search", "the", str(projects), "--limit", "5"], capsys)
    lines = out.splitlines()
    assert len(lines) == 6 and lines[-1].startswith(f"… {total - 5:,} more hits (--limit 5")
    code, out, _ = run_cli(["search", "the", str(projects), "--limit", "5", "--json"], capsys)
    assert len(json.loads(out)) == 5
    # a giant text is searched by its first part, and its hit says how much
    big = [h for h in index.search("the") if h.chars > h.searched]
    assert big
    code, out, _ = run_cli(["search", "the", str(projects)], capsys)
    assert f"(first {compact_count(big[0].searched)} of {compact_count(big[0].chars)} characters searched)" in out


def test_no_index_reads_the_files_and_writes_nothing(projects: Path, tmp_path: Path,
                                                     capsys) -> None:
    code, out, _ = run_cli(["sessions", "--json", "--no-index"], capsys)
    assert code == 0 and len(json.loads(out)) == len(sessions_in(projects))
    code, out, _ = run_cli(["search", "Pydanctic", "--json", "--no-index"], capsys)
    assert json.loads(out)
    assert not (tmp_path / "cache").exists()


def test_config_root_or_projects_folder(projects: Path) -> None:
    assert resolve_root(projects.parent) == projects
    assert resolve_root(projects) == projects
    assert resolve_root(None) == projects  # CLAUDE_CONFIG_DIR


# --------------------------------------------------------------------------- incremental


REAL_SESSION = REAL / "-Users-dain-workspace-claude-code-log-sample" / \
    "b45ad5d8-81fb-4bcb-baba-19d9f503d731.jsonl"


def _one_session(tmp_path: Path) -> tuple[Path, Path, list[bytes]]:
    projects = tmp_path / "cfg" / "projects"
    folder = projects / "-Users-dain-workspace-claude-code-log"
    folder.mkdir(parents=True)
    lines = REAL_SESSION.read_bytes().splitlines(keepends=True)
    return projects, folder / REAL_SESSION.name, lines


def _row(index: SessionIndex, path: Path):
    return next(r for r in index.rows() if r.path == str(path))


def _fresh_row(tmp_path: Path, data: bytes):
    """The row of a session with exactly ``data``, indexed from nothing."""
    other = tmp_path / "other" / "projects" / "p"
    other.mkdir(parents=True)
    path = other / REAL_SESSION.name
    path.write_bytes(data)
    index = SessionIndex(other.parent, use_index=False)
    index.refresh()
    return index.rows()[0]


def test_an_appended_file_is_read_from_where_the_index_stopped(tmp_path: Path) -> None:
    projects, path, lines = _one_session(tmp_path)
    half = len(lines) // 2
    path.write_bytes(b"".join(lines[:half]))
    index = SessionIndex(projects)
    index.refresh()
    before = _row(index, path)
    with path.open("ab") as fh:
        fh.write(b"".join(lines[half:]))
    report = index.refresh()
    assert (report.read, report.appended) == (1, 1)
    after = _row(index, path)
    assert after.tool_calls > before.tool_calls
    expected = _fresh_row(tmp_path, REAL_SESSION.read_bytes())
    assert after.__struct_fields__ == expected.__struct_fields__
    for name in after.__struct_fields__:
        if name not in ("path", "project_dir", "mtime"):
            assert getattr(after, name) == getattr(expected, name), name
    # texts of both halves are found, each once
    early = [h.line for h in index.search("Pydanctic")]
    assert early == [4]
    late = [h.line for h in index.search("ruff")]
    assert late and all(n > half for n in late) and len(late) == len(set(late))
    everything = index.search("the")
    assert len(everything) == len({h.line for h in everything})
    assert index.refresh().read == 0  # nothing changed: nothing read


def test_a_file_caught_mid_write_is_indexed_to_its_last_complete_line(tmp_path: Path) -> None:
    projects, path, lines = _one_session(tmp_path)
    cut = 12
    partial = lines[cut][: len(lines[cut]) // 2]
    path.write_bytes(b"".join(lines[:cut]) + partial)
    index = SessionIndex(projects)
    index.refresh()
    state = index.store.states()[str(path)]
    assert state.indexed_bytes == sum(len(ln) for ln in lines[:cut])
    assert state.lines == cut
    assert _row(index, path).bytes == path.stat().st_size
    with path.open("ab") as fh:
        fh.write(lines[cut][len(partial):] + b"".join(lines[cut + 1:]))
    assert index.refresh().appended == 1
    assert index.store.states()[str(path)].lines == len(lines)
    assert _row(index, path).title == load_path(path).session.title


def test_a_shorter_file_is_read_again_whole(tmp_path: Path) -> None:
    projects, path, lines = _one_session(tmp_path)
    path.write_bytes(b"".join(lines))
    index = SessionIndex(projects)
    index.refresh()
    assert index.search("ruff")
    path.write_bytes(b"".join(lines[:10]))
    report = index.refresh()
    assert (report.read, report.appended) == (1, 0)
    assert not index.search("ruff") and index.search("Pydanctic")
    assert index.store.states()[str(path)].lines == 10
    assert _row(index, path).tool_calls == len(load_path(path).session.calls)


def test_a_file_replaced_by_a_longer_one_is_read_again_whole(tmp_path: Path) -> None:
    """Longer, but its first bytes are not the ones indexed: not an append."""
    projects, path, lines = _one_session(tmp_path)
    path.write_bytes(b"".join(lines))
    index = SessionIndex(projects)
    index.refresh()
    other = REAL / "-Users-dain-workspace-claude-code-log-sample" / \
        "fe869ecb-c176-478f-9734-7e4b8ef12cff.jsonl"
    assert other.stat().st_size > path.stat().st_size
    shutil.copyfile(other, path)
    report = index.refresh()
    assert (report.read, report.appended) == (1, 0)
    assert not index.search("Pydanctic") and index.search("Github Action")


def test_a_deleted_file_leaves_the_list(projects: Path) -> None:
    index = SessionIndex(projects)
    index.refresh()
    gone = projects / "-home-ada-src-demo" / "d7acffbd-7cff-4056-82e8-4364dc8df14a.jsonl"
    count = len(index.rows())
    before = [h for h in index.search("survey") if h.session_path == str(gone)]
    assert before
    gone.unlink()
    report = index.refresh()
    assert report.removed == 1
    assert len(index.rows()) == count - 1
    assert all(r.path != str(gone) for r in index.rows())
    assert not [h for h in index.search("survey") if h.session_path == str(gone)]


def test_a_grown_sub_agent_file_refreshes_its_session(projects: Path) -> None:
    index = SessionIndex(projects)
    index.refresh()
    agent = next((projects / "-home-ada-src-demo").rglob("agent-*.jsonl"))
    with agent.open("ab") as fh:
        fh.write(b"\n")
    report = index.refresh()
    assert report.read == 1


# --------------------------------------------------------------------------- robustness


def test_a_corrupt_index_is_rebuilt(projects: Path) -> None:
    target = index_file(projects)
    target.parent.mkdir(parents=True)
    target.write_bytes(b"this is not a database at all" * 1000)
    index = SessionIndex(projects)
    assert index.note and "rebuilt" in index.note
    index.refresh()
    assert len(index.rows()) == len(sessions_in(projects))
    assert index.store.path == target  # on disk again, not in memory


def test_an_index_of_another_version_is_rebuilt(projects: Path) -> None:
    index = SessionIndex(projects)
    index.refresh()
    index.close()
    db = sqlite3.connect(index_file(projects))
    db.execute("PRAGMA user_version = 0")
    db.commit()
    db.close()
    again = SessionIndex(projects)
    assert again.note and "another version" in again.note
    assert again.rows() == []
    again.refresh()
    assert len(again.rows()) == len(sessions_in(projects))


def test_a_locked_index_falls_back_to_memory(projects: Path, monkeypatch) -> None:
    monkeypatch.setattr("cctv.viewer.index.store._BUSY_MS", 50)
    first = SessionIndex(projects)
    first.refresh()
    (projects / "-home-ada-src-demo" / "d7acffbd-7cff-4056-82e8-4364dc8df14a.jsonl").unlink()
    first.store.db.execute("BEGIN EXCLUSIVE")  # another cctv, stuck mid-write
    try:
        second = SessionIndex(projects)
        report = second.refresh()
        assert second.store.path is None and "locked" in (second.note or "")
        assert len(second.rows()) == len(sessions_in(projects)) == report.files - second.empty()
    finally:
        first.store.db.execute("ROLLBACK")


def test_two_processes_indexing_at_once_agree_and_leave_a_sound_index(
        projects: Path, tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    cmd = [sys.executable, "-m", "cctv.viewer.cli", "sessions", str(projects), "--json"]
    procs = [subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [o[1] for o in outs]
    first, second = (json.loads(o[0]) for o in outs)
    assert first == second and len(first) == len(sessions_in(projects))
    db = sqlite3.connect(index_file(projects))
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    db.execute("INSERT INTO texts(texts) VALUES ('integrity-check')")
    count = db.execute("SELECT count(*) FROM sessions WHERE lines > 0").fetchone()[0]
    assert count == len(first)


def test_two_threads_refreshing_at_once(projects: Path) -> None:
    errors: list[BaseException] = []

    def work() -> None:
        try:
            index = SessionIndex(projects)
            index.refresh()
            index.close()
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors
    index = SessionIndex(projects)
    assert len(index.rows()) == len(sessions_in(projects))
    assert len(index.search("Pydanctic")) == len({(h.session_path, h.line) for h in index.search("Pydanctic")})


def test_worker_processes_give_the_same_rows(projects: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(refresh_module, "POOL_MIN_FILES", 1)
    monkeypatch.setattr(refresh_module, "POOL_MIN_BYTES", 0)
    pooled = SessionIndex(projects, workers=2)
    pooled.refresh()
    alone = SessionIndex(projects, use_index=False, workers=1)
    alone.refresh()
    assert pooled.rows() == alone.rows()
    assert sorted((h.session_path, h.line) for h in pooled.search("pytest")) \
        == sorted((h.session_path, h.line) for h in alone.search("pytest"))


def test_indexing_never_writes_into_the_projects_folder(projects: Path, capsys) -> None:
    before = tree_state(projects.parent)
    run_cli(["sessions", "--json"], capsys)
    run_cli(["search", "pytest", "--json"], capsys)
    index = SessionIndex(projects)
    index.refresh()
    assert tree_state(projects.parent) == before


def test_closing_mid_refresh_stops_it_and_keeps_the_index(projects: Path) -> None:
    """The app quitting while its refresh thread runs must not be taken for a
    damaged index (which would delete it)."""
    from cctv.viewer.index import IndexClosed

    index = SessionIndex(projects)
    index.refresh()
    (projects / "-home-ada-src-demo" / "d7acffbd-7cff-4056-82e8-4364dc8df14a.jsonl").touch()
    calls = []

    def close_during(done: int, total: int) -> None:
        calls.append(done)
        index.close()

    with pytest.raises(IndexClosed):
        index.refresh(close_during)
    assert calls and index_file(projects).exists()
    again = SessionIndex(projects)
    assert again.note is None and len(again.rows()) == len(sessions_in(projects))


# --------------------------------------------------------------------------- sub-agent texts

SUBAGENT_SESSION = "ef958aa1-0e93-49f0-bb71-150f63befcd1"


def _hits_in(index: SessionIndex, word: str, session_id: str) -> list:
    return [h for h in index.search(word) if h.session_id == session_id]


def test_a_sub_agents_reply_is_found_in_its_own_file_at_its_own_line(tmp_path: Path,
                                                                      capsys) -> None:
    projects = build_tree(tmp_path, captures=False)
    main_file = projects / "-experiments-worktrees" / f"{SUBAGENT_SESSION}.jsonl"
    index = SessionIndex(projects)
    index.refresh()
    # "grounding" is only in the reply of one sub-agent, in its own file
    assert b"grounding" not in main_file.read_bytes().lower()
    [hit] = _hits_in(index, "grounding", SUBAGENT_SESSION)
    own = next(main_file.parent.rglob("agent-a52886dc180afb356.jsonl"))
    assert (hit.role, hit.file, hit.session_path) == ("assistant", str(own), str(main_file))
    assert "grounding" in own.read_text().splitlines()[hit.line - 1].lower()
    assert "grounding" in hit.plain.lower()
    session = load_path(main_file).session
    assert hit.agent == session.agent_file_ids["a52886dc180afb356"]
    # the text output and --json name that file and line too
    code, out, _ = run_cli(["search", "grounding", str(projects)], capsys)
    assert f"{own}:{hit.line}: [assistant] " in out
    code, out, _ = run_cli(["search", "grounding", str(projects), "--json"], capsys)
    [found] = json.loads(out)
    assert (found["path"], found["line"], found["agent"]) == (str(own), hit.line, hit.agent)


def test_sub_agent_texts_survive_an_append_and_a_grown_sub_agent_file_once(
        tmp_path: Path) -> None:
    projects = build_tree(tmp_path, captures=False)
    folder = projects / "-experiments-worktrees"
    index = SessionIndex(projects)
    index.refresh()
    before = len(_hits_in(index, "information", SUBAGENT_SESSION))
    assert any(h.agent is not None and "/subagents/" in h.file
               for h in _hits_in(index, "information", SUBAGENT_SESSION))
    main_file = folder / f"{SUBAGENT_SESSION}.jsonl"
    last = main_file.read_bytes().splitlines()[-1]
    with main_file.open("ab") as fh:  # the main file grows: read from where the index stopped
        fh.write(last + b"\n")
    assert index.refresh().appended == 1
    assert len(_hits_in(index, "information", SUBAGENT_SESSION)) == before
    agent = next((folder / SUBAGENT_SESSION / "subagents").glob("agent-a4ca*.jsonl"))
    with agent.open("ab") as fh:  # a sub-agent file grows: the session is read again whole
        fh.write(b"\n")
    report = index.refresh()
    assert (report.read, report.appended) == (1, 0)
    assert len(_hits_in(index, "information", SUBAGENT_SESSION)) == before


def test_the_index_fingerprint_covers_the_fold_package() -> None:
    """Rows folded by other code are read again: the fold lives in reducer/fold/."""
    from importlib import resources

    from cctv.viewer.index.store import _sources

    names = [name for name, _ in _sources(resources.files("cctv.reducer"))]
    assert "fold/session.py" in names and "replay/player.py" in names and "feed.py" in names


def test_a_session_that_starts_with_a_slash_command_is_titled_by_it(projects: Path,
                                                                   capsys) -> None:
    """``/init`` (the model answered it), then typed prompts: the command titles
    the session in the list, the summary and search rows, as the viewer draws it;
    a session of one local command (``/model``) is titled by it, not untitled."""
    init = projects / "-Users-dain-workspace-JSSoundRecorder" / "7acd37a8-2745-4b58-a8a9-46164b22ad9e.jsonl"
    model = projects / "-Users-dain-workspace-danieldemmel-me-next" / "3680252d-d4e3-4416-bddd-8f5b5b4fdb7f.jsonl"
    code, out, _ = run_cli(["sessions", str(projects), "--json"], capsys)
    titles = {r["path"]: r["title"] for r in json.loads(out)}
    assert (titles[str(init)], titles[str(model)]) == ("/init", "/model")
    code, out, _ = run_cli(["summary", str(init)], capsys)
    assert out.splitlines()[0] == "/init"
    index = SessionIndex(projects)
    index.refresh()
    assert {h.title for h in index.search("JSSoundRecorder") if h.session_path == str(init)} == {"/init"}
