"""What the screen says for each source event, event by event (viewer.source_state).

The Pilot tests in test_live_app.py drive the real sources; this table pins the
words for every member of the event union, so a new event cannot go unsaid.
"""

from __future__ import annotations

import typing

import pytest

from cctv.viewer import sources as S
from cctv.viewer.source_state import SourceState, describe_exit

PATH = "/tmp/s.jsonl"

# event -> (kind, follow, status text part, notice text part or None, middle part or None, ended)
CASES: list[tuple[S.Event, str, bool, str | None, str | None, str | None, str | None]] = [
    (S.Progress(10, 100), "file", True, None, None, None, None),
    (S.HistoryRead(0), "file", True, None, None, "empty file — waiting for lines", None),
    (S.HistoryRead(0), "file", False, None, None, "empty file", None),
    (S.Live(), "pipe", True, None, None, "waiting for frames on standard input", None),
    (S.WaitingForFile(PATH), "file", True, "waiting for the file to appear", None,
     f"waiting for {PATH} to appear", None),
    (S.Truncated(0, continues=True), "file", True, "truncated · following its new lines",
     "truncated to 0 bytes (rotated): the lines below are what it holds now", None, None),
    (S.Truncated(0, continues=False), "file", True, "truncated · read again from the start",
     "truncated to 0 bytes: read again from the start", None, None),
    (S.Replaced(continues=True), "file", True, "replaced · following the new file",
     "replaced by a new one", None, None),
    (S.Replaced(continues=False), "file", True, "rewritten", "written anew", None, None),
    (S.Deleted(), "file", True, "deleted · waiting for it to come back", "was deleted",
     "the file was deleted — waiting for it to come back", None),
    (S.Deleted(), "file", False, "deleted", "was deleted", None, "deleted"),
    (S.Recreated(continues=True), "file", True, "recreated · following again",
     "created again: following it", None, None),
    (S.CannotRead(PATH, "Permission denied"), "file", True, "cannot read: Permission denied · retrying",
     f"cannot read {PATH}: Permission denied", "Permission denied", None),
    (S.CannotRead(PATH, "Permission denied"), "file", False, "cannot read: Permission denied",
     f"cannot read {PATH}", "Permission denied", "cannot read: Permission denied"),
    (S.WatchFailed("no inotify", 1.0), "file", True, "polling every 1 s (watching failed: no inotify)",
     None, None, None),
    (S.ProcessStarted(42), "command", True, None, None, "waiting for output", None),
    (S.ProcessExited(3), "command", True, "exited with status 3 · its output is still open",
     "the command exited with status 3", "exited with status 3 without any output", None),
    (S.ProcessExited(-15, by_user=True), "command", True, "stopped by you · its output is still open",
     "the command was stopped by you", "stopped by you without any output", None),
    (S.OutputClosed(), "command", True, "output closed · the command still runs", None, None, None),
    (S.CannotStart("nosuch", "No such file or directory"), "command", True, None,
     "cannot start nosuch: No such file or directory", "cannot start nosuch",
     "cannot start nosuch: No such file or directory"),
    (S.EndOfInput(), "pipe", True, None, None, "standard input ended without any line", "end of input"),
    (S.EndOfInput(), "file", False, None, None, None, "end of file"),
    (S.EndOfInput(stopped=True), "pipe", True, None, None, "standard input ended", "stopped"),
    (S.Stderr(["warn"]), "command", True, None, None, None, None),
    (S.Lines([]), "file", True, None, None, None, None),
]


def test_every_event_of_the_union_has_a_case() -> None:
    members = set(typing.get_args(S.Event))
    assert members == {type(case[0]) for case in CASES}


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{type(c[0]).__name__}-{c[1]}-{c[2]}")
def test_what_each_event_says(case) -> None:
    event, kind, follow, status, notice, middle, ended = case
    state = SourceState(kind, follow=follow, label="cmd: nosuch" if kind == "command" else "")
    effect = state.apply(event, now=100.0)
    shown = state.status(100.0)
    if status is None:
        assert shown is None
    else:
        assert shown is not None and status in shown[0]
    if notice is None:
        assert effect.notice is None
    else:
        assert effect.notice is not None and notice in effect.notice[0]
    if middle is None:
        assert state.middle(100.0) is None
    else:
        assert middle in (state.middle(100.0) or "")
    assert state.ended == ended


def test_transient_statuses_go_away_and_silence_is_counted() -> None:
    state = SourceState("file")
    state.apply(S.Replaced(continues=True), now=0.0)
    assert state.status(5.0) is not None and state.status(11.0) is None
    command = SourceState("command", label="cmd: sleep 30")
    command.apply(S.ProcessStarted(7), now=0.0)
    assert command.status(1.0) is None
    assert command.status(12.0) == ("waiting for output · 12s", "information", "waiting for output")
    assert command.middle(12.0) == "sleep 30\n\nwaiting for output · 12s"
    command.output_seen(12.5)
    assert command.status(13.0) is None


def test_exit_status_follows_the_command() -> None:
    assert describe_exit(0, False) == "exited with status 0"
    assert describe_exit(-9, False) == "killed by SIGKILL"
    assert describe_exit(-15, True) == "stopped by you"
    for events, code in [([S.ProcessStarted(1), S.ProcessExited(3), S.OutputClosed()], 3),
                         ([S.ProcessStarted(1), S.ProcessExited(-9), S.OutputClosed()], 137),
                         ([S.CannotStart("x", "nope")], 127),
                         ([S.ProcessStarted(1)], 143)]:  # quitting while it runs stops it
        state = SourceState("command")
        for event in events:
            state.apply(event, now=0.0)
        assert state.exit_status(quitting=True) == code
    assert SourceState("file").exit_status(quitting=True) == 0


def test_a_file_last_written_long_ago_has_settled_and_one_that_grows_has_not() -> None:
    import time

    from cctv.viewer.source_state import SETTLED_AFTER_S

    old = SourceState("file")
    old.apply(S.Lines([]), 100.0)
    old.output_seen(100.0)
    old.apply(S.HistoryRead(12, modified=time.time() - 400 * 86400), 100.0)
    assert old.settled(100.0)  # a year-old session is not "requesting" any more

    fresh = SourceState("file")
    fresh.output_seen(100.0)
    fresh.apply(S.HistoryRead(12, modified=time.time()), 100.0)
    assert not fresh.settled(100.0 + SETTLED_AFTER_S - 1)
    assert fresh.settled(100.0 + SETTLED_AFTER_S + 1)
    fresh.output_seen(500.0)  # it grew: live again
    assert not fresh.settled(500.0 + 1)

    for kind in ("pipe", "command"):  # only a file can be asked how old it is
        other = SourceState(kind)
        other.output_seen(100.0)
        assert not other.settled(100.0 + 10 * SETTLED_AFTER_S)
