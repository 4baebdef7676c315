"""The command palette provider: every cctv action, the filters, and each sub-agent to open."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from textual.app import App
from textual.command import DiscoveryHit, Hit, Hits, Provider

from cctv.reducer.filters import KINDS, PRESET_SHORT_NAMES, ViewFilter, next_preset
from cctv.reducer.state import MAIN
from cctv.widgets.safe_text import content, visible

from .messages import OpenAgent

if TYPE_CHECKING:
    from cctv.widgets.transcript import TranscriptView

    from .screens.session import SessionScreen

# the session screen (its widgets, the fold) is imported when the palette is
# over a session: the browser's palette shows without it

__all__ = ["CctvCommands", "export_view", "ask_jump_to_time", "jump_to_time"]

# (title, help, action on the active screen)
_ACTIONS: tuple[tuple[str, str, str], ...] = (
    ("Toggle tasks panel", "Sub-agents, background shells, monitors and workflows", "screen.toggle_tasks"),
    ("Focus the tasks panel", "Move between the transcript and the tasks list (tab)", "screen.focus_tasks"),
    ("Raw JSON of the selected frame", "The exact frame under the cursor, with its line number", "screen.raw"),
    ("Search the transcript", "Find text in prompts, replies and tool calls", "screen.search"),
    ("Follow the end", "Jump to the newest line and keep following", "focused.last"),
    ("Next turn", "Jump to the next human prompt", "focused.next_turn"),
    ("Previous turn", "Jump to the previous human prompt", "focused.previous_turn"),
    ("Next error", "Jump to the next failed call, problem line or error", "focused.next_error"),
    ("Previous error", "Jump to the previous failed call, problem line or error", "focused.previous_error"),
    ("Next tool call", "Jump to the next tool call", "focused.next_call"),
    ("Previous tool call", "Jump to the previous tool call", "focused.previous_call"),
    ("Command stderr", "What the command started by cctv run wrote to stderr", "screen.stderr"),
    ("Stop the command", "Terminate the command started by cctv run", "screen.stop_command"),
)
_APP_ACTIONS: tuple[tuple[str, str, str], ...] = (
    ("Help", "Every key binding", "app.help"),
    ("Quit", "Leave cctv", "app.quit"),
)
"""Commands every screen has."""


def _session_screen(app: App) -> SessionScreen | None:
    from .screens.session import SessionScreen

    for screen in reversed(app.screen_stack):
        if isinstance(screen, SessionScreen):
            return screen
    return None


def _view(app: App) -> TranscriptView | None:
    from cctv.widgets.transcript import TranscriptView

    screen = _session_screen(app)
    if screen is None:
        return None
    return screen.query_one(TranscriptView)


def _set_filter(app: App, make: Callable[[ViewFilter], ViewFilter]) -> None:
    view = _view(app)
    if view is None:
        return
    view.set_filter(make(view.filter))
    described = view.filter.describe()
    app.notify(f"showing {described}" if view.filter.narrowed else
               f"filter: {described}" if described else "showing everything", timeout=3)


def _toggle_times(app: App) -> None:
    view = _view(app)
    if view is not None:
        view.action_toggle_times()


def export_view(app: App, *, whole: bool) -> None:
    """Write the current transcript as Markdown (with the view's filters unless
    ``whole``) to a new file in the current directory (else the cache directory)
    and say where. The writing runs in a thread, so a big session does not
    freeze the screen."""
    from cctv.reducer.export_md import export_markdown

    from .export import export_file_name, write_export

    screen = _session_screen(app)
    view = _view(app)
    if screen is None or view is None:
        return
    view_filter = ViewFilter() if whole else view.filter
    shown = screen.shown
    session, agent_id, feed = shown.session, screen.agent_id, shown.feed
    what = "session" if whole or not view_filter.active else "filtered view"

    def work() -> None:
        try:
            text = export_markdown(session, agent_id=agent_id, view_filter=view_filter,
                                   time_of=shown.item_time)
            path = write_export(text, export_file_name(feed, agent_id))
        except Exception as exc:  # a full disk, or a bug: say so, never crash
            app.call_from_thread(app.notify, f"export failed: {exc}", severity="error",
                                 timeout=8)
            return
        app.call_from_thread(app.notify,
                             f"wrote the {what} to {path} ({len(text.encode()):,} bytes)",
                             title="Markdown export", timeout=8)

    app.notify(f"exporting the {what}…", timeout=2)
    app.run_worker(work, thread=True, group="export", exit_on_error=False)


def jump_to_time(app: App, answer: str | None) -> None:
    """Move the cursor to the first item at or after the time in ``answer``."""
    from cctv.reducer.item_time import format_clock, parse_clock

    screen = _session_screen(app)
    view = _view(app)
    if screen is None or view is None or answer is None or not answer.strip():
        return
    time_of = screen.shown.item_time
    first = next((t for item in view.items[:200] if (t := time_of(item)) is not None), None)
    when = parse_clock(answer, first)
    if when is None:
        app.notify(f"not a time: {answer!r} (HH:MM, HH:MM:SS or an ISO date-time)",
                   severity="warning")
        return
    if view.jump_to_time(when):
        item = view.cursor_item
        at = time_of(item) if item is not None else None
        app.notify(f"at {format_clock(at)}" if at is not None else "moved", timeout=3)
    else:
        app.notify(f"nothing shown at or after {format_clock(when)}", severity="warning")


def ask_jump_to_time(app: App) -> None:
    """Ask for a time, then jump to it."""
    from cctv.reducer.item_time import format_clock

    from .screens.ask import AskScreen

    screen = _session_screen(app)
    view = _view(app)
    if screen is None or view is None:
        return
    item = view.cursor_item
    at = screen.shown.item_time(item) if item is not None else None

    hint = "HH:MM or HH:MM:SS (local time, the session's first day) or an ISO date-time"
    app.push_screen(AskScreen("Jump to time", hint, placeholder="14:05",
                              value=format_clock(at) if at is not None else ""),
                    partial(jump_to_time, app))


class CctvCommands(Provider):
    """cctv's actions, filters and exports, and its sub-agents, in the command palette."""

    def _filter_commands(self, app: App,
                         screen: SessionScreen) -> list[tuple[str, str, Callable[[], object]]]:
        view = _view(app)
        current = view.filter if view is not None else ViewFilter()
        out: list[tuple[str, str, Callable[[], object]]] = []
        name, _preset = next_preset(current)
        out.append(("Filter: cycle common filters",
                    f"f — next: {name} ({' → '.join(PRESET_SHORT_NAMES)})",
                    partial(_set_filter, app, lambda f: next_preset(f)[1])))
        for kind, covers in KINDS.items():
            verb = "Show" if kind in current.hidden else "Hide"
            out.append((f"Filter: {verb.lower()} {kind}", f"{verb} {covers}",
                        partial(_set_filter, app, lambda f, k=kind: f.toggle_kind(k))))
        out.append(("Filter: every item, not only errors" if current.only_errors
                    else "Filter: only errors",
                    "Failed, denied or interrupted calls, problem rows, error notices, failed hooks",
                    partial(_set_filter, app, lambda f: f.toggle_errors())))
        agent_id = view.agent_id if view is not None else MAIN
        names = sorted({c.name for c in screen.session.calls.values() if c.agent == agent_id})
        for tool in names:
            if tool == current.only_tool:
                out.append((f"Filter: every tool, not only {tool}", "Show all items again",
                            partial(_set_filter, app, lambda f: f.with_tool(None))))
            else:
                out.append((f"Filter: only tool {tool}", f"Only the {tool} calls of this transcript",
                            partial(_set_filter, app, lambda f, t=tool: f.with_tool(t))))
        out.append(("Filter: show everything", "F — clear every filter",
                    partial(_set_filter, app, lambda f: ViewFilter())))
        return out

    def _commands(self) -> list[tuple[str, str, Callable[[], object]]]:
        app = self.app
        own = getattr(self.screen, "PALETTE", None)  # the screen the palette is over
        if own is not None:  # a screen with commands of its own (the browser): only those
            return [(title, help_text, partial(app.run_action, action))
                    for title, help_text, action in (*own, *_APP_ACTIONS)]
        screen = _session_screen(app)
        if screen is None:
            return [(title, help_text, partial(app.run_action, action))
                    for title, help_text, action in _APP_ACTIONS]
        out: list[tuple[str, str, Callable[[], object]]] = [
            (title, help_text, partial(app.run_action, action))
            for title, help_text, action in (*_ACTIONS, *_APP_ACTIONS)
        ]
        out += self._filter_commands(app, screen)
        out += [
            ("Toggle the time column", "T — each item's time (its row's timestamp, or when it arrived)",
             partial(_toggle_times, app)),
            ("Jump to time…", "Move to the first item at or after a time",
             partial(ask_jump_to_time, app)),
            ("Export the view as Markdown", "Filters applied; written to a new file in the current "
             "directory (or the cache directory)", partial(export_view, app, whole=False)),
            ("Export the session as Markdown", "Every item of this transcript, whatever the filters",
             partial(export_view, app, whole=True)),
        ]
        for agent in screen.session.agents.values():
            if agent.id == MAIN:
                continue
            label = agent.description or agent.subagent_type or agent.id
            out.append((f"Open sub-agent: {label}",
                        f"{agent.subagent_type or 'agent'} · {agent.tool_calls} tool calls · {agent.status}",
                        partial(app.post_message, OpenAgent(agent.id))))
        return out

    async def discover(self) -> Hits:
        for title, help_text, callback in self._commands():
            yield DiscoveryHit(content(title), callback, text=title, help=content(help_text))

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, callback in self._commands():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(visible(title, oneline=True)), callback,
                          text=title, help=content(help_text))
