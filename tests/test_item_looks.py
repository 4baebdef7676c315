"""No item's look changes without its version changing: a card drawn once and
kept by ``(item, version)`` — as the transcript's row cache keeps it — is what
a fresh render draws, after every frame of every recording where a card shows
another object's state (a sub-agent's progress, a task's status and tokens).

That is what lets a view redraw from its own agent's change records alone: the
fold raises the version of the card of a call whenever the sub-agent or task
it started changes (:meth:`reducer.fold.core.Core.agent_changed`,
:meth:`~reducer.fold.core.Core.task_changed`)."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from cctv.reducer.fold import Session
from cctv.reducer.replay.pool import signature
from cctv.reducer.state import Item
from cctv.viewer.replay.recording import load_recording
from cctv.widgets.cards import Palette, RenderContext, render_item

from conftest import FIXTURES

CONSOLE = Console(width=200, color_system="truecolor")
WIDTH = 100


@cache
def _shows_other_state(path: Path) -> bool:
    """Whether the final state of ``path`` has a card that can show another
    object's state: a call that started a sub-agent, became a task or went
    to the background."""
    replay = load_recording(path).replay()
    session = replay._new_session()
    for index in range(len(replay)):
        replay._apply(session, index)
    return any(c.subagent or c.task_id or c.background for c in session.calls.values())


RECORDINGS = [p for p in sorted(FIXTURES.rglob("*.jsonl"))
              if "subagents" not in p.parts and _shows_other_state(p)]


class _Reads:
    """A session that notes whether a renderer read it."""

    def __init__(self, session: Session) -> None:
        self._session = session
        self.read = False

    def __getattr__(self, name: str) -> Any:
        self.read = True
        return getattr(self._session, name)


def _check(path: Path) -> int:
    """After every frame of ``path``, every item whose version did not change
    draws as it did (collapsed and expanded); returns how many times an item
    was drawn again at the same version.

    An item whose drawing does not read the session draws from its unit
    alone (the item and the call, hook run or turn it holds): that its unit
    did not change (field by field, as :func:`~reducer.replay.pool.signature`
    compares) is enough, and cheaper than drawing it again. Whether it reads
    the session is seen once per version, from the collapsed drawing (a
    card's body is made whole either way, then folded); one that does is
    drawn again, both ways, after every frame."""
    replay = load_recording(path).replay()
    session = replay._new_session()
    reads = _Reads(session)
    ctx = RenderContext(reads, CONSOLE, Palette())  # type: ignore[arg-type]
    kept: dict[int, tuple[int, Any, Item]] = {}
    """id(item) → (version, its rows both ways if drawing it read the session,
    else its unit; the item, kept alive so that ids stay unique)."""
    redrawn = 0
    for index in range(len(replay)):
        replay._apply(session, index)
        for agent in session.agents.values():
            for item in agent.items:
                old = kept.get(id(item))
                same = old is not None and old[0] == item.version
                if same and type(old[1]) is tuple:
                    assert signature(item) == old[1], (index + 1, item)
                    continue
                reads.read = False
                collapsed = render_item(item, WIDTH, False, ctx)
                if not reads.read:
                    assert not same, (index + 1, item)  # (it read the session before)
                    kept[id(item)] = (item.version, signature(item), item)
                    continue
                rows = [collapsed, render_item(item, WIDTH, True, ctx)]
                if same:
                    redrawn += 1
                    assert rows == old[1], (
                        f"frame {index + 1}: {type(item).__name__} {agent.id or 'main'}"
                        f"[{item.index}] looks different at version {item.version}:\n"
                        + "\n".join(s.text for s in old[1][1]) + "\n→\n"
                        + "\n".join(s.text for s in rows[1]))
                kept[id(item)] = (item.version, rows, item)
    return redrawn


@pytest.mark.parametrize("path", RECORDINGS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_a_card_kept_by_its_version_is_what_a_fresh_render_draws(path: Path) -> None:
    _check(path)


def test_the_recordings_hold_cards_that_show_sub_agents_and_tasks() -> None:
    names = {p.name for p in RECORDINGS}
    assert {"05_subagent.jsonl", "06_background_bash.jsonl", "subagent.jsonl",
            "backgrounded_bash_lifecycle.jsonl", "stop_task.jsonl",
            "eb000000-0000-4000-8000-000000000001.jsonl"} <= names
    assert len(RECORDINGS) >= 25
    # cards that read a sub-agent's or a task's state, drawn again at every frame
    stream = FIXTURES / "captures" / "stream"
    assert _check(stream / "05_subagent.jsonl") > 0
    assert _check(stream / "06_background_bash.jsonl") > 0
