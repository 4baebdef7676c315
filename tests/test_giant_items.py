"""Giant items (issue 11): an item of any size expands a page at a time, says how
much follows, pages further on ``m``, and shows its whole text in ``$PAGER`` /
``$EDITOR`` on ``o`` / ``O``, from the transcript and from the raw view. Built on
the real ``03_tools`` recording with its Bash call's output made giant."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from cctv.viewer.app import CctvApp
from cctv.viewer.screens.raw import RAW_HEAD, RawScreen
from cctv.viewer.sources import FileTail
from cctv.widgets.cards.base import EXPAND_ROWS
from cctv.widgets.transcript import TranscriptView
from conftest import FIXTURES, wait_for as _wait_for

TOOLS = FIXTURES / "captures" / "stream" / "03_tools.jsonl"
BASH_ID = "toolu_01humNUtUxKHi5ofFPjt2hq2"


def giant_session(tmp_path: Path, output: str) -> Path:
    """03_tools with the first Bash call's output replaced by ``output``."""
    lines = TOOLS.read_text().splitlines()
    for i, line in enumerate(lines):
        frame = json.loads(line)
        content = frame.get("message", {}).get("content")
        if frame.get("type") == "user" and isinstance(content, list) and \
                content and content[0].get("tool_use_id") == BASH_ID:
            content[0]["content"] = output
            frame["tool_use_result"] = {"stdout": output, "stderr": "", "interrupted": False,
                                        "isImage": False}
            lines[i] = json.dumps(frame)
            break
    else:
        raise AssertionError("the Bash result is not in the recording")
    path = tmp_path / "giant.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


async def wait_for(pilot, condition, timeout: float = 20.0) -> None:
    """:func:`conftest.wait_for`, with this file's longer default."""
    await _wait_for(pilot, condition, timeout)


def all_rows(view: TranscriptView) -> list[str]:
    """Every row of the transcript, as drawn (from the top, whatever is on screen)."""
    top = round(view.scroll_y)
    return [view.render_line(y - top).text for y in range(view.virtual_size.height)]


async def open_on_bash(pilot, app: CctvApp) -> TranscriptView:
    await wait_for(pilot, lambda: app.shown.ended is not None)
    view = app.screen.query_one(TranscriptView)
    index = next(i for i, item in enumerate(view.items)
                 if getattr(item, "call", None) is not None and item.call.id == BASH_ID)
    view.move_cursor(index)
    await pilot.pause()
    return view


@pytest.fixture
def pager(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``$PAGER`` and ``$EDITOR``: a script that copies the file it is given to
    ``seen-<name>``; the cache directory inside ``tmp_path``."""
    script = tmp_path / "fake-pager"
    script.write_text('#!/bin/sh\ncp "$1" "$(dirname "$0")/seen-$(basename "$0")"\n')
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    editor = tmp_path / "fake-editor"
    editor.write_text(script.read_text())
    editor.chmod(script.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PAGER", str(script))
    monkeypatch.setenv("EDITOR", str(editor))
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path


async def test_a_one_word_output_expands_to_one_page_with_how_much_follows(tmp_path: Path) -> None:
    word = "x" * 5_000_000  # one line, no space: it used to be word-wrapped whole
    app = CctvApp(FileTail(giant_session(tmp_path, word), follow=False), clock=None)
    async with app.run_test(size=(100, 30)) as pilot:
        view = await open_on_bash(pilot, app)
        await pilot.press("enter")
        await pilot.pause()
        rows = all_rows(view)
        body = [row for row in rows if row.lstrip("▌ ").startswith("xxxx")]
        assert len(body) == EXPAND_ROWS - 1  # a page of body rows, the command's one of them
        width = view.scrollable_content_region.width
        assert all(len(row.rstrip()) <= width for row in rows)
        hint = next(row for row in rows if "(m: more · o: pager)" in row)
        shown = sum(row.count("x") for row in body)
        assert f"{(5_000_000 - shown) / 1024 / 1024:.1f} MiB more" in hint
        # m: one more page of the same line
        await pilot.press("m")
        await pilot.pause()
        assert sum(row.lstrip("▌ ").startswith("xxxx") for row in all_rows(view)) == 2 * EXPAND_ROWS - 1


async def test_a_many_line_output_pages_on_m_and_says_how_many_lines_follow(tmp_path: Path) -> None:
    output = "".join(f"log line {i}\n" for i in range(300_000))
    app = CctvApp(FileTail(giant_session(tmp_path, output), follow=False), clock=None)
    async with app.run_test(size=(100, 30)) as pilot:
        view = await open_on_bash(pilot, app)
        await pilot.press("enter")
        await pilot.pause()
        rows = all_rows(view)
        assert sum("log line " in row for row in rows) == EXPAND_ROWS - 1
        assert any(f"… {300_000 - EXPAND_ROWS + 1:,} more lines · " in row for row in rows)
        await pilot.press("m")
        await pilot.pause()
        rows = all_rows(view)
        assert any(f"log line {2 * EXPAND_ROWS - 2}" in row for row in rows)
        assert any(f"… {300_000 - 2 * EXPAND_ROWS + 1:,} more lines · " in row for row in rows)
        await pilot.press("enter")  # fold: back to the folded card
        await pilot.pause()
        assert sum("log line " in row for row in all_rows(view)) < 10


async def test_o_and_shift_o_show_the_whole_item_with_control_bytes_visible(
        tmp_path: Path, pager: Path) -> None:
    output = "\x1b]0;pwned\x07" + "".join(f"line {i}\n" for i in range(100_000))
    app = CctvApp(FileTail(giant_session(tmp_path, output), follow=False), clock=None)
    async with app.run_test(size=(100, 30)) as pilot:
        await open_on_bash(pilot, app)
        await pilot.press("o")
        await wait_for(pilot, lambda: (pager / "seen-fake-pager").exists())
        text = (pager / "seen-fake-pager").read_text()
        assert text.startswith("Bash: python3 test_utils.py && python3 app.py")
        assert "\\x1b]0;pwned\\x07line 0\n" in text and "\x1b" not in text
        assert "line 99999" in text
        files = list((pager / "cache" / "cctv").rglob("*.txt"))
        assert len(files) == 1 and files[0].read_text() == text
        await pilot.press("O")
        await wait_for(pilot, lambda: (pager / "seen-fake-editor").exists())
        assert (pager / "seen-fake-editor").read_text() == text


async def test_the_raw_view_of_a_giant_frame_shows_a_head_and_o_shows_it_all(
        tmp_path: Path, pager: Path) -> None:
    output = "".join(f"raw line {i}\n" for i in range(200_000))
    app = CctvApp(FileTail(giant_session(tmp_path, output), follow=False), clock=None)
    async with app.run_test(size=(100, 30)) as pilot:
        view = await open_on_bash(pilot, app)
        call = view.cursor_item.call
        # the result's frame (r on the card shows the call's; the raw view steps to it)
        # (a file's lines are read back from disk: the Feed keeps no bytes)
        entry = app.shown.raw_store.with_raw(app.shown.feed.entry_at(call.result_line_no, call.agent))
        app.push_screen(RawScreen(entry))
        await wait_for(pilot, lambda: isinstance(app.screen, RawScreen)
                       and bool(app.screen.query("#raw-body")))
        raw = app.screen
        assert raw.view.truncated and len(raw.view.text) <= RAW_HEAD
        notes = str(raw.query_one("#raw-notes").render())
        assert "truncated" in notes and "o: the whole frame in $PAGER" in notes
        await pilot.press("o")
        await wait_for(pilot, lambda: (pager / "seen-fake-pager").exists())
        text = (pager / "seen-fake-pager").read_text()
        assert text.startswith("{\n") and "raw line 199999" in text
        assert len(text) > 2 * len(output) - 100  # the tool_result and the stdout, whole


def test_the_cache_directory_is_xdg_cache_home(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from cctv.viewer.external import write_cache_file
    from cctv.viewer.paths import cache_dir

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_dir() == tmp_path / "cctv"
    path = write_cache_file("a\x1b[31mb\u202ec\n", "line 3/tool")
    assert path.parent.parent == tmp_path / "cctv" and "/" not in path.name[:-4]
    assert path.read_text() == "a\\x1b[31mb\\u202ec\n"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_dir() == tmp_path / "home" / ".cache" / "cctv"
    assert not os.path.exists(tmp_path / "home" / ".claude")


def test_the_cache_keeps_a_bounded_number_of_files(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from cctv.viewer.external import KEEP_FILES, write_cache_file

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    paths = [write_cache_file(f"item {n}", f"line{n}") for n in range(KEEP_FILES + 5)]
    left = sorted((tmp_path / "cctv" / "view").iterdir())
    assert len(left) == KEEP_FILES and paths[-1] in left


async def test_a_giant_line_is_drawn_a_page_at_a_time_and_searched_to_its_end(tmp_path: Path) -> None:
    """A line over ``GIANT_LINE`` takes the split path (its strings read again from
    the file): the card shows its first page and how much follows, a search finds
    a word at its very end without copying the item, and the raw view shows a head."""
    import tracemalloc

    from cctv.reducer.format import human_bytes
    from cctv.reducer.giant import GiantLine
    from cctv.viewer.rawstore import HEAD_BYTES, LineHead
    from cctv.viewer.sources import GIANT_LINE

    output = "".join(f"log line {i}\n" for i in range(700_000)) + "the NEEDLE at the very end\n"
    path = giant_session(tmp_path, output)
    assert path.stat().st_size > GIANT_LINE
    app = CctvApp(FileTail(path, follow=False), clock=None)
    async with app.run_test(size=(100, 30)) as pilot:
        view = await open_on_bash(pilot, app)
        call = view.cursor_item.call
        entry = app.shown.feed.entry_at(call.result_line_no, call.agent)
        assert entry.message.content[0].content == output  # whole, from the split line
        await pilot.press("enter")
        await pilot.pause()
        rows = all_rows(view)
        assert sum("log line " in row for row in rows) == EXPAND_ROWS - 1
        assert any(f"… {700_001 - EXPAND_ROWS + 1:,} more lines · " in row for row in rows)
        assert not any("NEEDLE" in row for row in rows)

        view.move_cursor(0)
        tracemalloc.start()
        try:
            count = view.search("needle AT the very END")
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert count == 1 and view.cursor_item.call is call
        assert peak < len(output) / 4  # a window at a time, not the item's text again

        app.push_screen(RawScreen(app.shown.raw_store.with_raw(entry)))  # the main file's line
        await wait_for(pilot, lambda: isinstance(app.screen, RawScreen)
                       and bool(app.screen.query("#raw-body")))
        raw = app.screen
        assert raw.view.truncated and len(raw.view.text) <= RAW_HEAD
        assert raw.view.text.startswith("{") and "log line 0\\n" in raw.view.text
        assert "truncated" in str(raw.query_one("#raw-notes").render())
        # only the start of the line is read (and held) for the view; its title says the whole size
        line = raw.entry.raw
        assert isinstance(line, LineHead) and len(line) <= HEAD_BYTES
        assert line.size == len(path.read_bytes().split(b"\n")[call.result_line_no - 1])
        assert human_bytes(line.size) in raw.title_text
        assert line.whole().endswith(b"}") and b"the NEEDLE at the very end" in line.whole()
    assert not isinstance(entry.raw, GiantLine) and entry.raw == b""  # the Feed keeps no bytes
