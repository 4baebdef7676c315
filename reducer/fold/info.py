"""What was read, and what the session says about itself: lines and kinds
counted, malformed and unknown lines, the format; session ids, working
directory, model, CLI version, tools, branch and title, from ``init`` frames,
the title rows and what every on-disk row repeats.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from .. import frames as F
from ..state import MAIN, Change, ItemUpdated, ProblemItem
from .chain import Chain
from .core import Core

__all__ = ["Info", "MALFORMED_KEPT"]

MALFORMED_KEPT = 10_000
"""Malformed lines listed by line in :attr:`Info.malformed` (all are counted)."""


class Info:
    """Session facts and reading counts; the title; malformed and unknown lines."""

    def __init__(self, core: Core, chain: Chain) -> None:
        self._core = core
        self._chain = chain
        # what was read
        self.lines = 0
        """Lines of the main source folded."""
        self.agent_file_lines = 0
        """Lines folded from sub-agent transcript files."""
        self.kinds: Counter[str] = Counter()
        self.malformed: list[tuple[int, str]] = []
        """(line, reason) of the first :data:`MALFORMED_KEPT` malformed lines."""
        self.malformed_count = 0
        """How many malformed lines there were in all."""
        self.unknown: list[tuple[int, str]] = []
        self.format: str = "unknown"
        # what the session says about itself
        self.session_id: str | None = None
        self.session_ids: list[str] = []
        """Every session id seen, in order (a stream of ``claude -p`` runs has many)."""
        self._session_id_set: set[str] = set()
        self.cwd: str | None = None
        self.model: str | None = None
        self.cli_version: str | None = None
        self.permission_mode: str | None = None
        self.tools: list[str] = []
        self.mcp_servers: list[dict[str, Any]] = []
        self.git_branch: str | None = None
        self.title: str | None = None
        self._title_rank = 99
        self._pending_summaries: dict[str, str] = {}
        """``summary`` rows whose ``leafUuid`` was not (yet) a row of this session."""

    # --- rows -----------------------------------------------------------------------------

    def row(self, e: F._Row, forced: str | None, message_row: bool) -> None:
        """What every on-disk row and wire message says about the session, before
        its own handler: CLI version, cwd, branch, session id, its place in the
        conversation chain. ``forced``: the sub-agent the caller routed it to;
        ``message_row``: a user, assistant or system row, whose session id the
        session records."""
        if e.version is not None:
            self._row_seen(e)
        if e.uuid and forced is None and not e.isSidechain \
                and (e.parentUuid is not None or e.sessionId is not None):
            self._chain.follow(e)
            if self._pending_summaries:
                title = self._pending_summaries.pop(e.uuid, None)
                if title is not None:
                    self.set_title(title, 2)
        if message_row:
            sid = e.session_id or e.sessionId
            if sid != self.session_id:
                self.session_seen(sid)

    def _row_seen(self, e: F._Row) -> None:
        """Session facts every on-disk row repeats: CLI version, cwd, branch."""
        if e.version and e.version != self.cli_version:
            self.cli_version = e.version
            self._core.session_changed()
        if e.cwd and not self.cwd:
            self.cwd = e.cwd
        if e.gitBranch:
            self.git_branch = e.gitBranch

    def session_seen(self, sid: str | None) -> None:
        if sid and sid != self.session_id and sid not in self._session_id_set:
            self._add_session_id(sid)
            if self.session_id is None:
                self.session_id = sid
            self._core.session_changed()

    def reset_to(self, sid: str) -> None:
        """A conversation reset: ``sid`` is the session id from now on."""
        self.session_id = sid
        if sid not in self._session_id_set:
            self._add_session_id(sid)

    def _add_session_id(self, sid: str) -> None:
        self._session_id_set.add(sid)
        self.session_ids.append(sid)

    def on_init(self, e: F.Init, agent: str) -> None:
        self.cwd = e.cwd or self.cwd
        self.model = e.model or self.model
        self.cli_version = e.claude_code_version or self.cli_version
        self.permission_mode = e.permissionMode or self.permission_mode
        self.tools = e.tools or self.tools
        self.mcp_servers = e.mcp_servers or self.mcp_servers
        if e.session_id and e.session_id != self.session_id:
            if self.session_id is None:
                self.session_id = e.session_id
        self._core.session_changed()

    # --- the title ------------------------------------------------------------------------

    def on_title_row(self, e: F.Entry, agent: str) -> None:
        if isinstance(e, F.CustomTitle):
            self.set_title(e.customTitle, 0)
        elif isinstance(e, F.AiTitle):
            self.set_title(e.aiTitle, 1)
        elif isinstance(e, F.Summary):
            # a summary names this session only when its leaf is one of its rows: older
            # CLIs copy the summaries of earlier sessions into a resumed one's head
            leaf = e.leafUuid
            if not leaf or self._chain.knows(leaf):
                self.set_title(e.summary, 2)
            else:
                self._pending_summaries[leaf] = e.summary

    def prompt_title(self, text: str, *, command: bool = False) -> None:
        """A prompt's text titles the session when nothing better has: a typed
        prompt, or a slash command (its name and arguments) the model answered;
        a ``command`` not answered yet (it may be a local one, ``/model``)
        only while nothing else titles it (see :meth:`Turns.number`)."""
        rank = 4 if command else 3
        if self._title_rank > rank and text and not text.isspace():  # not strip(): a copy of 12 MB
            self.set_title(text, rank)

    def set_title(self, text: str, rank: int) -> None:
        if rank <= self._title_rank and text:
            head = text[:4096] if text[:4096].strip() else text.lstrip()[:4096]
            self.title = " ".join(head.split())[:200]  # not the whole text: 12 MB of words
            # split into a million strings took 13x the text in memory
            self._title_rank = rank
            self._core.session_changed()

    # --- lines the fold cannot use ------------------------------------------------------------

    def on_malformed(self, e: F.Malformed, agent: str) -> None:
        """A malformed line: a row of its own, or one more line of the row just
        before when that row holds the previous line of the same file with the
        same reason (so ``cctv run -- yes`` costs one row, not one per line)."""
        self.malformed_count += 1
        if len(self.malformed) < MALFORMED_KEPT:
            self.malformed.append((e.line_no, e.reason))
        core = self._core
        items = core.agents[agent].items if agent in core.agents else None
        last = items[-1] if items else None
        if (type(last) is ProblemItem and last.problem == "malformed"
                and last.source == core.source and last.last_line_no == e.line_no - 1
                and last.reason == e.reason):
            last.count += 1
            last.last_line_no = e.line_no
            core.touch(last)
            return
        core.problem(agent, e.line_no, "malformed", "malformed", e.reason)

    def repeated_malformed(self, line_no: int, changes: list[Change]) -> bool:
        """See :meth:`reducer.fold.Session.fold_repeated_malformed`."""
        items = self._core.agents[MAIN].items
        last = items[-1] if items else None
        if not (type(last) is ProblemItem and last.problem == "malformed"
                and last.source == MAIN and last.last_line_no == line_no - 1):
            return False
        self.lines += 1
        self.kinds["malformed"] += 1
        self.malformed_count += 1
        if len(self.malformed) < MALFORMED_KEPT:
            self.malformed.append((line_no, last.reason))
        last.count += 1
        last.last_line_no = line_no
        last.version += 1
        change = ItemUpdated(MAIN, last.index)
        if not changes or changes[-1] != change:
            changes.append(change)
        return True

    def on_unknown(self, e: F.Unknown, agent: str) -> None:
        self.unknown.append((e.line_no, e.kind_key))
        self._core.problem(agent, e.line_no, "unknown", e.kind_key,
                           f"unknown frame kind {e.kind_key!r}")
