"""``cctv replay PATH``: the viewer over a :class:`~viewer.replay.controller.ReplayController`.

Screens are told the way the live viewer tells them: the change records of a
step forward, or a rebind of the transcript views after a restore.
Checkpoints are built in a thread worker while the user already steps.

The collector: the app holds a million long-lived objects (the decoded
frames, the state, the restore made ahead). A full collection walks all of
them (0.3–1 s at 100 MB, holding the interpreter lock wherever it runs). So
a restore, here or made ahead, is built with the collector off and moved to
its oldest generation unexamined (:mod:`reducer.replay.player`); the states
a seek leaves behind, and a restore made ahead that was not used, are freed
a piece at a time in a worker after the screen is drawn
(:meth:`~reducer.replay.Replay.free_retired`). Workers pause while the UI
thread handles a seek, so a key never shares the interpreter lock with them.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Callable
from functools import partial

from textual import work
from textual.binding import Binding
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.timer import Timer
from textual.widgets import Input
from textual.worker import get_current_worker

from cctv.reducer.replay import MARKER_KINDS, MarkerKind, Replay
from cctv.reducer.state import MAIN

from ..messages import Aim, Seek
from ..screens.session import SessionScreen
from ..viewer_app import ViewerApp
from .builder import build_checkpoints
from .controller import MARKER_NAMES, ReplayController
from .recording import Recording, RestOfRecording
from .screen import ReplayScreen

__all__ = ["ReplayApp", "ReplayCommands"]

PLAY_TICK_S = 1 / 30
"""How often a playing replay looks at the clock."""
SPARE_AFTER_S = 0.15
"""How long the cursor rests before the restore a step back needs is made ahead."""

_MARKER_KEYS: dict[MarkerKind, tuple[str, str, str]] = {
    # kind: (next key, previous key, shown as)
    "turn": ("right_square_bracket", "left_square_bracket", "] ["),
    "tool": ("c", "C", "c C"),
    "error": ("e", "E", "e E"),
    "hook": ("h", "H", "h H"),
    "task": ("a", "A", "a A"),
    "compaction": ("z", "Z", "z Z"),
}


def _bindings() -> list[Binding]:
    out = [
        Binding("space", "play_pause", "Play/pause", key_display="space", priority=True,
                id="replay.play"),
        Binding("right", "step(1)", "Step", key_display="→", priority=True, id="replay.forward"),
        Binding("left", "step(-1)", "Back", key_display="←", priority=True, id="replay.back"),
        Binding("home", "first_frame", "First frame", show=False, priority=True,
                id="replay.first"),
        Binding("end", "last_frame", "Last frame", show=False, priority=True, id="replay.last"),
        Binding("plus,equals_sign", "speed(1)", "Faster", key_display="+", priority=True,
                id="replay.faster"),
        Binding("minus", "speed(-1)", "Slower", key_display="-", priority=True,
                id="replay.slower"),
        Binding("i", "toggle_idle", "Skip idle", priority=True, id="replay.idle"),
        Binding("f", "toggle_inspector", "Inspector", priority=True, id="replay.inspector"),
    ]
    for kind in MARKER_KINDS:
        nxt, prev, _ = _MARKER_KEYS[kind]
        name = MARKER_NAMES[kind]
        out.append(Binding(nxt, f"jump('{kind}', 1)", f"Next {name}", show=False, priority=True,
                           id=f"replay.next_{kind}"))
        out.append(Binding(prev, f"jump('{kind}', -1)", f"Previous {name}", show=False,
                           priority=True, id=f"replay.previous_{kind}"))
    return out


class ReplayCommands(Provider):
    """The replay's actions in the command palette."""

    def _commands(self) -> list[tuple[str, str, Callable[[], object]]]:
        app: ReplayApp = self.app  # type: ignore[assignment]
        out: list[tuple[str, str, Callable[[], object]]] = [
            ("Replay: play / pause", "Play at the recorded pace, or stop", app.action_play_pause),
            ("Replay: first frame", "Go back to the start", app.action_first_frame),
            ("Replay: last frame", "Go to the end", app.action_last_frame),
            ("Replay: faster", "Double the speed (up to 64×)", partial(app.action_speed, 1)),
            ("Replay: slower", "Halve the speed (down to 0.25×)", partial(app.action_speed, -1)),
            ("Replay: skip idle gaps on / off", "Shorten gaps longer than a few seconds",
             app.action_toggle_idle),
        ]
        for kind in MARKER_KINDS:
            name = MARKER_NAMES[kind]
            keys = _MARKER_KEYS[kind][2]
            out.append((f"Replay: next {name}", f"Jump to the next {name} frame ({keys})",
                        partial(app.action_jump, kind, 1)))
            out.append((f"Replay: previous {name}", f"Jump to the previous {name} frame",
                        partial(app.action_jump, kind, -1)))
        return out

    async def discover(self) -> Hits:
        for title, help_text, callback in self._commands():
            yield DiscoveryHit(title, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, callback in self._commands():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), callback, help=help_text)


class ReplayApp(ViewerApp[ReplayController]):
    """The viewer over a recording, at one frame of it at a time."""

    COMMANDS = ViewerApp.COMMANDS | {ReplayCommands}
    BINDINGS = _bindings()

    shown: ReplayController

    def __init__(self, recording: Recording, *, replay: Replay | None = None,
                 start: int = 1, speed: float = 1.0, skip_idle: bool = True,
                 build_checkpoints: bool = True, fork_builder: bool = True,
                 label: str | None = None,
                 pace_clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(ReplayController(recording, replay=replay, start=start, speed=speed,
                                          skip_idle=skip_idle, label=label,
                                          pace_clock=pace_clock), ticks=False)
        self._build = build_checkpoints
        self._fork = fork_builder
        self._builder_pid: int | None = None
        self._spare_timer: Timer | None = None
        self._spare_busy = False

    def on_mount(self) -> None:
        controller = self.shown
        self.set_interval(PLAY_TICK_S, self._play_tick)
        if controller.catching_up is not None:
            self.catch_up(controller.catching_up)
        if not controller.recording.complete:
            self.read_rest()
        elif self._build:
            self.build_checkpoints()
        self.push_screen(ReplayScreen(controller))
        self._start_panel_timers()

    # --- workers ---------------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="catch-up", exit_on_error=False)
    def catch_up(self, start: int) -> None:
        """Fold to the frame before ``start`` off the UI thread (the fold a seek
        there would do), then go there unless the user has moved meanwhile."""
        controller = self.shown
        try:  # (stops when the user goes elsewhere meanwhile)
            controller.replay.fold_spare(start - 1, controller.catch_up_dropped(start))
        finally:
            with contextlib.suppress(RuntimeError):  # the app closed meanwhile
                self.call_from_thread(self._caught_up, start)

    def _caught_up(self, start: int) -> None:
        if self.shown.caught_up(start):
            self._go(start)  # (takes the fold the worker made)
        self.shown.catch_up_over(start)
        self._dirty = True
        self._flush_panels()

    @work(thread=True, exclusive=True, group="read-rest", exit_on_error=False)
    def read_rest(self) -> None:
        """Decode the rest of a big file while the user already steps through its head."""
        rest = self.shown.recording.read_rest()
        self.call_from_thread(self._took_rest, rest)

    def _took_rest(self, rest: RestOfRecording) -> None:
        controller = self.shown
        controller.recording.take_rest(rest, controller.replay)
        for screen in self.screen_stack:
            if isinstance(screen, ReplayScreen):
                screen.markers_changed()
        if self._build:
            self.build_checkpoints()
        self._dirty = True
        self._flush_panels()

    @work(thread=True, exclusive=True, group="checkpoints", exit_on_error=False)
    def build_checkpoints(self) -> None:
        """Checkpoint the fold in the background (a child process pickles, so
        the UI never waits on it); the bar shows the progress."""
        worker = get_current_worker()

        def on_child(pid: int | None) -> None:
            self._builder_pid = pid

        for _ in build_checkpoints(self.shown.replay, lambda: worker.is_cancelled,
                                   use_fork=self._fork, on_child=on_child):
            self._dirty = True
        self._dirty = True
        if not worker.is_cancelled:
            with contextlib.suppress(RuntimeError):  # the app closed meanwhile
                self.call_from_thread(self._spare_soon)

    def on_unmount(self) -> None:  # (and ViewerApp.on_unmount after it)
        self.shown.closing = True
        self.shown.replay.stop_spare()  # a restore made ahead stops at its next burst
        pid = self._builder_pid
        if pid is not None:  # stop the checkpoint builder now, not when it is done
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)

    # --- moving -----------------------------------------------------------------------------

    def on_seek(self, message: Seek) -> None:
        self.go_to(message.position)

    def go_to(self, position: int) -> None:
        """Show the state as of frame ``position`` (1-based), forward or back.
        A seek expected to take long (:meth:`ReplayController.takes_long`)
        folds in a worker, and the bar says where it is going meanwhile; the
        UI stays live. Steps not taken yet are dropped: this is where the
        user went after them."""
        controller = self.shown
        controller.steps_pending = 0
        if controller.takes_long(position):
            if controller.catching_up != position:  # (else a worker already goes there)
                controller.go_later(position)
                self._dirty = True
                self._flush_panels()
                self.catch_up(position)
            return
        self._go(position)

    def _go(self, position: int) -> None:
        controller = self.shown
        result = controller.seek(position)
        if result.restored or result.many:
            if result.restored:
                self._drop_missing_agents()
                # freeing the state left behind takes ~150 ms at 100 MB: in a
                # worker, a piece at a time, after the screen is drawn
                self.call_after_refresh(self.free_retired)
            for screen in self.screen_stack:  # (mounted or not: none keeps the old state)
                if isinstance(screen, SessionScreen):
                    screen.rebind(controller.session, None if result.restored else result.changes)
        else:
            self._broadcast(result.changes)
        self._dirty = True
        self._flush_panels()
        if not controller.playing:
            self._spare_soon()

    @work(thread=True, group="free", exit_on_error=False)
    def free_retired(self) -> None:
        """Free the states seeks left behind (:meth:`Replay.free_retired`) a
        piece at a time, waiting between pieces while the UI thread handles a
        seek."""
        self.shown.replay.free_retired(self.shown.wait_for_ui)

    def _drop_missing_agents(self) -> None:
        """Close sub-agent screens whose agent does not exist yet at this frame."""
        while isinstance(self.screen, SessionScreen) and self.screen.agent_id != MAIN \
                and self.screen.agent_id not in self.shown.session.agents:
            self.pop_screen()
            self.notify("that sub-agent has not started yet at this frame", severity="warning")

    # --- the restore a step back needs, made ahead ----------------------------------------

    def on_aim(self, message: Aim) -> None:
        self.aim_at(message.position)

    def aim_at(self, position: int | None) -> None:
        """The pointer rests on the timeline at ``position`` (``None``: it left):
        once it has rested there a moment, the restore made ahead is the one a
        click there needs (:attr:`Replay.aim`), so the click only folds a few frames."""
        self.shown.replay.aim = position
        if not self.shown.playing:
            self._spare_soon()

    def _spare_soon(self) -> None:
        """Once the user rests on a frame, restore in a worker the checkpoint
        a step back from it needs (a seek that finds it only folds)."""
        if self._spare_timer is not None:
            self._spare_timer.stop()
        self._spare_timer = self.set_timer(SPARE_AFTER_S, self._start_spare)

    def _start_spare(self) -> None:
        self._spare_timer = None
        if not self._spare_busy and self.shown.wants_spare():
            self._spare_busy = True
            self.prepare_spare()

    @work(thread=True, group="spare", exit_on_error=False)
    def prepare_spare(self) -> None:
        """Restore what a step back needs, letting the UI run meanwhile; again
        while the cursor has moved on to another checkpoint's span."""
        controller = self.shown
        try:
            while not controller.playing and controller.replay.prepare_spare():
                pass
            controller.replay.free_retired(controller.wait_for_ui)  # a restore made ahead it replaced
        finally:
            self._spare_busy = False

    # --- playing ------------------------------------------------------------------------------

    def _play_tick(self) -> None:
        controller = self.shown
        target = controller.due()
        if target is None:
            return
        if target > controller.replay.position:
            self.go_to(target)
        if controller.at_end:
            controller.playing = False
            self._dirty = True
            self._flush_panels()

    # --- actions ------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Replay keys work on the transcript screens (a sub-agent's too), not
        in the search box or on the help and raw screens (their keys go through there)."""
        if action in _REPLAY_ACTIONS:
            return isinstance(self.screen, SessionScreen) and not isinstance(self.focused, Input)
        return super().check_action(action, parameters)

    def action_play_pause(self) -> None:
        controller = self.shown
        if controller.playing:
            controller.playing = False
        else:
            if controller.at_end:
                self.go_to(1)
            controller.start_playing()
        self._dirty = True
        self._flush_panels()

    def action_step(self, delta: int) -> None:
        """``delta`` frames on or back, taken with the steps asked for before
        this one was handled: a held key queues presses faster than a step
        back restores a big session (~0.1 s), and the cursor then goes once
        to where they all lead, not once per press (which lagged for seconds
        after the key was let go)."""
        controller = self.shown
        controller.playing = False
        if not controller.steps_pending:
            self.call_later(self._take_steps)  # after the presses queued by now
        controller.steps_pending += delta

    def _take_steps(self) -> None:
        delta = self.shown.steps_pending
        if delta:
            self.go_to(max(self.shown.replay.position + delta, 1))

    def action_first_frame(self) -> None:
        self.shown.playing = False
        self.go_to(1)

    def action_last_frame(self) -> None:
        self.shown.playing = False
        self.go_to(len(self.shown.replay))

    def action_speed(self, direction: int) -> None:
        self.shown.change_speed(direction)
        self._dirty = True
        self._flush_panels()

    def action_toggle_idle(self) -> None:
        self.shown.toggle_idle()
        self._dirty = True
        self._flush_panels()

    def action_toggle_inspector(self) -> None:
        for screen in self.screen_stack:
            if isinstance(screen, ReplayScreen):
                screen.action_toggle_inspector()

    def action_jump(self, kind: MarkerKind, direction: int) -> None:
        found = self.shown.marker(kind, direction)
        if found is None:
            where = "after" if direction > 0 else "before"
            self.notify(f"no {MARKER_NAMES.get(kind, kind)} {where} this frame",
                        severity="warning", timeout=2)
            return
        self.shown.playing = False
        self.go_to(found)


_REPLAY_ACTIONS = frozenset({
    "play_pause", "step", "first_frame", "last_frame", "speed", "toggle_idle",
    "toggle_inspector", "jump",
})
