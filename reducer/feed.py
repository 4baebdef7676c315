"""Lines in, folded session out: the one path every source takes.

:class:`Feed` decodes numbered lines, detects the format from the first lines,
keeps every decoded entry (for the raw view and for replay) and folds it into
its :class:`~reducer.fold.Session`.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from .collector import collector_paused, promote_to_oldest
from .decode import decode_line, detect_format
import msgspec

from .entry_log import EntryLog, Table
from .frames import Entry, Malformed
from .giant import GiantLine, fill
from .lines import LineSplitter, RawLine
from .fold import Session
from .state import Change

__all__ = ["Feed", "FeedState", "read_file_lines"]

_SNIFF_LINES = 20

_BULK_LINES = 500
"""A batch this big is a bulk load: what it made is promoted to the oldest GC generation."""


class FeedState(msgspec.Struct, frozen=True):
    """What a :class:`Feed` holds besides its session, as a checkpoint keeps it."""

    format: str | None
    sniff: list[bytes]
    malformed_bytes: bytes | None
    entries: Table
    """The main source's lines (their places, not the entries)."""


class Feed:
    """Decodes and folds lines from one source (plus its sub-agent files).

    With ``keep_raw=False`` the entries do not hold their bytes (``raw`` is
    empty): for files, whose lines can be read again by offset when they are
    asked for (the viewer's ``rawstore``), this halves the memory a big
    session takes. A pipe or a command's output must keep them."""

    def __init__(self, *, keep_raw: bool = True, keep_malformed_runs: bool = True,
                 keep_entries: bool = True, session: Session | None = None) -> None:
        self.keep_raw = keep_raw
        """Whether entries keep the bytes of their line."""
        self.keep_entries = keep_entries
        """Whether decoded entries are held (else only their place: a summary)."""
        self.session = session if session is not None else Session()
        self.keep_malformed_runs = keep_malformed_runs
        """Keep every line of a run of malformed lines; when false (a live viewer
        fed endless garbage) only the first line of each run is kept, as its row
        (:class:`~reducer.state.ProblemItem`) counts the rest."""
        self.entries = EntryLog(keep_entries)
        """Every decoded line of the main source, in order (index = line_no - 1,
        unless runs of malformed lines are collapsed)."""
        self.agent_entries: dict[str, EntryLog] = {}
        """Decoded lines of each sub-agent transcript file, by agent id."""
        self._sniff: list[bytes] = []
        self._malformed_bytes: bytes | None = None
        """The last line, when it was malformed (for collapsing runs)."""

    def state(self) -> FeedState:
        """What to keep beside the session to go on later (:meth:`resumed`).
        Only the main source's lines are kept: a checkpoint is taken before
        any sub-agent file is folded."""
        assert not self.agent_entries, "a checkpoint is taken before sub-agent files are folded"
        return FeedState(self.session.format, list(self._sniff), self._malformed_bytes,
                         self.entries.table())

    @classmethod
    def resumed(cls, session: Session, state: FeedState, *, keep_raw: bool,
                keep_entries: bool, keep_malformed_runs: bool = True) -> Feed:
        """A feed going on from ``session`` and the ``state`` kept with it: the
        lines it folded are not held (read again through ``entries.reader``)."""
        feed = cls(keep_raw=keep_raw, keep_entries=keep_entries,
                   keep_malformed_runs=keep_malformed_runs, session=session)
        session.format = state.format
        feed.entries = EntryLog(keep_entries, state.entries)
        feed._sniff = list(state.sniff)
        feed._malformed_bytes = state.malformed_bytes
        return feed

    def feed(self, lines: Iterable[RawLine], *, received_at: float | None = None) -> list[Change]:
        """Decode and fold lines of the main source."""
        changes: list[Change] = []
        session = self.session
        fold = session._fold
        entries = self.entries
        sniff = self._sniff
        start = len(entries)
        with collector_paused() as paused:
            batch = lines if isinstance(lines, list) else list(lines)
            # a giant line comes alone (viewer.sources.FileTail splits it)
            decode = _decode_giant if len(batch) == 1 and type(batch[0][2]) is GiantLine \
                else decode_line
            first = 0
            while len(sniff) < _SNIFF_LINES and first < len(batch):
                # a source's first lines also tell its format, one line at a time
                line_no, offset, data = batch[first]
                first += 1
                sniff.append(data[:4096])
                session.format = detect_format(sniff)
                entry = decode(data, line_no, offset, self.keep_raw)
                entries.append(entry)
                fold(entry, None, received_at, changes)
            self._decode_and_fold(batch[first:] if first else batch, entries, None,
                                  received_at, changes, decode)
            if paused and len(entries) - start >= _BULK_LINES:
                promote_to_oldest()
        return changes

    def feed_agent_file(self, lines: Iterable[RawLine], agent: str) -> list[Change]:
        """Fold the rows of a sub-agent transcript into the sub-agent ``agent``."""
        changes: list[Change] = []
        kept = self.agent_entries.get(agent)
        if kept is None:
            kept = self.agent_entries[agent] = EntryLog(self.keep_entries)
        start = len(kept)
        with collector_paused() as paused:
            self._decode_and_fold(lines, kept, agent, None, changes)
            if paused and len(kept) - start >= _BULK_LINES:
                promote_to_oldest()
        return changes

    def _decode_and_fold(self, lines: Iterable[RawLine], kept: EntryLog, agent: str | None,
                         received_at: float | None, changes: list[Change],
                         decode_line=decode_line) -> None:
        """Decode the whole batch, keep it, and only then fold it: two tight loops
        run ~8% faster than one that alternates the decoder and the fold."""
        if not self.keep_malformed_runs and agent is None:
            self._fold_collapsing(lines, kept, received_at, changes, decode_line)
            return
        keep = self.keep_raw
        decoded = [decode_line(data, line_no, offset, keep) for line_no, offset, data in lines]
        kept.extend(decoded)
        self.session._fold_all(decoded, agent, received_at, changes)

    def _fold_collapsing(self, lines: Iterable[RawLine], kept: EntryLog,
                         received_at: float | None, changes: list[Change],
                         decode_line=decode_line) -> None:
        """The main source's lines, keeping only the first line of a run of
        malformed lines; a line with the same bytes as the malformed one before
        it is not even decoded again (``yes`` goes at ~1M lines/s, not 50k)."""
        session = self.session
        fold = session._fold
        repeat = session._fold_repeated_malformed
        append = kept.append
        previous = self._malformed_bytes
        keep = self.keep_raw
        for line_no, offset, data in lines:
            if data == previous and repeat(line_no, changes):
                continue
            entry = decode_line(data, line_no, offset, keep)
            if type(entry) is Malformed:
                last = kept[-1] if kept else None
                if not (type(last) is Malformed and last.reason == entry.reason):  # type: ignore[union-attr]
                    append(entry)
                previous = data
            else:
                append(entry)
                previous = None
            fold(entry, None, received_at, changes)
        self._malformed_bytes = previous

    def entry_at(self, line_no: int, agent: str | None = None) -> Entry | None:
        """The decoded line ``line_no`` of the main source, or of the sub-agent
        file of ``agent`` when that agent was read from a file of its own."""
        entries = self.agent_entries.get(agent, self.entries) if agent else self.entries
        return entries.find(line_no)


def _decode_giant(data: GiantLine, line_no: int, offset: int, keep_raw: bool) -> Entry:
    """A giant line's entry: its skeleton decoded, its long strings put back
    (see :mod:`reducer.giant`). Its bytes stay on disk, whatever ``keep_raw`` says."""
    return fill(decode_line(data, line_no, offset, False), data.strings)  # type: ignore[return-value]


def read_file_lines(path: str | Path, chunk_size: int = 8 << 20) -> Iterable[list[RawLine]]:
    """Batches of a file's lines, read in big chunks; a last line without
    newline is included (the file is read as it is now)."""
    splitter = LineSplitter()
    with open(path, "rb") as fh:
        while chunk := fh.read(chunk_size):
            with collector_paused():
                batch = splitter.feed(chunk)
            if batch:
                yield batch
    last = splitter.flush()
    if last is not None:
        yield [last]
