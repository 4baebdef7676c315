"""Loading a whole session from disk: the file, then its sub-agent transcripts."""

from __future__ import annotations

import stat
from pathlib import Path

from cctv.reducer.feed import Feed, read_file_lines

from .discovery import subagent_files
from .index.scan import file_kind
from .subagent_tail import agent_file_found, agent_id_for

__all__ = ["load_path", "load_subagents", "InputError", "check_readable"]


class InputError(Exception):
    """A path cctv cannot read; the message names it."""


def check_readable(path: Path) -> None:
    """Raise :class:`InputError` for a missing, directory, device, socket or
    unreadable path. A FIFO is read as the pipe it is (not tried first: that
    would wait for a writer and take its first byte)."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if stat.S_ISDIR(mode):
        raise InputError(f"{path}: is a directory, not a session file")
    if stat.S_ISFIFO(mode):
        return
    if not stat.S_ISREG(mode):
        raise InputError(f"{path}: is a {file_kind(mode)}, not a session file")
    try:
        with open(path, "rb") as fh:
            fh.read(1)
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})") from None


def load_subagents(feed: Feed, path: Path) -> int:
    """Fold the sub-agent transcripts that sit beside an on-disk session.

    Each file's rows go to the sub-agent started by the tool_use named in its
    ``.meta.json`` (``toolUseId``), or, failing that, to the one whose tool
    result named its agent id. Returns how many files were folded."""
    count = 0
    for agent_path, meta in subagent_files(path):
        tool_use_id = agent_id_for(agent_path, meta, feed.session.agent_file_ids)
        agent_file_found(feed.session, agent_path, meta, tool_use_id)
        try:
            for batch in read_file_lines(agent_path):
                feed.feed_agent_file(batch, tool_use_id)
        except OSError:
            continue
        count += 1
    return count


def load_path(path: str | Path, *, subagents: bool = True, keep_raw: bool = True,
              keep_entries: bool = True, checkpoints: bool = False) -> Feed:
    """Decode and fold a whole file (and, for an on-disk transcript, its
    sub-agent files). Raises :class:`InputError` if the path cannot be read.

    ``keep_raw=False`` when nothing will ask for a line's bytes (a summary),
    or when they will be read back (:class:`viewer.rawstore.RawStore`).
    ``keep_entries=False`` when only the fold is needed (a summary: the
    lines' places are kept, not their entries). ``checkpoints``: restore
    the main file's fold from its checkpoint in the cache, and keep one
    (:mod:`viewer.fold_cache`; the headless commands)."""
    p = Path(path)
    check_readable(p)
    try:
        if checkpoints and stat.S_ISREG(p.stat().st_mode):
            from .fold_cache import open_feed

            feed = open_feed(p, keep_raw=keep_raw, keep_entries=keep_entries).feed
        else:
            feed = Feed(keep_raw=keep_raw, keep_entries=keep_entries)
            for batch in read_file_lines(p):
                feed.feed(batch)
    except OSError as exc:
        raise InputError(f"{p}: read failed ({exc.strerror or exc})") from None
    if subagents and feed.session.format == "transcript":
        load_subagents(feed, p)
    return feed
