"""``$`` in a session: its cost with where it comes from, its context turn by
turn with the compactions marked, and the tree of its agents; the context
series in ``summary --json``."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from textual.widgets import Sparkline, Static, Tree

from cctv.reducer.summary import summarize
from cctv.viewer.app import CctvApp
from cctv.viewer.loader import load_path
from cctv.viewer.screens.spend import SpendScreen, compaction_marks
from cctv.viewer.sources import FileTail

from conftest import FIXTURES, wait_for

CAPTURE = FIXTURES / "captures" / "projects" / "-home-ada-src-demo"
SUBAGENT_SESSION = "d7acffbd-7cff-4056-82e8-4364dc8df14a"
COMPACTED = FIXTURES / "captures" / "stream" / "10_compact_manual.jsonl"
REAL = FIXTURES / "public" / "claude-code-log" / "real_projects"


def test_each_turns_context_is_what_its_last_request_sent() -> None:
    path = max((p for p in REAL.glob("*/*.jsonl") if not p.name.startswith("agent-")),
               key=lambda p: p.stat().st_size)
    session = load_path(path).session
    data = summarize(session)
    assert data["context_window"] == 200_000
    points = data["context"]
    assert len(points) == session.model_turns
    last_main = [r for r in session.requests.values() if r.agent == ""]
    by_turn: dict[int, int] = {}
    for r in last_main:
        by_turn[r.turn] = r.tokens.input + r.tokens.cache_read + r.tokens.cache_write_5m \
            + r.tokens.cache_write_1h
    assert [p["tokens"] for p in points] == list(by_turn.values())
    final = json.loads([l for l in path.read_text(encoding="utf-8").splitlines()
                        if '"type":"assistant"' in l and '"isSidechain":false' in l][-1])
    u = final["message"]["usage"]
    assert points[-1]["tokens"] == u["input_tokens"] + u["cache_read_input_tokens"] \
        + u["cache_creation_input_tokens"]
    assert points[-1]["share"] == round(points[-1]["tokens"] / 200_000, 4)
    assert not any(p["compacted"] for p in points)


def test_a_compaction_marks_the_turn_after_it() -> None:
    data = summarize(load_path(COMPACTED).session)
    assert [p["compacted"] for p in data["context"]] == [False, True]
    assert len(data["compactions"]) == 1


def test_compaction_marks_sit_under_their_points() -> None:
    from cctv.reducer.context import ContextPoint

    points = [ContextPoint(i, 10, None, i == 2) for i in range(4)]
    assert compaction_marks(points, 8) == "    ▲   "
    assert compaction_marks(points, 4) == "  ▲ "
    assert compaction_marks([], 5) == "     "


async def test_dollar_shows_the_cost_context_and_agent_tree(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    shutil.copytree(CAPTURE, project)
    app = CctvApp(FileTail(project / f"{SUBAGENT_SESSION}.jsonl", follow=False), clock=None)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for(pilot, lambda: app.shown.ended is not None and len(app.shown.session.agents) == 2)
        await pilot.press("dollar_sign")
        await wait_for(pilot, lambda: isinstance(app.screen, SpendScreen))
        screen = app.screen
        cost = str(screen.query_one("#spend-cost", Static).render())
        assert "$0.0287" in cost and "recorded by the CLI" in cost and "~" not in cost
        tree = screen.query_one(Tree)
        root = tree.root
        assert "main" in str(root.label) and "with its agents ~$0.0287" in str(root.label)
        (child,) = root.children
        label = str(child.label)
        assert re.search(r"general-purpose .*Survey the demo project.*~\$0\.0167", label)
        assert "2 tool calls" in label
        assert screen.query_one(Sparkline).data == [6000 // 5]
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, SpendScreen))
