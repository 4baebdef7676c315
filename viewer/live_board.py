"""The live sessions of a projects folder and their states, kept from file events.

:class:`LiveBoard` holds the latest row of each session written to within the
horizon and says, for each batch of rows read again, which sessions changed
state — and which of them started needing you (a prompt, a permission), once
per change. :func:`watch_sessions` turns the folder's file events into the
session files they concern (a sub-agent's file is its session's). Between
events nothing runs: :meth:`LiveBoard.due` is the one time a state changes
with nothing written (a quiet call that may be a prompt, a rate limit that
lifts, the horizon). No Textual here: the browser and ``cctv tail`` share it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from pathlib import Path
from typing import NamedTuple

from cctv.reducer.live_state import HORIZON_S, LiveState, changes_at

from .index.rows import SessionRow
from .index.scan import SessionFile, scan, session_file

__all__ = ["DEBOUNCE_MS", "LiveBoard", "RowReader", "Transition", "session_of", "watch_sessions"]

DEBOUNCE_MS = 200
"""How long file events are gathered before a batch is reported."""


class Transition(NamedTuple):
    """A session whose live state changed (``before`` ``None``: newly live)."""

    path: str
    before: LiveState | None
    after: LiveState

    @property
    def calls_you(self) -> bool:
        """It started needing you: a prompt or a permission it did not wait on before."""
        return self.after.needs_you and (self.before is None or self.before.kind != self.after.kind)


class LiveBoard:
    """The sessions written to within ``horizon`` seconds and their live states."""

    def __init__(self, horizon: float = HORIZON_S) -> None:
        self.horizon = horizon
        self.rows: dict[str, SessionRow] = {}
        """Path → the latest row of each live session."""
        self.states: dict[str, LiveState] = {}
        """Path → its state as last said (live sessions only)."""

    def update(self, rows: Iterable[SessionRow], now: float, *,
               complete: bool = False) -> list[Transition]:
        """Take ``rows`` (read again, or new; ``complete``: every session there
        is, the others are gone); the sessions whose state changed."""
        given = set()
        for row in rows:
            given.add(row.path)
            if now - row.mtime < self.horizon and row.live_facts is not None:
                self.rows[row.path] = row
            else:
                self.rows.pop(row.path, None)
        if complete:
            for path in [p for p in self.rows if p not in given]:
                self.forget(path)
        return self.retime(now)

    def forget(self, path: str) -> None:
        """The file is gone."""
        self.rows.pop(path, None)
        self.states.pop(path, None)

    def retime(self, now: float) -> list[Transition]:
        """Every state again at ``now``: the ones that changed (a session past
        the horizon leaves the board, ended)."""
        out: list[Transition] = []
        for path, row in list(self.rows.items()):
            state = row.state(now, self.horizon)
            before = self.states.get(path)
            if state is None or state.kind == "ended":
                del self.rows[path]
                self.states.pop(path, None)
                if before is not None and state is not None:
                    out.append(Transition(path, before, state))
                continue
            self.states[path] = state
            if before is None or before.kind != state.kind or before.activity != state.activity:
                out.append(Transition(path, before, state))
        return out

    def due(self, now: float) -> float | None:
        """The next time a state changes with nothing written, if any."""
        times = [t for row in self.rows.values() if row.live_facts is not None
                 and (t := changes_at(row.live_facts, row.mtime, now, horizon=self.horizon))]
        return min(times) if times else None

    def ordered(self) -> list[tuple[SessionRow, LiveState]]:
        """The live sessions, the ones that need you first."""
        pairs = [(self.rows[p], s) for p, s in self.states.items() if p in self.rows]
        pairs.sort(key=lambda pair: pair[1].rank)
        return pairs

    def counts(self) -> str:
        """``4 live · 1 needs you`` (``""``: none live)."""
        if not self.states:
            return ""
        waiting = sum(1 for s in self.states.values() if s.needs_you)
        return f"{len(self.states)} live" + (f" · {waiting} need{'s' if waiting == 1 else ''} you"
                                             if waiting else "")

    def needing_you(self, but: str | None = None) -> tuple[SessionRow, LiveState] | None:
        """The session that has waited on you longest (not ``but``), if any."""
        for row, state in self.ordered():
            if state.needs_you and row.path != but:
                return row, state
        return None



class RowReader:
    """Rows of session files read without an index (``cctv tail``): each file
    read on from where its last read stopped while it stays live."""

    def __init__(self) -> None:
        self._lines: dict[str, int] = {}
        """Path → lines of it read so far (their texts are not wanted again)."""

    def recent(self, root: Path, now: float, horizon: float) -> list[SessionRow]:
        """The rows of the sessions under ``root`` written to within ``horizon`` seconds."""
        return self._read([f for f in scan(root) if now - _grew_at(f) < horizon])

    def read(self, paths: Iterable[Path]) -> list[SessionRow]:
        """The rows of these session files as they are now (a gone one has none)."""
        return self._read([f for p in paths if (f := session_file(p)) is not None])

    def _read(self, files: list[SessionFile]) -> list[SessionRow]:
        from .index.extract import extract  # the decoder and the fold: only once a file is read

        rows = []
        for f in files:
            try:
                got = extract(f.path, f.project_dir, f.size, _grew_at(f),
                              self._lines.get(f.path, 0), keep=True)
            except Exception:  # noqa: BLE001 - a file that cannot be read has no state
                continue
            self._lines[f.path] = got.lines
            rows.append(got.row)
        return rows


def _grew_at(f: SessionFile) -> float:
    """When the session or one of its sub-agents' files last changed."""
    return max(f.mtime_ns, f.sub_mtime_ns) / 1e9


def session_of(path: Path, root: Path) -> Path | None:
    """The session file a changed file belongs to: itself
    (``<project>/<id>.jsonl``), or for a sub-agent's file
    (``<project>/<id>/subagents/agent-….jsonl``) its session's; ``None`` for
    anything else."""
    try:
        parts = path.relative_to(root).parts
    except ValueError:
        return None
    if not parts or not parts[-1].endswith(".jsonl"):
        return None
    if len(parts) == 2:
        return path
    if len(parts) >= 4 and parts[2] == "subagents":
        return root / parts[0] / f"{parts[1]}.jsonl"
    return None


async def watch_sessions(root: Path, *, debounce_ms: int = DEBOUNCE_MS) -> AsyncIterator[set[Path]]:
    """The session files under ``root`` that changed, a batch per burst of
    file events (``watchfiles``; idle between them)."""
    from watchfiles import Change, awatch  # after the browser's first screen

    def wanted(_change: Change, path: str) -> bool:
        return path.endswith(".jsonl")

    async for changes in awatch(root, watch_filter=wanted, debounce=debounce_ms, step=50,
                                recursive=True):
        found = {s for _, p in changes if (s := session_of(Path(p), root)) is not None}
        if found:
            yield found
