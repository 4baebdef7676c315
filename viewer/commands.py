"""The command palette provider: every cctv action, and each sub-agent to open."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from textual.command import DiscoveryHit, Hit, Hits, Provider

from reducer.state import MAIN
from widgets.safe_text import content, visible

if TYPE_CHECKING:
    from .app import CctvApp

__all__ = ["CctvCommands"]

# (title, help, action on the active screen)
_ACTIONS: tuple[tuple[str, str, str], ...] = (
    ("Toggle tasks panel", "Sub-agents, background shells, monitors and workflows", "screen.toggle_tasks"),
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
    ("Help", "Every key binding", "app.help"),
    ("Quit", "Leave cctv", "app.quit"),
)


class CctvCommands(Provider):
    """cctv's actions and its sub-agents in the command palette."""

    def _commands(self) -> list[tuple[str, str, Callable[[], object]]]:
        app: CctvApp = self.app  # type: ignore[assignment]
        out: list[tuple[str, str, Callable[[], object]]] = [
            (title, help_text, partial(app.run_action, action)) for title, help_text, action in _ACTIONS
        ]
        for agent in app.feed.session.agents.values():
            if agent.id == MAIN:
                continue
            label = agent.description or agent.subagent_type or agent.id
            out.append((f"Open sub-agent: {label}",
                        f"{agent.subagent_type or 'agent'} · {agent.tool_calls} tool calls · {agent.status}",
                        partial(app.open_agent, agent.id)))
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
