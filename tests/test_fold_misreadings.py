"""Misreadings of issue #23, each on a real recording: what the fold records,
and what a screen then draws of it.

Where no recording holds the case, the test takes a real row and changes
the one field the case is about, and says so."""

from __future__ import annotations

import msgspec
from rich.console import Console

from cctv.reducer.decode import decode_line
from cctv.reducer.fold import Session
from cctv.reducer.state import MAIN, HookItem, Item
from cctv.reducer.summary import summarize
from cctv.widgets.cards import Palette, RenderContext, render_item
from conftest import FIXTURES, fold_file

CONSOLE = Console(width=120, color_system="truecolor")
REAL = "public/claude-code-log/real_projects/"
IDEAS = REAL + "-experiments-ideas/03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl"
HOOKS_ON_DISK = "captures/projects/-home-ada-src-demo/142bb34b-89e4-4e11-b4ed-b3397e45f6d4.jsonl"


def drawn(session: Session, item: Item, width: int = 120) -> str:
    """The item's first row as a screen shows it."""
    ctx = RenderContext(session, CONSOLE, Palette())
    return render_item(item, width, False, ctx)[0].text.rstrip()


def rows(path: str) -> list[dict]:
    return [msgspec.json.decode(line) for line in (FIXTURES / path).read_bytes().splitlines()]


def fold_rows(rows: list[dict]) -> Session:
    session = Session()
    for n, row in enumerate(rows, 1):
        session.apply(decode_line(msgspec.json.encode(row), n))
    return session


# --- hooks ----------------------------------------------------------------------------------


def test_hook_progress_rows_ran_and_are_never_drawn_running() -> None:
    # 03eb5929 (CLI 2.1.42): 11 progress/hook_progress rows (SessionStart:startup on line 2,
    # PostToolUse:Bash on 8, Stop on 15, 22, 29…), no outcome recorded; its last screen
    # had "⚓ Stop ◐ running" right above "↳ stop hooks · 1 ran"
    s = fold_file(IDEAS).session
    hooks = [i for i in s.main.items if isinstance(i, HookItem)]
    assert len(hooks) == 11 and {h.hook.status for h in hooks} == {"ran"}
    chips = [drawn(s, h) for h in hooks]
    assert not [c for c in chips if "running" in c or "◐" in c]
    assert chips[0].startswith("⚓ SessionStart:startup · ran")
    assert summarize(s)["hooks"] == {"runs": 11, "failed": 0, "stop_summaries": 7}


def test_a_hook_that_timed_out_or_exited_non_zero_failed() -> None:
    # 07_hooks on disk (142bb34b, CLI 2.1.328) line 26: a hook_success attachment of the
    # PreToolUse:Bash hook (exitCode 0, durationMs 3014). No recording holds a timeout:
    # the same row as the CLI writes one (type hook_cancelled, timedOut true, timeoutMs)
    # is a failed run; cancelled without timedOut, the user's interrupt; a non-zero exit
    # (hook_non_blocking_error, exitCode 1) failed
    path = HOOKS_ON_DISK
    real = next(r for r in rows(path) if r.get("type") == "attachment"
                and r["attachment"].get("hookName") == "PreToolUse:Bash")
    assert real["attachment"]["type"] == "hook_success"

    def folded(**changes) -> str:
        row = dict(real, attachment=dict(real["attachment"], **changes))
        (hook,) = fold_rows([row]).hooks.values()
        return hook.status

    assert folded() == "done"
    assert folded(type="hook_cancelled", timedOut=True, timeoutMs=3000) == "failed"
    assert folded(type="hook_cancelled") == "interrupted"
    assert folded(type="hook_non_blocking_error", exitCode=1) == "failed"
    # the wire: 07_hooks line 22/23, the Stop hook exits 2 (outcome error)
    s = fold_file("captures/stream/07_hooks.jsonl").session
    stop = s.hooks["d4cf0d3a-0cb1-4e2a-ab16-3939cc427f02"]
    assert (stop.status, stop.exit_code) == ("failed", 2)
    assert summarize(s)["hooks"]["failed"] == 1
    assert "✗ exit 2" in drawn(s, stop.item)
