"""A followed input and everything folded from it, as one object.

:class:`LiveSession` carries what the live viewer keeps for one source: the
source, its fold, the raw store, arrival times, frame links, the source's
state, the command's stderr, whether it is loading or ended, the line to go
to once the history is in, and whether its sub-agent files are followed. The
app makes one when a session is opened, switched to, or starts over (its file
truncated or written anew), and replaces the old one whole. Plain Python
(no Textual): the app's workers feed it, the screens draw it.
"""

from __future__ import annotations

import contextlib
import os
import stat
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cctv.reducer.feed import Feed

from .rawstore import rereadable
from .shown import ShownSession
from .source_state import Effect, SourceState
from .sources import FileTail, Recreated, Replaced, Truncated, is_reset
from .stderr_buffer import StderrBuffer
from .subagent_tail import agent_file_found, resolve_agent

if TYPE_CHECKING:
    from cctv.reducer.lines import RawLine
    from cctv.reducer.state import Change

    from .sources import Event, Source

__all__ = ["LiveSession"]


def _new_feed(source: Source | None) -> Feed:
    """A Feed for ``source``: one read from a regular file leaves the lines'
    bytes on disk (the raw view reads them back through the raw store)."""
    path = getattr(source, "path", None)
    from_file = source is not None and source.kind == "file" and path is not None
    # a live viewer fed endless garbage keeps one row and one line per run of it
    return Feed(keep_raw=not (from_file and rereadable(path)), keep_malformed_runs=False)


class LiveSession(ShownSession):
    """One source followed, and its fold (see the module docstring)."""

    def __init__(
        self,
        source: Source | None,
        *,
        feed: Feed | None = None,
        label: str | None = None,
        clock: Callable[[], float] | None = time.time,
        goto_line: int | None = None,
        source_state: SourceState | None = None,
        stderr: StderrBuffer | None = None,
        live: bool = False,
    ) -> None:
        shown = label if label is not None else \
            source.label if source is not None else "loaded file"
        if source_state is None:
            source_state = SourceState(source.kind if source is not None else "file",
                                       follow=getattr(source, "follow", True), label=shown)
        super().__init__(feed if feed is not None else _new_feed(source), shown, source_state,
                         stderr)
        self.source = source
        self.clock = clock
        """Wall clock for live elapsed times; ``None`` in tests (state only)."""
        self.goto_line = goto_line
        """Put the cursor on the item of this line once the history is in."""
        self.live = live
        """The history is in: lines now arrive live (and get arrival times)."""
        self.subagents_started = False
        self.restored_to = 0
        """Bytes of the file whose fold was restored from its checkpoint (0: none)."""
        self._label = label

    def restarted(self) -> LiveSession:
        """The session anew for the same source, which starts over (its file
        truncated or written anew): a new fold; the source's state, its stderr
        and the line to go to go on."""
        return LiveSession(self.source, label=self._label, clock=self.clock,
                           goto_line=self.goto_line, source_state=self.source_state,
                           stderr=self.stderr, live=self.live)

    # --- the fold kept in the cache (viewer/fold_cache.py) ---------------------------------

    def restored(self) -> LiveSession | None:
        """This session from its file's checkpoint, before anything was read
        (a thread may run it: only the source is touched, to start where the
        checkpoint stops); ``None`` when there is none to use."""
        from . import fold_cache

        source = self.source
        if not isinstance(source, FileTail) or self.feed.keep_raw or self.feed.entries:
            return None
        try:
            st = os.stat(source.path)
        except OSError:
            return None
        if not stat.S_ISREG(st.st_mode) or st.st_size < fold_cache.MIN_BYTES:
            return None
        found = fold_cache.load_checkpoint(source.path, st, keep_raw=False, keep_entries=True,
                                           collapsed=True)
        if found is None:
            return None
        feed, header = found.feed, found.header
        try:
            source.resume(header.end, header.lines)
        except OSError:
            return None
        live = LiveSession(source, feed=feed, label=self._label, clock=self.clock,
                           goto_line=self.goto_line, source_state=self.source_state,
                           stderr=self.stderr, live=self.live)
        live.restored_to = header.end
        live.raw_store.track(source.path)
        return live

    def keep_checkpoint(self) -> threading.Thread | None:
        """Once the history is in, before sub-agent files are folded: keep the
        fold in the cache, when the file is big and enough of it was read since
        the checkpoint it came from (written by a forked child: the thread
        that reaps it, to join to wait for it)."""
        from . import fold_cache

        source = self.source
        if not isinstance(source, FileTail) or self.feed.keep_raw or self.feed.agent_entries:
            return None
        read = source.read_to
        if read is None:
            return None
        end, lines = read
        if not fold_cache.worth_keeping(self.restored_to, end):
            return None
        return fold_cache.save_in_child(source.path, self.feed, end, lines)

    def now(self) -> float | None:
        return self.clock() if self.clock is not None else None

    # --- fed by the app's reader ---------------------------------------------------------

    def fold(self, lines: list[RawLine], received: float | None) -> list[Change]:
        """Fold a batch of the source's lines (``received``: when they arrived live)."""
        return self.feed.feed(lines, received_at=received)

    def lines_arrived(self, lines: list[RawLine]) -> float | None:
        """A batch of lines came in, to be folded: the raw store learns the
        file; the wall-clock time to stamp them with when they arrived live."""
        if not self.feed.keep_raw:
            self.raw_store.track(getattr(self.source, "path"))
        received = self.now() if self.live else None
        if received is not None and lines:
            self.arrivals.record(lines[0][0], received)
        return received

    def take(self, event: Event, now: float) -> Effect:
        """Fold one event of the source other than lines (``now``: monotonic);
        what else the app should do (a notice, a toast, the history in)."""
        if isinstance(event, (Truncated, Replaced, Recreated)) and not is_reset(event) \
                and not self.feed.keep_raw:
            self.raw_store.replaced(getattr(self.source, "path"))  # rotated: lines go on
        effect = self.source_state.apply(event, now)
        self.loading = self.source_state.loading
        if effect.stderr is not None:
            self.stderr.extend(effect.stderr)
        if effect.history_in:
            self.live = True
        return effect

    def finished(self) -> None:
        """The source has no more events."""
        state = self.source_state
        state.finished()
        self.loading = None
        self.ended = state.ended
        self.stderr.flush()

    def take_goto_line(self) -> int | None:
        """The line to go to, once (``None``: none asked for)."""
        line, self.goto_line = self.goto_line, None
        return line

    # --- sub-agent files -------------------------------------------------------------------

    def subagents_to_follow(self) -> tuple[Path, bool] | None:
        """For an on-disk session whose sub-agent files are not followed yet:
        its file and whether to follow them as they grow (then they are)."""
        if self.subagents_started or self.feed.session.format != "transcript":
            return None
        source = self.source
        if not isinstance(source, FileTail):
            return None
        self.subagents_started = True
        return source.path, source.follow

    def agent_file_found(self, agent_id: str, agent_path: Path, meta: dict[str, Any]) -> list[Change]:
        return agent_file_found(self.feed.session, agent_path, meta, agent_id)

    def agent_lines(self, agent: str, agent_path: Path, lines: list[RawLine]) -> list[Change]:
        """Fold lines of a sub-agent's own file."""
        if not self.feed.keep_raw:
            self.raw_store.track(agent_path, agent)
        return self.feed.feed_agent_file(lines, agent)

    def resolve_agent(self, agent_path: Path, meta: dict[str, Any]) -> str | None:
        return resolve_agent(self.feed.session, agent_path, meta)

    # --- the command (cctv run) ------------------------------------------------------------

    @property
    def runs_command(self) -> bool:
        return self.source is not None and self.source.kind == "command"

    async def stop_command(self) -> bool:
        state = self.source_state
        # a command that exited may have left something behind that holds its output
        if not self.runs_command or self.ended is not None \
                or not (state.running or state.exit_code is not None):
            return False
        assert self.source is not None
        await self.source.stop()
        return True

    async def close(self) -> int:
        """Stop the source (a running command is told to stop); cctv's exit status."""
        if self.source is not None:
            with contextlib.suppress(Exception):
                await self.source.stop()  # returns at once: it only signals
        return self.source_state.exit_status(quitting=True)
