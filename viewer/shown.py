"""What a session screen draws: a session's state, and what its input says.

The live viewer's :class:`~viewer.live_session.LiveSession` and a replay's
:class:`~viewer.replay.controller.ReplayController` are both a
:class:`ShownSession`: the screens read the fold, the status of the input and
the times of items from it, and never from the app. Plain Python (no Textual).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING

from cctv.reducer.frame_links import FrameLinks, FrameStepper
from cctv.reducer.item_time import Arrivals, ItemTimes
from cctv.reducer.state import ToolItem

from .rawstore import RawStore
from .stderr_buffer import StderrBuffer

if TYPE_CHECKING:
    from cctv.reducer.feed import Feed
    from cctv.reducer.frames import Entry
    from cctv.reducer.fold import Session
    from cctv.reducer.state import Item

    from .source_state import SourceState

__all__ = ["ShownSession"]


class ShownSession(ABC):
    """A session as a screen shows it: its fold, its input's state, its clock."""

    def __init__(self, feed: Feed, label: str, source_state: SourceState,
                 stderr: StderrBuffer | None = None) -> None:
        self.feed = feed
        """The fold (its ``session``), and the decoded lines for the raw view."""
        self.label = label
        """What the status bar calls the input."""
        self.source_state = source_state
        """What the input says happens (status text, notices, exit status)."""
        self.stderr = stderr if stderr is not None else StderrBuffer()
        """The command's standard error (``cctv run``), bounded; the rest spills to the cache."""
        self.raw_store = RawStore()
        """Where the raw view finds the bytes of a line the feed did not keep."""
        self.arrivals = Arrivals()
        """When live lines arrived (the time of items whose rows carry none)."""
        self.loading: tuple[int, int] | None = None
        """Bytes read of the history and its size, while it loads."""
        self.ended: str | None = None
        """Why the input ended (``None`` while it is live)."""
        self._links: dict[str, FrameLinks] = {}

    @property
    def session(self) -> Session:
        return self.feed.session

    @abstractmethod
    def now(self) -> float | None:
        """The time elapsed times are counted to (``None``: none shown)."""

    @property
    def runs_command(self) -> bool:
        """The input is a command cctv started (``cctv run``: stderr, stop)."""
        return False

    async def stop_command(self) -> bool:
        """Ask the command to stop; ``False`` when no command runs."""
        return False

    async def close(self) -> int:
        """Stop what runs for the session (the app quits); cctv's exit status."""
        return self.source_state.exit_status(quitting=True)

    def item_time(self, item: Item) -> float | None:
        """When ``item`` happened (its row's timestamp, else when it arrived live)."""
        return ItemTimes(self.feed, self.arrivals).of(item)

    def frame_stepper(self, item: Item, entry: Entry) -> FrameStepper:
        """For the raw view: the frames paired with ``item``'s (a tool call's
        result, task frames and heartbeats), in the file ``entry`` came from."""
        feed = self.feed
        entries = feed.agent_entries.get(item.agent, feed.entries) if item.agent else feed.entries
        key = item.agent if entries is not feed.entries else ""
        links = self._links.get(key)
        if links is None or links.entries is not entries:
            links = self._links[key] = FrameLinks(entries)
        chain = links.chain_of_call(item.call.id) if isinstance(item, ToolItem) else None
        if chain and entry.line_no not in chain:
            chain = None
        return FrameStepper(entries, links, entry, chain)
