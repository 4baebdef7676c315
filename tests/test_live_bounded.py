"""Memory stays bounded however much a live source pours in.

- runs of malformed lines are one row with a count (``cctv run -- yes``), and
  the app's Feed keeps only the first line of each run;
- a command's stderr is kept once, the last ~1 MB in memory, the rest spilled
  to the cache directory.
"""

from __future__ import annotations

from pathlib import Path

from cctv.reducer.feed import Feed
from cctv.reducer.lines import LineSplitter
from cctv.reducer.state import ProblemItem
from cctv.viewer.app import CctvApp
from cctv.viewer.sources import CommandSource
from cctv.viewer.stderr_buffer import StderrBuffer
from cctv.widgets.transcript import TranscriptView

from conftest import FIXTURES, wait_for

STREAM = FIXTURES / "captures" / "stream"


def problems(feed: Feed) -> list[ProblemItem]:
    return [i for i in feed.session.main.items if isinstance(i, ProblemItem)]


def test_a_run_of_malformed_lines_is_one_row_with_a_count() -> None:
    good = (STREAM / "01_simple_text.jsonl").read_bytes().splitlines()
    data = [good[0], *[b"y"] * 5000, b'{"type":', b'{"type":', b"y", good[1], b"y", b"y", *good[2:]]
    lines = LineSplitter().feed(b"\n".join(data) + b"\n")
    for keep in (True, False):
        feed = Feed(keep_malformed_runs=keep)
        for start in range(0, len(lines), 1000):  # the app's slices: a run spans batches
            feed.feed(lines[start:start + 1000])
        rows = [(p.line_no, p.last_line_no, p.count) for p in problems(feed)]
        # same reason and consecutive: one row; another reason or a frame between: a new row
        assert rows == [(2, 5001, 5000), (5002, 5003, 2), (5004, 5004, 1), (5006, 5007, 2)]
        assert feed.session.malformed_count == 5005 == feed.session.kinds["malformed"]
        assert len(feed.session.turns) == 1 and feed.session.turns[0].closed
        # the raw view still finds every row's first line, and every frame
        for p in problems(feed):
            assert feed.entry_at(p.line_no).line_no == p.line_no
        assert feed.entry_at(5005).raw == good[1]
        if keep:
            assert len(feed.entries) == len(lines)  # cctv check sees every line
        else:  # each run's first line, every frame, and the 20 lines the format is told from
            starts = {p.line_no for p in problems(feed)}
            frames = {n for n in range(1, len(lines) + 1) if not any(
                p.line_no <= n <= p.last_line_no for p in problems(feed))}
            assert [e.line_no for e in feed.entries] == sorted(starts | frames | set(range(1, 21)))


def test_the_row_says_how_many_lines_it_stands_for() -> None:
    from cctv.widgets.cards.events import _problem_text

    feed = Feed()
    feed.feed(LineSplitter().feed(b"y\n" * 1234))
    (row,) = problems(feed)
    assert _problem_text(row).startswith("⚠ lines 1–1,234 (1,234 lines): invalid JSON")


async def test_cctv_run_yes_is_one_growing_row_and_keeps_nothing_per_line() -> None:
    app = CctvApp(CommandSource(["yes"]), clock=None)
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for(pilot, lambda: app.shown.feed.session.lines > 50_000, timeout=20)
        (row,) = problems(app.shown.feed)
        assert row.count > 50_000 and row.last_line_no == row.line_no + row.count - 1
        assert len(app.shown.feed.entries) <= 20  # the sniffed head, not one per line
        assert len(app.shown.feed.session.malformed) <= 10_000
        view = app.screen.query_one(TranscriptView)
        text = "\n".join(view.render_line(y).text for y in range(view.size.height))
        assert "⚠ lines 1–" in text
        await pilot.press("x")
        await wait_for(pilot, lambda: app.shown.ended is not None)
        assert app.shown.ended == "stopped by you"


def test_stderr_buffer_keeps_the_tail_and_spills_the_head_in_order(tmp_path: Path) -> None:
    buffer = StderrBuffer(limit=1000, spill_dir=tmp_path)
    lines = [f"line {i:04d}" for i in range(1000)]
    buffer.extend(lines)
    assert buffer._kept <= 1000 and len(buffer) == 1000 // len("line 0000\n")
    assert buffer.total_lines == 1000 and buffer.spilled_lines == 1000 - len(buffer)
    buffer.flush()
    assert buffer.spill_path is not None and buffer.spill_path.parent == tmp_path
    assert buffer.spill_path.read_text().splitlines() + buffer.lines == lines
    buffer.close()


def test_stderr_buffer_says_when_it_cannot_spill(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    buffer = StderrBuffer(limit=10, spill_dir=blocker / "sub")  # a folder under a file
    buffer.extend(["aaaaaaaaaa", "bbbbbbbbbb", "c"])
    assert buffer.spill_path is None and buffer.spill_error
    from cctv.viewer.screens.stderr import spill_note

    assert "not kept" in spill_note(buffer)


def test_summary_counts_every_malformed_line_past_those_it_lists() -> None:
    from cctv.reducer.fold.info import MALFORMED_KEPT
    from cctv.reducer.summary import format_summary, summarize

    good = (STREAM / "01_simple_text.jsonl").read_bytes()
    feed = Feed()
    feed.feed(LineSplitter().feed(good + b"y\n" * (MALFORMED_KEPT + 5)))
    data = summarize(feed.session)
    assert len(data["malformed"]) == MALFORMED_KEPT
    assert data["malformed_count"] == MALFORMED_KEPT + 5
    text = format_summary(data)
    assert f"malformed {MALFORMED_KEPT + 5:,}" in text
    assert f"… and {MALFORMED_KEPT + 5 - 20:,} more malformed lines" in text


def test_a_run_of_malformed_lines_in_a_sub_agent_file_is_one_row_of_that_agent() -> None:
    feed = Feed()
    feed.feed(LineSplitter().feed(b"y\n"))  # the main file's line 1 is malformed too
    feed.feed_agent_file(LineSplitter().feed(b"y\n" * 3), "agent-x")
    (main_row,) = problems(feed)
    assert (main_row.line_no, main_row.count) == (1, 1)  # not joined with the agent's lines
    (row,) = [i for i in feed.session.agents["agent-x"].items if isinstance(i, ProblemItem)]
    assert (row.line_no, row.last_line_no, row.count, row.source) == (1, 3, 3, "agent-x")


def test_stderr_spills_into_the_cache_directory(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    buffer = StderrBuffer(limit=10)
    buffer.extend(["aaaaaaaaaa", "bbbbbbbbbb"])
    buffer.flush()
    assert buffer.spill_path is not None and buffer.spill_path.parent == tmp_path / "cctv" / "stderr"
    buffer.close()
