"""``cctv sessions`` and ``cctv search``: the index without a terminal UI.

The text output shows every string from the sessions with its control
characters made visible (:func:`reducer.safe.visible`); ``--json`` escapes them
as JSON does.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any, TextIO

from cctv.reducer.format import compact_count, format_cost, format_duration, plural, title_text
from cctv.reducer.live_state import LiveState
from cctv.reducer.safe import visible

from ..storage import take_notes
from . import LIVE_WINDOW_S, Hit, SessionIndex, SessionRow, resolve_root

__all__ = ["open_index", "run_sessions", "run_search"]


def open_index(directory: str | None, use_index: bool, err: TextIO, *, rows: bool) -> SessionIndex:
    """The index of ``directory``, refreshed (progress and what was skipped on ``err``)."""
    index = SessionIndex(resolve_root(directory), use_index=use_index, rows=rows)
    progress = _progress_to(err) if err.isatty() else None
    report = index.refresh(progress)
    if progress is not None and report.read:
        err.write("\r" + " " * 16 + "\r")
    _tell(err)
    passed = report.skipped + report.errors
    for line in passed[:10]:
        print(visible(f"cctv: {line}", oneline=True), file=err)
    if len(passed) > 10:
        print(f"cctv: … and {len(passed) - 10} more not listed", file=err)
    return index


def _progress_to(err: TextIO) -> Callable[[int, int], None]:
    """Writes indexing's progress over itself on the terminal ``err``."""
    def progress(done: int, total: int) -> None:
        if total:
            err.write(f"\rindexing {done * 100 // total:3d}%")
            err.flush()
    return progress


def _tell(err: TextIO) -> None:
    """What happened to the index file (rebuilt, kept in memory), a line each."""
    for note in take_notes():
        print(visible(f"cctv: {note}", oneline=True), file=err)


def live_rows(rows: list[SessionRow], now: float, within: float) -> list[tuple[SessionRow, LiveState]]:
    """The sessions written to within ``within`` seconds, each with its live
    state, the ones that need you first."""
    out = []
    for row in rows:
        state = row.state(now, horizon=within) if now - row.mtime < within else None
        if state is not None:
            out.append((row, state))
    out.sort(key=lambda pair: pair[1].rank)
    return out


def _iso(epoch: float | None) -> str | None:
    return datetime.fromtimestamp(epoch, timezone.utc).isoformat() if epoch is not None else None


def _live_json(row: SessionRow, state: LiveState, now: float) -> dict[str, Any]:
    """``cctv sessions --live --json``'s object: the usual keys and the state's."""
    return {**row.as_json(now, LIVE_WINDOW_S), "state": state.kind,
            "state_since": _iso(state.since), "activity": state.activity,
            "context_pct": row.context_pct}


def _print_live(rows: list[tuple[SessionRow, LiveState]], now: float, out: TextIO) -> None:
    for row, state in rows:
        title = " ".join(title_text(row.title).split())
        print(visible(f"{state.glyph} {state.describe(now):40}  {row.project}  {title}"
                      f"  [{row.session_id}]", oneline=True), file=out)


def run_sessions(directory: str | None, as_json: bool, use_index: bool,
                 out: TextIO, err: TextIO, *, live_within: float | None = None) -> int:
    """A line (or a JSON object) per session, newest activity first; with
    ``live_within``, only those written to within that many seconds, with their
    live states, the ones that need you first."""
    root = resolve_root(directory)
    if not root.is_dir():
        if as_json:
            print("[]", file=out)
        print(visible(f"cctv: no projects folder at {root}", oneline=True), file=err)
        return 2
    index = open_index(directory, use_index, err, rows=True)
    rows = index.rows()
    _tell(err)  # damage met by the reading itself
    now = time.time()
    if live_within is not None:
        live = live_rows(rows, now, live_within)
        if as_json:
            json.dump([_live_json(r, state, now) for r, state in live], out, indent=2)
            out.write("\n")
        elif not live:
            print(visible(f"no session under {root} was written to in the last "
                          f"{format_duration(live_within)}", oneline=True), file=err)
        else:
            _print_live(live, now, out)
        return 0
    if as_json:
        json.dump([r.as_json(now, LIVE_WINDOW_S) for r in rows], out, indent=2)
        out.write("\n")
        return 0
    if not rows:
        print(visible(f"no sessions under {root}", oneline=True), file=err)
        return 0
    for r in rows:
        live = "●" if r.is_live(now, LIVE_WINDOW_S) else " "
        cost = ("" if r.cost_source == "recorded" else "~") + format_cost(r.cost_usd) \
            if r.cost_usd is not None else \
            f"{compact_count(r.tokens_in + r.output_tokens)} tok"
        title = " ".join(title_text(r.title).split())
        print(visible(f"{live} {(r.last_activity or '')[:16]:16}  {format_duration(r.duration_s):>7}"
                      f"  {r.prompts:4}p {r.tool_calls:5}t  {cost:>9}  {r.project}  {title}"
                      f"  [{r.session_id}]", oneline=True), file=out)
    empty = index.empty()
    if empty:
        print(f"cctv: {plural(empty, 'empty file')} skipped (no rows: not sessions)", file=err)
    return 0


def _hit_json(h: Hit) -> dict[str, object]:
    return {"session_id": h.session_id, "session_path": h.session_path, "path": h.file,
            "line": h.line, "role": h.role, "agent": h.agent, "chars": h.chars,
            "snippet": h.plain}


def _hit_line(h: Hit) -> str:
    """``file:line: [role] snippet``; a giant text says how much of it was searched."""
    cut = f" (first {compact_count(h.searched)} of {compact_count(h.chars)} characters searched)" \
        if h.chars > h.searched else ""
    return f"{h.file}:{h.line}: [{h.role}] {h.plain}{cut}"


def run_search(query: str, directory: str | None, as_json: bool, use_index: bool,
               out: TextIO, err: TextIO, *, limit: int | None = None,
               role: str | None = None) -> int:
    """Full-text hits, every one or the first ``limit`` (the text output then
    says how many more); exit 1 when there are none (``[]`` with ``--json``),
    2 when there is no projects folder."""
    root = resolve_root(directory)
    if not root.is_dir():
        if as_json:
            print("[]", file=out)
        print(visible(f"cctv: no projects folder at {root}", oneline=True), file=err)
        return 2
    index = open_index(directory, use_index, err, rows=False)
    hits = index.search(query, limit, role)
    more = index.hit_count(query, role) - len(hits) if limit is not None and len(hits) == limit else 0
    _tell(err)  # damage met by the search itself
    if as_json:
        json.dump([_hit_json(h) for h in hits], out, indent=2)
        out.write("\n")
    else:
        for h in hits:
            print(visible(_hit_line(h), oneline=True), file=out)
        if more > 0:
            print(f"… {plural(more, 'more hit', grouped=True)} (--limit {limit}; leave it out for every hit)",
                  file=out)
    return 0 if hits else 1
