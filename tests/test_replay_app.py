"""``cctv replay`` in the app: paused at a frame, stepping back over a task's
end, the inspector, the timeline, jumps, playing on a fake clock."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from conftest import FIXTURES
from cctv.viewer.replay.app import ReplayApp
from cctv.viewer.replay.recording import load_recording
from cctv.viewer.screens.session import SessionScreen
from cctv.widgets.status_bar import StatusBar
from cctv.widgets.tasks_panel import TasksPanel
from cctv.widgets.timeline import ReplayTimeline

STREAM = FIXTURES / "captures" / "stream"
BG = STREAM / "06_background_bash.jsonl"
PROJECT = FIXTURES / "captures" / "projects" / "-home-ada-src-demo"
SUBAGENT_SESSION = PROJECT / "d7acffbd-7cff-4056-82e8-4364dc8df14a.jsonl"


class FakeClock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def _app(path: Path, line: int | None = None, **kwargs) -> ReplayApp:
    """A replay app with every checkpoint built up front (deterministic)."""
    rec = load_recording(path)
    replay = rec.replay(interval=4)
    list(replay.build_checkpoints())
    start = replay.position_of_line(line) if line else 1
    return ReplayApp(rec, replay=replay, start=start, build_checkpoints=False, label=path.name,
                     **kwargs)


def _text(app: ReplayApp, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).content)


def _tasks_title(app: ReplayApp) -> str:
    return str(app.screen.query_one("#tasks-title", Static).content)


def _task_end(app: ReplayApp) -> int:
    """The 1-based frame where the first background shell completes."""
    return next(i + 1 for i, f in enumerate(app.shown.replay.frames)
                if f.entry.kind_key == "system/task_updated" and b'"completed"' in f.entry.raw)


async def test_replay_opens_paused_at_the_chosen_line() -> None:
    app = _app(BG, line=9)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        bar = _text(app, "#replay-bar")
        assert bar.startswith("‖ paused 1× · frame 9/15 · line 9")
        assert "pace: derived from duration_ms" in bar and "skip idle: on" in bar
        assert app.shown.replay.session.lines == 9
        assert "1 turn" in app.screen.query_one(StatusBar).text


async def test_stepping_back_over_a_task_end_shows_it_running_again() -> None:
    app = _app(BG)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("t")
        end = _task_end(app)
        app.go_to(end)
        await pilot.pause()
        assert "0 running · 1 finished" in _tasks_title(app)
        inspector = _text(app, "#inspector-changes")
        assert "task b0q8… running → done" in inspector
        await pilot.press("left")
        await pilot.pause()
        assert app.shown.replay.position == end - 1
        assert "1 running · 0 finished" in _tasks_title(app)
        assert app.screen.query_one(TasksPanel).option_list.get_option(
            "task:b0q8m16pb").prompt.plain.startswith("◐ Run a short job")
        await pilot.press("right")
        await pilot.pause()
        assert "0 running · 1 finished" in _tasks_title(app)


async def test_the_transcript_shows_the_items_of_the_frame_backward_too() -> None:
    from cctv.widgets.transcript import TranscriptView

    app = _app(STREAM / "10_compact_manual.jsonl")
    async with app.run_test(size=(120, 36)) as pilot:
        view = app.screen.query_one(TranscriptView)
        await pilot.press("end")
        await pilot.pause()
        at_end = [type(i).__name__ for i in view._index.items]
        assert "CompactionItem" in at_end and view._index.items == app.shown.replay.session.main.items
        compaction = app.shown.replay.markers.by_kind["compaction"][0] + 1
        app.go_to(compaction - 1)  # a restore: the view is rebound to the earlier state
        await pilot.pause()
        assert view.session is app.shown.replay.session
        assert view._index.items == app.shown.replay.session.main.items
        assert "CompactionItem" not in [type(i).__name__ for i in view._index.items]
        assert view.virtual_size.height == view._index.total
        await pilot.press("end")
        await pilot.pause()
        assert [type(i).__name__ for i in view._index.items] == at_end


async def test_home_end_and_marker_jumps() -> None:
    app = _app(BG, line=5)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("end")
        assert app.shown.replay.position == len(app.shown.replay)
        await pilot.press("home")
        assert app.shown.replay.position == 1
        await pilot.press("a")  # next task event
        first_task = app.shown.replay.markers.by_kind["task"][0] + 1
        assert app.shown.replay.position == first_task
        await pilot.press("a")
        assert app.shown.replay.position == app.shown.replay.markers.by_kind["task"][1] + 1
        await pilot.press("A")
        assert app.shown.replay.position == first_task
        await pilot.press("c")  # next tool call
        assert app.shown.replay.position == app.shown.replay.markers.next("tool", first_task - 1) + 1
        await pilot.press("z")  # there is no compaction: stays, says so
        position = app.shown.replay.position
        assert app.shown.replay.position == position


async def test_playing_follows_the_paced_clock() -> None:
    clock = FakeClock()
    app = _app(BG, pace_clock=clock, speed=2.0)
    async with app.run_test(size=(120, 36)) as pilot:
        offsets = app.shown.replay.timeline.paced(True)[0]
        await pilot.press("space")
        assert app.shown.playing
        target = 6  # advance the clock to frame 6's paced time at 2×
        clock.t += (offsets[target - 1] - offsets[0]) / 2.0
        app._play_tick()
        assert app.shown.replay.position == target
        await pilot.press("plus")
        assert app.shown.speed == 4.0
        clock.t += 1000
        app._play_tick()
        assert app.shown.replay.position == len(app.shown.replay) and not app.shown.playing
        await pilot.pause()
        assert _text(app, "#replay-bar").startswith("‖ paused 4×")


async def test_skip_idle_toggle_is_shown_on_the_bar() -> None:
    app = _app(BG)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("i")
        await pilot.pause()
        assert "skip idle: off" in _text(app, "#replay-bar")
        await pilot.press("i")
        await pilot.pause()
        assert "skip idle: on" in _text(app, "#replay-bar")


async def test_timeline_click_seeks() -> None:
    app = _app(BG)
    async with app.run_test(size=(120, 36)) as pilot:
        timeline = app.screen.query_one(ReplayTimeline)
        assert timeline.total == 15
        x = 1 + timeline.column_of(10)
        await pilot.click(ReplayTimeline, offset=(x, 0))
        await pilot.pause()
        assert app.shown.replay.position == timeline.position_at(x) == 10


async def test_sub_agent_drill_down_shows_the_state_at_the_frame_and_closes_before_it() -> None:
    app = _app(SUBAGENT_SESSION)
    async with app.run_test(size=(120, 36)) as pilot:
        first = next(i + 1 for i, f in enumerate(app.shown.replay.frames) if f.agent is not None)
        agent = app.shown.replay.frames[first - 1].agent
        app.go_to(first + 1)
        await pilot.pause()
        app.open_agent(agent)
        await pilot.pause()
        assert isinstance(app.screen, SessionScreen) and app.screen.agent_id == agent
        items = len(app.shown.replay.session.agents[agent].items)
        await pilot.press("right")
        await pilot.pause()
        assert app.screen.agent_id == agent  # the replay keys work on the sub-agent screen
        app.go_to(1)  # back before the sub-agent existed: its screen closes
        await pilot.pause()
        assert app.screen.agent_id != agent
        assert items >= 1


async def test_search_box_gets_its_keys() -> None:
    app = _app(BG, line=5)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("slash", "a", "space", "e", "left")
        await pilot.pause()
        assert app.shown.replay.position == 5  # typed into the box, not replay keys


def test_snapshot_replay_paused_on_a_task_end(snap_compare) -> None:
    app = _app(BG)

    async def run_before(pilot) -> None:
        await pilot.press("t")
        app.go_to(_task_end(app))
        await pilot.pause()

    assert snap_compare(app, terminal_size=(120, 36), run_before=run_before)


def test_snapshot_replay_80x24_light(snap_compare) -> None:
    app = _app(STREAM / "10_compact_manual.jsonl")

    async def run_before(pilot) -> None:
        app.theme = "textual-light"
        app.go_to(app.shown.replay.markers.by_kind["compaction"][0] + 1)
        await pilot.pause()

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


async def test_checkpoints_are_built_by_the_worker_while_the_user_steps() -> None:
    rec = load_recording(STREAM / "10_compact_manual.jsonl")
    replay = rec.replay(interval=4)
    app = ReplayApp(rec, replay=replay, label="x")
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("right", "right")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert replay.checkpoints.complete and len(replay.checkpoints) >= 3
        assert "indexing" not in _text(app, "#replay-bar")
        await pilot.press("end", "left", "left")
        assert replay.position == len(replay) - 2
        assert app._builder_pid is None


async def test_a_big_file_opens_on_its_head_and_takes_the_rest_behind() -> None:
    path = STREAM / "06_background_bash.jsonl"
    rec = load_recording(path, head_bytes=5000)
    assert not rec.complete and len(rec.frames) < 15
    app = ReplayApp(rec, label=path.name)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("right")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert rec.complete and len(app.shown.replay) == 15
        assert app.screen.query_one(ReplayTimeline).total == 15
        assert app.shown.replay.position == 2
        await app.workers.wait_for_complete()  # the checkpoints, after the rest
        assert app.shown.replay.checkpoints.complete
        await pilot.press("end", "left")
        assert app.shown.replay.position == 14
        assert "frame 14/15" in _text(app, "#replay-bar")


def test_the_bar_says_the_checkpoints_are_being_taken_again_until_every_one_is() -> None:
    """The builder's second pass (checkpoints taken again with the final units)
    takes seconds on a big file: the bar counts it, then says nothing."""
    from cctv.viewer.replay.screen import bar_text
    from cctv.reducer.replay.checkpoints import PLAIN, POOL, POOLED

    rec = load_recording(STREAM / "10_compact_manual.jsonl")
    replay = rec.replay(interval=4)
    app = ReplayApp(rec, replay=replay, build_checkpoints=False, label="x")
    cps = replay.checkpoints
    said: list[str] = []
    for kind, position, data in replay.checkpoint_pieces(cps):
        cps.take(kind, position, data)
        said.append(bar_text(app.shown))
        if kind == PLAIN:
            assert f"indexing {len(cps)} checkpoints…" in said[-1]
        elif kind == POOL:
            assert f"making seeks faster (0/{len(cps)})…" in said[-1]
        else:
            assert kind == POOLED
            assert f"making seeks faster ({cps.pooled_count}/{len(cps)})…" in said[-1]
    assert cps.pooled_count == len(cps) >= 3
    cps.pooled = True  # what the builder says when it is done
    assert "indexing" not in bar_text(app.shown) and "seeks" not in bar_text(app.shown)
    assert bar_text(app.shown, width=80).endswith("pace")  # nothing about checkpoints when narrow


HOOK_DENSE = FIXTURES / "public" / "claude-code-log" / "real_projects" / "-experiments-worktrees" \
    / "ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl"
"""A real session with hooks around its tool calls: 48 hook frames, 3 turns, 373 frames."""


async def test_a_hook_dense_timeline_draws_density_and_the_position_stands_out() -> None:
    """Hooks are bars as high as how many fall in a column (the busiest one the
    highest), not a wall of ``h``; turns still show through them; the position
    is the one ``▼``, wherever it is."""
    from cctv.widgets.timeline import LEVELS

    app = _app(HOOK_DENSE)
    async with app.run_test(size=(120, 36)) as pilot:
        replay = app.shown.replay
        timeline = app.screen.query_one(ReplayTimeline)
        width = timeline.size.width - 2
        hooks = [0] * width
        turns = set()
        for index, kinds in replay.markers.at.items():
            col = min(index * width // len(replay), width - 1)
            hooks[col] += kinds.count("hook")
            if "turn" in kinds:
                turns.add(col)
        for position in (1, len(replay) // 3, len(replay) // 2, len(replay)):
            app.go_to(position)
            await pilot.pause()
            strip = timeline.render_line(0).text
            at = timeline.column_of(position) + 1
            assert strip.count("▼") == 1 and strip[at] == "▼", position
        strip = timeline.render_line(0).text[1:]
        assert "h" not in strip
        assert all(strip[c] == "│" for c in turns if c != timeline.column_of(len(replay)))
        busiest = max(hooks)
        drawn = {strip[c] for c, n in enumerate(hooks) if n and c not in turns}
        assert len(drawn & set(LEVELS)) >= 2  # a profile, not one glyph
        assert all(strip[c] == LEVELS[-1] for c, n in enumerate(hooks)
                   if n == busiest and c not in turns and c != timeline.column_of(len(replay)))


def test_snapshot_replay_hook_dense_timeline(snap_compare) -> None:
    app = _app(HOOK_DENSE)

    async def run_before(pilot) -> None:
        app.go_to(len(app.shown.replay) // 2)
        await pilot.pause()

    assert snap_compare(app, terminal_size=(100, 30), run_before=run_before)


async def test_the_footer_ends_with_the_palette_key_at_any_width() -> None:
    """The compact footer's keys run on under the palette key: that key must
    reach the last cell, or a stray character of them shows there."""
    from textual.widgets import Footer
    from textual.widgets._footer import FooterKey

    for width in (60, 80, 100, 120, 160):
        app = _app(STREAM / "10_compact_manual.jsonl")
        async with app.run_test(size=(width, 24)) as pilot:
            await pilot.pause()
            footer = app.screen.query_one(Footer)
            [palette] = [k for k in footer.query(FooterKey) if k.has_class("-command-palette")]
            assert palette.region.right == footer.region.right == width, width
