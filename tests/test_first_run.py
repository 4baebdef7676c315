"""The first five minutes: package data, the command line's words, crashes and the first keys.

These run against whatever ``viewer`` is importable: the source tree in a
checkout, the installed package under ``.ci/run`` (which sets
``CCTV_EXPECT_INSTALLED=1`` and runs pytest from outside the checkout).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from fnmatch import fnmatchcase
from importlib import resources
from pathlib import Path, PurePosixPath

import pytest
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

from cctv import viewer
from conftest import FIXTURES, wait_for
from cctv.viewer.app import CctvApp
from cctv.viewer.cli import COMMANDS, main, version
from cctv.viewer.paths import demo_path
from cctv.viewer.launch import exit_status
from cctv.viewer.loader import load_path
from cctv.viewer.screens.help import HelpScreen
from cctv.viewer.screens.session import SessionScreen

CHECKOUT = Path(__file__).resolve().parents[1]
PACKAGES = {"reducer": "cctv.reducer", "widgets": "cctv.widgets", "viewer": "cctv.viewer"}
"""Each folder of the checkout and the package it installs as."""


# --- package data ----------------------------------------------------------------------


def _data_files() -> list[tuple[str, PurePosixPath]]:
    """(top package, path inside it) of every non-Python file in the checkout's packages."""
    out = []
    for top in PACKAGES:
        for f in sorted((CHECKOUT / top).rglob("*")):
            if f.is_file() and f.suffix not in (".py", ".pyc") and "__pycache__" not in f.parts:
                out.append((top, PurePosixPath(f.relative_to(CHECKOUT / top).as_posix())))
    return out


def _declared(top: str, rel: PurePosixPath, package_data: dict[str, list[str]]) -> bool:
    """Whether setuptools' ``package-data`` globs take ``rel`` (a path inside ``top``)."""
    for key, patterns in package_data.items():
        base = PurePosixPath(*key.split("."))
        inner = PurePosixPath(*PACKAGES[top].split("."), rel)
        try:
            tail = inner.relative_to(base)
        except ValueError:
            continue
        for pattern in patterns:
            parts = PurePosixPath(pattern).parts
            if len(parts) == len(tail.parts) and all(map(fnmatchcase, tail.parts, parts)):
                return True
    return False


def test_the_app_reads_data_files_and_they_exist() -> None:
    names = {str(rel) for _top, rel in _data_files()}
    assert {"app.tcss", "screens/session.tcss", "demo/demo_session.jsonl"} <= names


@pytest.mark.parametrize(("top", "rel"), _data_files(), ids=lambda v: str(v))
def test_every_data_file_is_declared_in_package_data(top: str, rel: PurePosixPath) -> None:
    config = tomllib.loads((CHECKOUT / "pyproject.toml").read_text())
    package_data = config["tool"]["setuptools"]["package-data"]
    assert _declared(top, rel, package_data), f"{top}/{rel} is missing from [tool.setuptools.package-data]"


@pytest.mark.parametrize(("top", "rel"), _data_files(), ids=lambda v: str(v))
def test_every_data_file_is_in_the_imported_package(top: str, rel: PurePosixPath) -> None:
    """Against an installed package this is what a user's ``pip install .`` holds."""
    package = resources.files(PACKAGES[top])
    assert (package / str(rel)).is_file(), f"{top}/{rel} is not in {package}"


def test_the_suite_runs_against_the_installed_package_when_ci_says_so() -> None:
    if not os.environ.get("CCTV_EXPECT_INSTALLED"):
        pytest.skip("only under .ci/run, which installs the package and runs the suite against it")
    where = Path(viewer.__file__).resolve()
    # (the README installs into .venv inside the checkout: what matters is that
    # the code imported is the installed copy, not the checkout's own viewer/)
    assert where.parent != CHECKOUT / "viewer", f"tests imported the checkout ({where}), not the installed package"
    assert where.parts[-3:] == ("cctv", "viewer", "__init__.py"), where


# --- the command line --------------------------------------------------------------------


def _cctv(*words: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cctv.viewer.cli", *words], capture_output=True, text=True,
                          timeout=60, env={**os.environ, **(env or {})}, stdin=subprocess.DEVNULL)


def test_version() -> None:
    res = _cctv("--version")
    assert res.returncode == 0 and res.stdout.strip() == f"cctv {version()}"


def test_help_lists_every_subcommand_with_one_line(capsys) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for name, command in COMMANDS.items():
        line = next(ln for ln in out.splitlines() if ln.strip().startswith(f"cctv {name}"))
        assert command.help in line
    assert "cctv PATH" in out and "cctv --version" in out


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_subcommand_has_its_own_help(name: str) -> None:
    res = _cctv(name, "-h")
    assert res.returncode == 0, res.stderr
    assert f"cctv {name}" in res.stdout and res.stderr == ""
    assert "cctv cctv" not in res.stdout  # (replay's usage line said it twice)


@pytest.mark.parametrize(("word", "hint"), [("nosuchsub", "cctv --help"), ("summry", "did you mean 'cctv summary'?"),
                                            ("chek", "did you mean 'cctv check'?")])
def test_an_unknown_word_is_one_line_and_exit_2(capsys, word: str, hint: str) -> None:
    assert main([word]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"'{word}'" in err and hint in err


def test_a_missing_file_is_one_line_and_exit_2(capsys, tmp_path: Path) -> None:
    missing = tmp_path / "no" / "such" / "file.jsonl"
    assert main([str(missing)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(missing) in err and "no such file" in err


def test_a_directory_is_one_line_and_exit_2(capsys, tmp_path: Path) -> None:
    assert main([str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is a directory" in err


def test_headless_bad_arguments_exit_2() -> None:
    res = _cctv("summary")
    assert res.returncode == 2 and "PATH" in res.stderr


# --- crashes -------------------------------------------------------------------------------


class _Boom(RuntimeError):
    pass


async def test_a_crash_exits_non_zero_with_one_line_and_a_log(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))

    def explode(self: SessionScreen) -> None:
        raise _Boom("the \x1b]0;title\x07 widget fell over")

    monkeypatch.setattr(SessionScreen, "refresh_panels", explode)
    app = CctvApp(None, feed=load_path(demo_path()), clock=None)
    with pytest.raises(_Boom):  # run_test re-raises what ended the app
        async with app.run_test(size=(100, 30)) as pilot:
            app._dirty = True  # the app's 0.1 s panel timer calls refresh_panels
            await pilot.pause(0.5)
    assert app.crash is not None and app.return_code == 1
    assert exit_status(app, app.return_value) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("cctv crashed: _Boom: the ")
    assert "\x1b" not in err and "\x07" not in err  # the message is from the input: shown, not obeyed
    logs = list((tmp_path / "cache" / "cctv" / "logs").glob("crash-*.log"))
    assert len(logs) == 1 and str(logs[0]) in err
    assert "Traceback" in logs[0].read_text() and "explode" in logs[0].read_text()


# --- the first keys ------------------------------------------------------------------------


async def test_ctrl_c_quits_like_q() -> None:
    app = CctvApp(None, feed=load_path(demo_path()), clock=None)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("ctrl+c")
        await pilot.pause()
    assert app.return_code == 0 and app.crash is None


async def test_the_footer_keeps_quit_and_help_visible_at_80x24() -> None:
    app = CctvApp(None, feed=load_path(demo_path()), clock=None)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        footer = app.screen.query_one(Footer)
        keys = {k.description: k for k in footer.query(FooterKey)}
        for description in ("Quit", "Help"):
            key = keys[description]
            assert key.region.width > 0 and key.region.right <= 80, (description, key.region)


async def test_the_first_run_notice_does_not_cover_the_status_bar(tmp_path: Path) -> None:
    app = CctvApp(None, feed=load_path(demo_path()), clock=None, intro="No sessions here: showing the demo.")
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await pilot.pause(0.3)
        from textual.widgets._toast import Toast

        from cctv.widgets.status_bar import StatusBar

        bar = app.screen.query_one(StatusBar).region
        toasts = list(app.screen.query(Toast))
        assert toasts, "the intro was not shown"
        for toast in toasts:
            assert not toast.region.overlaps(bar), (toast.region, bar)


async def test_help_opens_on_cctvs_own_keys() -> None:
    app = CctvApp(None, feed=load_path(demo_path()), clock=None)
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        rows = app.screen.rows
        descriptions = [d for _k, d, _g in rows]
        textual_scrolling = {"Scroll Up", "Scroll Down", "Scroll Left", "Scroll Right", "Scroll Home",
                             "Scroll End", "Page Up", "Page Down", "Page Left", "Page Right"}
        assert not textual_scrolling & set(descriptions), descriptions
        assert {"Next error", "Search", "Quit", "Help", "Open"} <= set(descriptions)
        assert len(descriptions) == len(set(descriptions)), "one row per action"
        keys = dict((d, k) for k, d, _g in rows)
        assert "j" in keys["Next item"] and "↓" in keys["Next item"]
        assert keys["Switch to the session that needs you"] == "J"  # a followed session's key


async def test_the_browsers_help_leaves_out_a_followed_sessions_keys(tmp_path: Path, monkeypatch) -> None:
    from cctv.viewer.app import BrowseOptions

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    projects = tmp_path / "projects"
    projects.mkdir()
    app = CctvApp(None, browse=BrowseOptions(projects, examples=[demo_path()]))
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.pause(0.5)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        descriptions = {d for _k, d, _g in app.screen.rows}
        assert {"Search", "Role", "Live", "Quit", "Help"} <= descriptions, descriptions
        assert not {"Switch to the newer session", "Switch to the session that needs you"} & descriptions


async def test_the_screenshot_command_saves_where_it_says(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    app = CctvApp(None, feed=load_path(demo_path()), clock=None)
    async with app.run_test(size=(80, 24)) as pilot:
        titles = [c.title for c in app.get_system_commands(app.screen)]
        assert titles.count("Screenshot") == 1
        app.action_save_screenshot()
        await pilot.pause()
        saved = list(tmp_path.glob("cctv-*.svg"))
        assert len(saved) == 1 and saved[0].read_text().startswith("<svg")
        notes = [str(n.message) for n in app._notifications]
        assert any(str(saved[0]) in n for n in notes), notes


# --- the demo ------------------------------------------------------------------------------


def test_the_demo_reads_like_a_real_session() -> None:
    data = demo_path().read_bytes()
    assert b"[[" not in data, "a recorder's scenario tag is in the demo"
    session = load_path(demo_path()).session
    for c in session.compactions:
        if c.pre_tokens is not None and c.post_tokens is not None:
            assert c.pre_tokens > c.post_tokens, (c.pre_tokens, c.post_tokens)
    first = next(json.loads(line) for line in data.splitlines() if b'"parent_tool_use_id":null' in line
                 and json.loads(line).get("type") == "user")
    assert first["message"]["content"] == "Think about whether greet() needs a docstring."


async def test_the_demo_draws_its_first_prompt() -> None:
    app = CctvApp(None, feed=load_path(demo_path()), clock=None)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("g")
        await pilot.pause()
        text = app.export_screenshot()
        assert "Think about whether greet() needs a docstring." in text.replace("&#160;", " ")


def test_demo_builder_is_in_step_with_the_bundled_demo() -> None:
    builder = CHECKOUT / "bench" / "make_demo.py"
    res = subprocess.run([sys.executable, str(builder), "--check", "--ref", str(FIXTURES),
                          "--out", str(demo_path())], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr


def test_an_empty_home_opens_the_demo(tmp_path: Path, monkeypatch) -> None:
    from cctv.viewer.launch import _intro, build_source
    from cctv.viewer.sources import FileTail

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.setattr("sys.stdin.isatty", lambda: True, raising=False)
    source = build_source([])
    assert isinstance(source, FileTail) and source.path == demo_path().resolve()
    assert "bundled demo" in (_intro([], source) or "")
    assert not (tmp_path / ".claude").exists(), "cctv created something under ~/.claude"


# --- a file that is not a session at all ---------------------------------------------------


def _html(tmp_path: Path, lines: int = 2806) -> Path:
    page = tmp_path / "page.html"
    page.write_text("".join(f"<div>row {i}</div>\n" for i in range(lines)))
    return page


def test_check_gives_one_verdict_for_a_file_that_is_not_json_lines(capsys, tmp_path: Path) -> None:
    assert main(["check", str(_html(tmp_path))]) == 1
    out = capsys.readouterr().out
    assert "not a Claude Code session: 2,806 of 2,806 lines are not JSON" in out
    assert len(out.splitlines()) <= 5, "one verdict, not a row per line"
    assert main(["check", "--json", str(_html(tmp_path))]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["verdict"].startswith("not a Claude Code session") and len(report["malformed"]) == 2806


def test_summary_gives_the_same_verdict_for_a_binary(capsys, tmp_path: Path) -> None:
    binary = tmp_path / "tool.jsonl"
    binary.write_bytes(bytes(range(256)) * 200 + b"\n\xff\xfe\x00garbage\n")
    assert main(["summary", str(binary)]) == 1
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and "not a Claude Code session" in out and "not JSON" in out
    assert main(["summary", "--json", str(binary)]) == 1
    assert json.loads(capsys.readouterr().out)["verdict"].startswith("not a Claude Code session")


def _meta_null(tmp_path: Path) -> Path:
    """Rows of a known kind, valid JSON, with one field of the wrong type each."""
    rows = [{"type": "user", "isMeta": None, "message": {"role": "user", "content": f"hi {i}"},
             "uuid": f"u{i}", "sessionId": "s1"} for i in range(3)]
    path = tmp_path / "meta.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_json_that_fails_the_schema_is_a_schema_error_not_not_json(capsys, tmp_path: Path) -> None:
    """``"isMeta": null`` on every line was reported as "3 of 3 lines are not JSON"."""
    expected = ("not a Claude Code session: 3 of 3 lines are JSON that does not fit the schema"
                " (line 1: user: Expected `bool`, got `null` - at `$.isMeta`)")
    path = _meta_null(tmp_path)
    for command in (["check"], ["summary"], ["check", "--json"], ["summary", "--json"]):
        assert main([*command, str(path)]) == 1
        out = capsys.readouterr().out
        verdict = json.loads(out)["verdict"] if "--json" in command else out.splitlines()[0]
        assert verdict.endswith(expected)
    with path.open("a") as fh:  # and a line that is not JSON: both are counted
        fh.write("<html>\n")
    assert main(["summary", str(path)]) == 1
    assert capsys.readouterr().out.rstrip().endswith(
        "none of its 4 lines is a frame (1 not JSON, 3 not fitting the schema)")


async def test_the_viewer_says_a_schema_error_too(tmp_path: Path) -> None:
    from cctv.viewer.sources import FileTail
    from cctv.widgets.status_bar import StatusBar

    app = CctvApp(FileTail(_meta_null(tmp_path), follow=False), clock=None)
    async with app.run_test(size=(200, 30)) as pilot:
        await wait_for(pilot, lambda: app.shown is not None and app.shown.ended is not None)
        await pilot.pause(0.2)
        bar = str(app.screen.query_one(StatusBar).render())
        assert "3 of 3 lines are JSON that does not fit the schema" in bar


def test_a_real_session_has_no_verdict(capsys) -> None:
    assert main(["check", "--json", str(FIXTURES / "captures/stream/03_tools.jsonl")]) == 0
    assert json.loads(capsys.readouterr().out)["verdict"] is None


async def test_the_viewer_gives_the_same_verdict_and_one_row(tmp_path: Path) -> None:
    from cctv.viewer.sources import FileTail
    from cctv.widgets.status_bar import StatusBar
    from cctv.widgets.transcript import TranscriptView

    app = CctvApp(FileTail(_html(tmp_path), follow=False), clock=None)
    async with app.run_test(size=(120, 30)) as pilot:
        for _ in range(200):
            await pilot.pause(0.05)
            if app.shown.feed.session.lines >= 2806:
                break
        await pilot.pause(0.3)
        view = app.screen.query_one(TranscriptView)
        assert len([i for i in view.items if not i.hidden]) == 1, "one row for the run of bad lines"
        bar = str(app.screen.query_one(StatusBar).render())
        assert "not a Claude Code session: 2,806 of 2,806 lines are not JSON" in bar
