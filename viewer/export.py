"""``cctv export PATH --md``, and where the viewer's export command writes.

Headless: imports no Textual (tests/test_import_hygiene.py checks it). The
Markdown itself is :func:`reducer.export_md.export_markdown`.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from cctv.reducer.export_md import export_markdown
from cctv.reducer.feed import Feed
from cctv.reducer.filters import ViewFilter, parse_hide
from cctv.reducer.item_time import ItemTimes
from cctv.reducer.safe import visible
from cctv.reducer.state import MAIN

from .loader import InputError, load_path
from .storage import CacheArea, DiskError

__all__ = ["EXPORTS", "run_export", "export_file_name", "write_export"]

EXPORTS = CacheArea("exports", what="exports")
"""Where an export goes when the current directory cannot take it."""


def export_file_name(feed: Feed, agent_id: str = MAIN, now: float | None = None) -> str:
    """``cctv-<session>-<YYYYmmdd-HHMMSS>.md`` (``-agent-…`` for a sub-agent)."""
    session = feed.session
    sid = (session.session_id or "session")[:8]
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now))
    agent = f"-agent-{agent_id[-8:]}" if agent_id != MAIN else ""
    name = f"cctv-{sid}{agent}-{stamp}.md"
    return re.sub(r"[^A-Za-z0-9._-]", "_", name)


def _folders(directory: Path | None) -> Iterator[Path]:
    if directory is not None:
        yield directory
        return
    try:
        yield Path.cwd()
    except OSError:  # the current directory was removed
        pass
    try:
        yield EXPORTS.writable_folder()
    except DiskError:
        return


def write_export(text: str, name: str, directory: Path | None = None) -> Path:
    """Write ``text`` to ``name`` in ``directory`` (the current directory by
    default), falling back to the cache's ``exports/`` (or a temporary folder)
    when that one is not writable; never overwrites a file (a ``-2``, ``-3``…
    suffix is added). Returns the path; raises ``OSError`` when no folder takes it."""
    last_error: OSError | None = None
    for folder in _folders(directory):
        try:
            folder.mkdir(parents=True, exist_ok=True)
            stem, suffix = os.path.splitext(name)
            for n in range(1, 1000):
                path = folder / (name if n == 1 else f"{stem}-{n}{suffix}")
                try:
                    with open(path, "x", encoding="utf-8") as fh:
                        fh.write(text)
                    return path
                except FileExistsError:
                    continue
        except OSError as exc:
            last_error = exc
            continue
    raise last_error or OSError("no place to write the export")


def run_export(path: str, out_file: str | None, *, hide: str = "", only_errors: bool = False,
               only_tool: str | None = None, times: bool = True,
               out: TextIO, err: TextIO) -> int:
    """Write the session at ``path`` as Markdown to ``out_file`` (``-`` or
    ``None``: standard output). Exit 0, or 2 when the input cannot be read or a
    filter is not understood."""
    try:
        view_filter = ViewFilter(hidden=parse_hide(hide), only_errors=only_errors,
                                 only_tool=only_tool or None)
    except ValueError as exc:
        print(visible(f"cctv export: {exc}", oneline=True), file=err)
        return 2
    try:
        # the Markdown is made of the fold; times come from the lines' places
        feed = load_path(Path(path), keep_raw=False, keep_entries=False, checkpoints=True)
    except InputError as exc:
        print(visible(f"cctv: {exc}", oneline=True), file=err)
        return 2
    time_of = ItemTimes(feed).of if times else None
    text = export_markdown(feed.session, view_filter=view_filter, time_of=time_of)
    if out_file in (None, "-"):
        out.write(text)
        return 0
    try:
        Path(out_file).write_text(text, encoding="utf-8")
    except OSError as exc:
        print(visible(f"cctv export: cannot write {out_file}: {exc.strerror or exc}", oneline=True),
              file=err)
        return 2
    print(visible(f"wrote {out_file} ({len(text.encode()):,} bytes)", oneline=True), file=err)
    return 0
