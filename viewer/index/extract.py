"""One session file in, one list row and its searchable texts out.

The file (and its sub-agent files) is read by the viewer's own decoder and fold
(:class:`reducer.feed.Feed`, :func:`viewer.loader.load_subagents`), so the list
can never show another title or count than the viewer. Runs in worker
processes during a first indexing: everything here is picklable and imports no
Textual.

A live file caught mid-write is read to its last complete line; the rest is
read next time, when the line is whole. A file that is not live is read to its
end, a last line without a newline included, as the viewer reads it.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

import msgspec

from cctv.reducer.context import context_series, context_window
from cctv.reducer.costs import priced_requests
from cctv.reducer.feed import Feed
from cctv.reducer.format import clip
from cctv.reducer.lines import LineSplitter, RawLine
from cctv.reducer.entry_log import EntryLog
from cctv.reducer.fold import Session
from cctv.reducer.item_time import ItemTimes
from cctv.reducer.live_facts import live_facts
from cctv.reducer.searchable import searchable
from cctv.reducer.state import MAIN, Item, PromptItem, TextItem
from cctv.reducer.facts import session_facts
from cctv.reducer.timestamps import parse_timestamp, utc_day

from ..discovery import subagent_files
from ..subagent_tail import agent_file_found, agent_id_for
from .rows import TEXT_LIMIT, Extracted, SessionRow, TextRow, UsageRow, read_marks, tail_digest
from .scan import open_regular

__all__ = ["extract"]

PREVIEW_LIMIT = 2_000
_CHUNK = 8 << 20


def _read_from(path: Path, splitter: LineSplitter, fold: Callable[[list[RawLine]], object]) -> None:
    """Feed ``fold`` the complete lines ``path`` has past where ``splitter`` stopped."""
    with open_regular(path) as fh:
        fh.seek(splitter.offset)
        while chunk := fh.read(_CHUNK):
            batch = splitter.feed(chunk)
            if batch:
                fold(batch)


class MainScan(msgspec.Struct, frozen=True):
    """The row's scans of a main file's lines, kept with its checkpoint."""

    first_ts: str | None
    last_ts: str | None


class SessionRead:
    """One session file (and its sub-agent files) read so far, to be read on.

    Keeps the :class:`~reducer.feed.Feed`, where each file's read stopped (a
    trailing line still being written is held, not folded) and how far the
    row's scans got, so reading what a live session appended costs what was
    appended, not the whole file again. :func:`extract` keeps the reads of
    live files (see :data:`KEPT_READS`)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.feed = Feed(keep_raw=False)  # texts and rows never need a line's bytes
        self.main = LineSplitter()
        self.marks = b""
        """:func:`~viewer.index.rows.read_marks` of the main file where its read stopped."""
        self.agents: dict[Path, tuple[str, LineSplitter]] = {}
        """Sub-agent file → (its agent, where its read stopped)."""
        self.sound = True
        """False once a sub-agent file could not be read on (it shrank, or its last
        line had to be folded unfinished): the next read starts over."""
        self.misfiled = False
        """A sub-agent file's rows went to another agent than a fresh read gives
        them (its call was named since): this read must be made again."""
        # the row's scans, carried on
        self.entries_seen = 0
        self.first_ts: str | None = None
        self.last_ts: str | None = None
        self.items_seen = 0
        self.first_prompt: str | None = None
        self.last_reply: str | None = None
        # the texts given so far
        self.texts_given = False
        """:meth:`extracted` was asked once: only new items and :attr:`unsettled` ones can
        give new texts."""
        self.agent_items_seen: dict[str, int] = {}
        """Items of each agent whose texts were looked at."""
        self.unsettled: list[Item] = []
        """Items looked at whose texts a later row may still add to (see
        :func:`reducer.searchable.searchable`)."""
        self.restored_to = 0
        """Bytes of the main file whose fold came from its checkpoint, or went to one."""
        self.checkpoint_writer: threading.Thread | None = None
        """Reaps the forked child writing this read's checkpoint (see :mod:`viewer.fold_cache`)."""

    @property
    def end(self) -> int:
        """Bytes of the main file read: the end of its last complete line."""
        return self.main.offset - self.main.pending_size

    def unchanged(self) -> bool:
        """The bytes read so far are still the file's first bytes (it only grew)."""
        try:
            return os.path.getsize(self.path) >= self.end \
                and read_marks(self.path, self.end) == self.marks
        except OSError:
            return False

    @classmethod
    def restored(cls, path: Path) -> SessionRead | None:
        """A read of a big file going on from its checkpoint (see
        :mod:`viewer.fold_cache`: unchanged or grown since), or ``None``."""
        from .. import fold_cache

        try:
            st = os.stat(path)
        except OSError:
            return None
        if st.st_size < fold_cache.MIN_BYTES:
            return None
        found = fold_cache.load_checkpoint(path, st, keep_raw=False, keep_entries=True)
        if found is None or not isinstance(found.extra, MainScan):
            return None
        read = cls(path)
        read.feed = found.feed
        read.main = LineSplitter(line_no=found.header.lines, offset=found.header.end)
        read.restored_to = found.header.end
        scan = found.extra
        read.entries_seen = found.header.lines
        read.first_ts, read.last_ts = scan.first_ts, scan.last_ts
        return read

    def read_on(self) -> None:
        """Read what the main file and the sub-agent files gained since the last read;
        a big file read far enough leaves its checkpoint (before its sub-agent files)."""
        _read_from(self.path, self.main, self.feed.feed)
        self.marks = read_marks(self.path, self.end)
        self._scan_entries()
        if not self.agents and self._worth_keeping():
            from .. import fold_cache

            self.checkpoint_writer = fold_cache.save_in_child(
                self.path, self.feed, self.end, self.main.line_no,
                MainScan(self.first_ts, self.last_ts))
            self.restored_to = self.end
        if self.feed.session.format == "transcript":
            self._read_agents()

    def read_last_line(self) -> None:
        """Fold the main file's last line even though no newline ends it, as the
        viewer does (a file not written to for long ends so: it was not caught
        mid-write). Such a read cannot be read on."""
        last = self.main.flush()
        if last is not None:
            self.feed.feed([last])
            self.sound = False
            self._scan_entries()

    def _worth_keeping(self) -> bool:
        from .. import fold_cache

        return fold_cache.worth_keeping(self.restored_to, self.end)

    def _scan_entries(self) -> None:
        """Carry the row's scans of the main file's lines on to the lines read since."""
        for entry in self.feed.entries.scan(self.entries_seen):
            ts = getattr(entry, "timestamp", None)
            if ts:
                self.first_ts = self.first_ts or ts
                self.last_ts = ts
        self.entries_seen = len(self.feed.entries)

    def _read_agents(self) -> None:
        session = self.feed.session
        for agent_path, meta in subagent_files(self.path):
            known = self.agents.get(agent_path)
            if known is not None and known[0] != agent_id_for(agent_path, meta,
                                                              session.agent_file_ids):
                # the main file named this sub-agent's call since: a fresh read files
                # its rows under that call, so this read is wrong now
                self.misfiled = True
                return
            if known is None:
                agent = agent_id_for(agent_path, meta, session.agent_file_ids)
                agent_file_found(session, agent_path, meta, agent)
                known = self.agents[agent_path] = (agent, LineSplitter())
            agent, splitter = known
            try:
                if os.path.getsize(agent_path) < splitter.offset:
                    self.sound = False  # rewritten: only a new read is right
                    continue
                _read_from(agent_path, splitter,
                           lambda batch, agent=agent: self.feed.feed_agent_file(batch, agent))
            except OSError:
                continue
            if splitter.pending_size:
                # as the viewer reads it, an unfinished last line is folded (and shown
                # as such); it cannot be read on once folded
                last = splitter.flush()
                if last is not None:
                    self.feed.feed_agent_file([last], agent)
                self.sound = False

    def extracted(self, project_dir: str, size: int, mtime: float,
                  after_line: int) -> Extracted:
        """The row, and the texts of lines after ``after_line`` (all of them when 0)."""
        feed = self.feed
        session = feed.session
        entries = feed.entries
        self._scan_prompts(session.agents[MAIN].items)
        texts = self._texts(after_line)
        start, last = parse_timestamp(self.first_ts), parse_timestamp(self.last_ts)
        facts = session_facts(session)
        used = facts.tokens
        window = context_window(session)
        context = context_series(session, window)
        p = self.path
        row = SessionRow(
            session_id=session.session_id or p.stem,
            path=str(p),
            project=session.cwd or Path(project_dir).name,
            project_dir=project_dir,
            title=facts.title,
            first_prompt=clip(self.first_prompt, PREVIEW_LIMIT) if self.first_prompt else None,
            git_branch=session.git_branch,
            started=self.first_ts,
            last_activity=self.last_ts,
            duration_s=round(last - start, 3) if start is not None and last is not None else None,
            status=facts.state,
            turns=facts.turns,
            prompts=facts.prompts,
            tool_calls=facts.tool_calls.total,
            cost_usd=facts.cost_usd,
            cost_source=facts.cost_source,
            context=[p.tokens for p in context],
            compacted=[p.compacted for p in context],
            context_window=window,
            input_tokens=used.input,
            output_tokens=used.output,
            cache_read_tokens=used.cache_read,
            cache_write_tokens=used.cache_write,
            model=session.model,
            bytes=size,
            subagents=facts.subagents,
            mtime=mtime,
            last_reply=clip(self.last_reply, PREVIEW_LIMIT) if self.last_reply else None,
            tasks=[{"description": t.description, "status": t.status} for t in facts.tasks][:50],
            format=session.format,
            live_facts=live_facts(session, ItemTimes(feed).at_line),
            context_pct=round(100 * (session.context_tokens or 0) / session.context_window)
            if session.context_window else None,
        )
        return Extracted(row=row, texts=texts, indexed_bytes=self.end, lines=len(entries),
                         tail=tail_digest(self.marks), usage=_usage_rows(session))

    def _scan_prompts(self, items: list[Item]) -> None:
        """Carry the first typed prompt and the last reply on over the main agent's new items."""
        for item in items[self.items_seen:]:
            if isinstance(item, PromptItem):
                typed = item.text.strip()
                first = self.first_prompt
                if typed and (first is None or first.startswith("/")) \
                        and not (first and typed.startswith("/")):
                    self.first_prompt = typed  # a slash command only when nothing else was typed
            elif isinstance(item, TextItem) and item.text.strip():
                self.last_reply = item.text
        self.items_seen = len(items)

    def _texts(self, after_line: int) -> list[TextRow]:
        """The searchable texts of lines after ``after_line`` of the main file
        (a sub-agent file's only when ``after_line`` is 0: a main file that
        grew comes with unchanged sub-agent files, see
        :func:`viewer.index.refresh.plan`): the settled texts of the items
        not looked at yet and of the ones unsettled when last looked at."""
        feed = self.feed
        if not after_line or not self.texts_given:
            self.agent_items_seen = {}
            self.unsettled = []
        candidates = self.unsettled
        self.unsettled = []
        files = {agent: os.path.relpath(path, self.path.parent)
                 for path, (agent, _) in self.agents.items()}
        for agent_id, agent in feed.session.agents.items():
            seen = self.agent_items_seen.get(agent_id, 0)
            candidates += agent.items[seen:]
            self.agent_items_seen[agent_id] = len(agent.items)
        texts: list[TextRow] = []
        for item in candidates:
            found, settled = searchable(item, TEXT_LIMIT)
            if not settled:
                self.unsettled.append(item)
            source = item.source
            if source != MAIN and after_line:
                continue  # a sub-agent file's: given by the read that read it whole
            agent = item.agent if item.agent != MAIN else None
            for text in found:
                if source == MAIN and text.line <= after_line:
                    continue
                lines = feed.entries if source == MAIN else feed.agent_entries.get(source)
                texts.append(TextRow(text.line, text.role, _stamp(lines, text.line),
                                     text.text, text.chars, files.get(source), agent))
        self.texts_given = True
        return texts


def _stamp(entries: EntryLog | None, line_no: int) -> str | None:
    """The ``timestamp`` of line ``line_no`` of ``entries`` (its file's lines, one
    per line: the index never collapses malformed runs). Read from the log, never
    from the file again: a checkpoint's lines are not held."""
    at = line_no - 1
    if entries is not None and 0 <= at < len(entries) and entries.line_no(at) == line_no:
        return entries.timestamp(at)
    return None


def _usage_rows(session: Session) -> list[UsageRow]:
    """Every request of ``session`` with its share of the session's cost."""
    out = []
    for p in priced_requests(session):
        r, t = p.request, p.request.tokens
        out.append(UsageRow(f"{p.key[0]} {p.key[1] or ''}", utc_day(r.at) or "", r.model, t.input, t.output,
                            t.cache_read, t.cache_write_5m + t.cache_write_1h, p.usd, p.source))
    return out


KEPT_READS = 4
"""Reads of live sessions kept in this process to be read on (the browser's refreshes)."""
KEPT_BYTES = 256 << 20
"""...and at most this many bytes of files between them."""
_READS: OrderedDict[str, SessionRead] = OrderedDict()


def extract(path: str, project_dir: str, size: int, mtime: float, after_line: int = 0,
            *, keep: bool = False) -> Extracted:
    """Read one session file (and its sub-agents) into its row and its texts of
    lines after ``after_line`` (the lines an earlier read already indexed).

    ``keep``: the file is live; keep this read, and read on from a kept one when
    the file only grew since (what it had is not decoded and folded again)."""
    read = _READS.pop(path, None)
    if read is not None and not (read.sound and read.unchanged()
                                 and after_line in (0, len(read.feed.entries))):
        read = None  # rewritten, or not where the index's read of it stopped
    if read is None:
        read = SessionRead.restored(Path(path)) or SessionRead(Path(path))
    read.read_on()
    if read.misfiled:
        read = SessionRead(Path(path))
        read.read_on()
    if keep:
        _keep(path, read)
    else:  # not live: its last line is read as the viewer reads it
        read.read_last_line()
    return read.extracted(project_dir, size, mtime, after_line)


def _keep(path: str, read: SessionRead) -> None:
    _READS[path] = read
    total = 0
    for kept_path in reversed(list(_READS)):  # newest first; drop the oldest past the bounds
        total += os.path.getsize(kept_path) if os.path.exists(kept_path) else 0
        if len(_READS) > KEPT_READS or total > KEPT_BYTES:
            if kept_path != path:
                del _READS[kept_path]
