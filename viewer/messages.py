"""What a screen asks of the app: the messages that change more than the screen.

Screens and the command palette post these; the app that runs them handles
them (``on_open_session``, …). Messages about one widget stay nested in it
(``TranscriptView.OpenAgent``); these are the cross-cutting ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from textual.message import Message

__all__ = ["OpenSession", "CloseSession", "OpenAgent", "Seek", "Aim", "DiskNotes"]


@dataclass
class OpenSession(Message):
    """View the session file at ``path`` (from the browser)."""

    path: Path
    line: int | None = None
    """Scroll to the item made from this line once it is read."""
    follow: bool = False
    """Follow the file as it grows."""
    agent: str | None = None
    """The sub-agent whose transcript :attr:`line` is in (``None``: the main
    one's): it opens on that sub-agent's screen, the line one of its own file
    (or of the session's when the sub-agent is written inline)."""


@dataclass
class CloseSession(Message):
    """Back from a session to the browser it was opened from (if any)."""


@dataclass
class OpenAgent(Message):
    """Show the transcript of a sub-agent."""

    agent_id: str


@dataclass
class Seek(Message):
    """A replay: go to frame ``position`` (1-based)."""

    position: int


@dataclass
class Aim(Message):
    """A replay: the pointer rests on the timeline at frame ``position``
    (``None``: it left)."""

    position: int | None


@dataclass
class DiskNotes(Message):
    """Something happened to cctv's own files on disk (:mod:`viewer.storage`):
    tell the notes not told yet, once each."""

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, DiskNotes)
