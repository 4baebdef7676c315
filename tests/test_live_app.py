"""Every source event reaches the screen: the real app under Pilot, real files
(renamed, truncated, deleted, recreated) and real subprocesses.

Each test drives one event of :mod:`viewer.sources` and checks what the user
sees: the status bar, the middle of an empty view, a notice in the transcript,
the exit status.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path


from cctv.reducer.state import NoticeItem
from cctv.viewer.app import CctvApp
from cctv.viewer.sources import CommandSource, FileTail
from cctv.widgets.status_bar import StatusBar

from conftest import FIXTURES, wait_for

STREAM = FIXTURES / "captures" / "stream"
FAST = dict(debounce_ms=20, poll_timeout_ms=200)


def status(app: CctvApp) -> str:
    app._dirty = True
    app._flush_panels()
    return app.screen.query_one(StatusBar).text


def middle(app: CctvApp) -> str | None:
    """The text in the middle of an empty view, if it is shown."""
    body = app.screen.query_one("#body")
    if not body.has_class("-empty"):
        return None
    return str(app.screen.query_one("#placeholder").render())


def notices(app: CctvApp) -> list[str]:
    return [i.text for i in app.shown.feed.session.main.items
            if isinstance(i, NoticeItem) and i.category == "source"]


def lines_of(name: str) -> list[bytes]:
    return (STREAM / name).read_bytes().splitlines(keepends=True)


# --------------------------------------------------------------------------- files


async def test_waiting_for_a_file_says_so_in_the_middle_then_reads_it(tmp_path: Path) -> None:
    path = tmp_path / "later.jsonl"
    app = CctvApp(FileTail(path, **FAST), clock=None)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: middle(app) is not None)
        assert f"waiting for {path} to appear" in middle(app)
        assert "waiting for the file to appear" in status(app)
        path.write_bytes(b"".join(lines_of("01_simple_text.jsonl")))
        await wait_for(pilot, lambda: app.shown.feed.session.turns and middle(app) is None)
        await wait_for(pilot, lambda: "waiting" not in status(app))
        assert "▶ follow" in status(app)


async def test_an_empty_file_says_it_waits_for_lines(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"")
    app = CctvApp(FileTail(path, **FAST), clock=None)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: middle(app) is not None)
        assert middle(app) == "empty file — waiting for lines"
        path.write_bytes(b"".join(lines_of("01_simple_text.jsonl")))
        await wait_for(pilot, lambda: middle(app) is None and app.shown.feed.session.turns)


async def test_a_truncated_file_keeps_its_lines_and_shows_the_new_ones_after(tmp_path: Path) -> None:
    """A rotation by copy and truncate dropped every line shown; as ``tail -F``
    does, they stay now, and what the file holds next follows a notice."""
    path = tmp_path / "s.jsonl"
    shutil.copy(STREAM / "11_multi_turn.jsonl", path)
    app = CctvApp(FileTail(path, **FAST), clock=None)
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for(pilot, lambda: len(app.shown.feed.session.turns) == 2)
        before = app.shown.feed.session.lines
        with open(path, "r+b") as fh:
            fh.truncate(0)
        await wait_for(pilot, lambda: "truncated" in status(app))
        assert notices(app) == ["the file was truncated to 0 bytes (rotated):"
                                " the lines below are what it holds now"]
        assert len(app.shown.feed.session.turns) == 2 and middle(app) is None
        new = lines_of("01_simple_text.jsonl")
        path.write_bytes(b"".join(new))
        await wait_for(pilot, lambda: len(app.shown.feed.session.turns) == 3)
        assert app.shown.feed.session.lines == before + len(new)


async def test_a_file_truncated_to_its_own_start_is_read_again(tmp_path: Path) -> None:
    """Shorter, starting as before: the same session written again."""
    path = tmp_path / "s.jsonl"
    lines = lines_of("11_multi_turn.jsonl")
    path.write_bytes(b"".join(lines))
    app = CctvApp(FileTail(path, **FAST), clock=None)
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for(pilot, lambda: len(app.shown.feed.session.turns) == 2)
        with open(path, "r+b") as fh:
            fh.truncate(len(b"".join(lines[:3])))
        await wait_for(pilot, lambda: "truncated" in status(app))
        assert notices(app) == [f"the file was truncated to {len(b''.join(lines[:3])):,} bytes:"
                                " read again from the start"]
        await wait_for(pilot, lambda: app.shown.feed.session.lines == 3)


async def test_a_rotated_file_keeps_every_line_of_both(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    first = lines_of("11_multi_turn.jsonl")
    path.write_bytes(b"".join(first[:5]))
    app = CctvApp(FileTail(path, **FAST), clock=None)
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for(pilot, lambda: app.shown.feed.session.lines == 5)
        with open(path, "ab") as fh:  # the last lines, then moved away and replaced
            fh.write(b"".join(first[5:]))
            os.rename(path, tmp_path / "s.jsonl.1")
            path.write_bytes(b"")
        await wait_for(pilot, lambda: "replaced" in status(app))
        assert app.shown.feed.session.lines == len(first)  # nothing lost from the old file
        assert len(app.shown.feed.session.turns) == 2
        assert any("replaced by a new one" in n for n in notices(app))


async def test_a_file_saved_anew_over_itself_is_read_again_from_the_start(tmp_path: Path) -> None:
    # an editor's atomic save: a new file, same first line, renamed over the old one
    path = tmp_path / "s.jsonl"
    lines = lines_of("11_multi_turn.jsonl")
    path.write_bytes(b"".join(lines))
    app = CctvApp(FileTail(path, **FAST), clock=None)
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for(pilot, lambda: len(app.shown.feed.session.turns) == 2)
        tmp = tmp_path / "s.jsonl.tmp"
        half = len(lines) // 2
        tmp.write_bytes(b"".join(lines[:half]))
        os.replace(tmp, path)
        await wait_for(pilot, lambda: "rewritten · read again from the start" in status(app))
        await wait_for(pilot, lambda: app.shown.feed.session.lines == half)
        assert notices(app) == ["the file was written anew: read again from the start"]


async def test_deleted_then_recreated_is_followed_again_and_the_status_says_so(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    lines = lines_of("11_multi_turn.jsonl")
    half = len(lines) // 2
    path.write_bytes(b"".join(lines[:half]))
    app = CctvApp(FileTail(path, **FAST), clock=None)
    async with app.run_test(size=(140, 30)) as pilot:
        await wait_for(pilot, lambda: app.shown.feed.session.lines == half)
        path.unlink()
        await wait_for(pilot, lambda: "deleted · waiting for it to come back" in status(app))
        assert notices(app) == ["the file was deleted: waiting for it to come back"]
        assert app.shown.ended is None
        path.write_bytes(b"".join(lines[half:]))
        await wait_for(pilot, lambda: "recreated · following again" in status(app))
        await wait_for(pilot, lambda: app.shown.feed.session.lines == len(lines))
        assert "deleted" not in status(app)
        assert notices(app)[-1] == "the file was created again: following it"
        assert len(app.shown.feed.session.turns) == 2


async def test_a_file_that_cannot_be_read_says_why(tmp_path: Path) -> None:
    path = tmp_path / "loop.jsonl"
    os.symlink(path, path)  # a link to itself: ELOOP (root can read any mode bits)
    app = CctvApp(FileTail(path, **FAST), clock=None)
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for(pilot, lambda: "cannot read" in status(app))
        assert "Too many levels of symbolic links" in status(app)
        assert "retrying" in status(app)
        path.unlink()
        path.write_bytes(b"".join(lines_of("01_simple_text.jsonl")))
        await wait_for(pilot, lambda: app.shown.feed.session.turns and "cannot read" not in status(app))


async def test_a_failed_watch_falls_back_to_polling_and_says_so(tmp_path: Path, monkeypatch) -> None:
    import cctv.viewer.sources as sources

    def no_watch(*_args, **_kwargs):
        raise OSError(28, "inotify watch limit reached")

    monkeypatch.setattr(sources, "awatch", no_watch)
    path = tmp_path / "s.jsonl"
    lines = lines_of("01_simple_text.jsonl")
    path.write_bytes(lines[0])
    app = CctvApp(FileTail(path, **FAST), clock=None)
    async with app.run_test(size=(160, 30)) as pilot:
        await wait_for(pilot, lambda: "polling every 0.2 s" in status(app))
        assert "inotify watch limit reached" in status(app)
        path.write_bytes(b"".join(lines))
        await wait_for(pilot, lambda: app.shown.feed.session.turns and app.shown.feed.session.turns[0].closed)


# ------------------------------------------------------------------------ commands


async def test_a_grandchild_writing_after_its_parent_exits_is_shown_whole(tmp_path: Path) -> None:
    session = tmp_path / "session.jsonl"
    shutil.copy(STREAM / "03_tools.jsonl", session)
    count = len(session.read_bytes().splitlines())
    source = CommandSource(["sh", "-c", f"(sleep 1; cat {session}) & exit 0"])
    app = CctvApp(source, clock=None)
    async with app.run_test(size=(160, 30)) as pilot:
        await wait_for(pilot, lambda: "its output is still open" in status(app))
        assert "exited with status 0" in status(app)
        await wait_for(pilot, lambda: app.shown.ended is not None, timeout=10)
        assert app.shown.feed.session.lines == count
        assert app.shown.ended == "exited with status 0"
        assert "ended · exited with status 0" in status(app)
        await pilot.press("q")
    assert app.return_value == 0


async def test_a_silent_command_says_it_waits_for_output_and_x_stops_it(tmp_path: Path) -> None:
    app = CctvApp(CommandSource(["sleep", "30"]), clock=None)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: "waiting for output · " in status(app), timeout=10)
        assert "sleep 30" in middle(app) and "waiting for output · " in middle(app)
        await pilot.press("x")
        await wait_for(pilot, lambda: app.shown.ended is not None)
        assert app.shown.ended == "stopped by you"
        assert "stopped by you" in status(app) and "-15" not in status(app)
        assert "the command was stopped by you" in notices(app)
        await pilot.press("q")
    assert app.return_value == 143


async def test_cctv_exits_with_the_status_of_the_command(tmp_path: Path) -> None:
    lines = tmp_path / "in.jsonl"
    shutil.copy(STREAM / "01_simple_text.jsonl", lines)
    app = CctvApp(CommandSource(["sh", "-c", f"cat {lines}; exit 3"]), clock=None)
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for(pilot, lambda: app.shown.ended is not None)
        assert app.shown.ended == "exited with status 3" and "exited with status 3" in status(app)
        assert notices(app) == ["the command exited with status 3"]
        await pilot.press("q")
    assert app.return_value == 3


async def test_a_command_that_cannot_start_says_so_and_exits_127() -> None:
    app = CctvApp(CommandSource(["cctv-no-such-command-xyz"]), clock=None)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.shown.ended is not None)
        assert middle(app).startswith("cannot start cctv-no-such-command-xyz")
        assert "No such file or directory" in middle(app)
        await pilot.press("q")
    assert app.return_value == 127


def test_cctv_run_of_a_missing_command_prints_one_line_and_exits_127(tmp_path: Path) -> None:
    import subprocess

    root = Path(__file__).resolve().parents[1]
    done = subprocess.run([sys.executable, "-m", "cctv.viewer.cli", "run", "--", "cctv-no-such-xyz"],
                          cwd=root, capture_output=True, text=True, timeout=60)
    assert done.returncode == 127
    assert done.stderr == "cctv: cannot start cctv-no-such-xyz: command not found\n"


async def test_a_huge_stderr_is_kept_once_bounded_and_spilled_to_the_cache(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    script = ("import sys\n"
              "for i in range(60_000):\n"
              "    sys.stderr.write(f'warning {i:06d} ' + 'x' * 40 + '\\n')\n")
    app = CctvApp(CommandSource([sys.executable, "-c", script]), clock=None)
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for(pilot, lambda: app.shown.ended is not None, timeout=20)
        buffer = app.shown.stderr
        assert buffer.total_lines == 60_000
        assert buffer._kept <= buffer.limit  # ~1 MB in memory of ~3.2 MB written
        assert buffer.spill_path is not None
        assert buffer.spill_path.is_relative_to(tmp_path / "cache" / "cctv")
        await pilot.press("s")
        await pilot.pause(0.2)
        note = str(app.screen.query_one("#spilled").render())
        assert f"the first {buffer.spilled_lines:,} lines" in note and str(buffer.spill_path) in note
        spilled = buffer.spill_path.read_text().splitlines()
        # the file and the memory together hold every line, once, in order
        assert spilled + buffer.lines == [f"warning {i:06d} " + "x" * 40 for i in range(60_000)]


# --------------------------------------------------------------------------- quitting


async def test_q_quits_during_a_large_load(tmp_path: Path) -> None:
    # how fast is measured by bench/quit_latency.py; here: q ends a load half-way
    line = (STREAM / "03_tools.jsonl").read_bytes()
    path = tmp_path / "big.jsonl"
    with open(path, "wb") as fh:
        for _ in range(1600):  # ~40 MB of real frames: more than loads before a q
            fh.write(line)
    total = 1600 * len(line.splitlines())
    app = CctvApp(FileTail(path), clock=None)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.shown.feed.session.lines > 0, timeout=20)
        assert app.shown.feed.session.lines < total  # still loading
        await pilot.press("q")
        await wait_for(pilot, lambda: app.return_value is not None, timeout=5)
    assert app.return_value == 0 and app.shown.feed.session.lines < total


async def test_x_also_stops_what_a_command_left_holding_its_output() -> None:
    app = CctvApp(CommandSource(["sh", "-c", "(sleep 30; echo late) & exit 0"], grace=0.5), clock=None)
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for(pilot, lambda: "its output is still open" in status(app))
        await pilot.press("x")
        await wait_for(pilot, lambda: app.shown.ended is not None, timeout=5)
        assert app.shown.ended == "exited with status 0"
        await pilot.press("q")
    assert app.return_value == 0
