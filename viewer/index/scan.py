"""Which session files a projects folder holds, and a cheap signature of each.

A session is ``<projects>/<folder>/<sessionId>.jsonl``; its sub-agent transcripts
(``<sessionId>/subagents/**/agent-*.jsonl``, or, from older CLIs, ``agent-*.jsonl``
beside it) belong to it and are never sessions of their own. Only regular
files are sessions: a FIFO, a device, a socket or a link to one named
``*.jsonl`` is skipped with a note (reading it would hang, or never end), as is
a folder that cannot be read. Only ``stat`` and directory listings here:
nothing is opened (:func:`open_regular` opens what is read later), nothing is
written.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

__all__ = ["SessionFile", "default_projects_dir", "file_kind", "is_id_start", "open_regular", "resolve_root",
           "scan", "session_file", "session_files", "sessions_by_id"]


@dataclass(frozen=True, slots=True)
class SessionFile:
    """One session file as ``stat`` sees it now."""

    path: str
    project_dir: str
    size: int
    mtime_ns: int
    sub_sig: str
    """A digest of the sizes and times of the sub-agent files that belong to it."""
    sub_mtime_ns: int
    """The newest modification time among those sub-agent files (0 if none)."""


def default_projects_dir() -> Path:
    """``$CLAUDE_CONFIG_DIR/projects``, else ``~/.claude/projects`` (the one
    place of this rule: :func:`viewer.discovery.projects_dir` asks it; it lives
    here, not there, because discovery brings the decoder and the fold along
    and the session browser starts without them)."""
    base = os.environ.get("CLAUDE_CONFIG_DIR")
    return (Path(base).expanduser() if base else Path.home() / ".claude") / "projects"


def resolve_root(directory: str | os.PathLike[str] | None = None) -> Path:
    """The projects folder for ``directory``: a config root holding ``projects/``
    means that folder; anything else is taken as the projects folder itself.
    ``None`` means ``$CLAUDE_CONFIG_DIR/projects`` (default ``~/.claude/projects``)."""
    if directory is None:
        return default_projects_dir()
    path = Path(os.path.abspath(Path(directory).expanduser()))
    if (path / "projects").is_dir():
        return path / "projects"
    return path


def file_kind(mode: int) -> str:
    """What a file of this ``st_mode`` is, in a word: "FIFO", "device"…"""
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISDIR(mode):
        return "directory"
    if stat.S_ISFIFO(mode):
        return "FIFO"
    if stat.S_ISSOCK(mode):
        return "socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device"
    return "special file"


def open_regular(path: str | os.PathLike[str]) -> BinaryIO:
    """``path`` opened for reading when it is a regular file: a FIFO put there
    since it was listed is never waited on (``OSError`` instead), nor a device read."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise OSError(errno.EINVAL, f"a {file_kind(mode)}, not a regular file", os.fsdecode(path))
        os.set_blocking(fd, True)
    except OSError:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")


def _skipped(notes: list[str] | None, path: str, why: str) -> None:
    if notes is not None:
        notes.append(f"{path}: {why}: skipped")


def _unreadable(notes: list[str] | None, path: str, exc: OSError) -> None:
    _skipped(notes, path, f"cannot be read ({exc.strerror or exc})")


def _regular(entry: os.DirEntry[str], notes: list[str] | None) -> os.stat_result | None:
    """``entry``'s stat (through a link) when it is a regular file; else ``None``, noted."""
    st = entry.stat()
    if stat.S_ISREG(st.st_mode):
        return st
    _skipped(notes, entry.path, f"a {file_kind(st.st_mode)}, not a session file")
    return None


def _stat_files(folder: str, prefix: str = "agent-",
                notes: list[str] | None = None) -> list[tuple[str, int, int]]:
    """``(name, size, mtime_ns)`` of the ``agent-*.jsonl`` files under ``folder``, recursively."""
    out: list[tuple[str, int, int]] = []
    try:
        with os.scandir(folder) as it:
            entries = list(it)
    except FileNotFoundError:
        return out
    except OSError as exc:
        _unreadable(notes, folder, exc)
        return out
    for entry in entries:
        try:
            if entry.is_dir(follow_symlinks=False):
                out.extend((f"{entry.name}/{n}", s, m)
                           for n, s, m in _stat_files(entry.path, prefix, notes))
            elif entry.name.startswith(prefix) and entry.name.endswith(".jsonl"):
                st = _regular(entry, notes)
                if st is not None:
                    out.append((entry.name, st.st_size, st.st_mtime_ns))
        except OSError:
            continue
    return out


def _signature(stats: list[tuple[str, int, int]]) -> tuple[str, int]:
    if not stats:
        return "", 0
    stats.sort()
    digest = hashlib.blake2b(repr(stats).encode(), digest_size=12).hexdigest()
    return digest, max(m for _, _, m in stats)


def scan(root: Path, notes: list[str] | None = None) -> list[SessionFile]:
    """Every session file under ``root`` with its signature; an unreadable or
    missing folder gives what could be listed (possibly nothing). ``notes``
    gets a line for each thing skipped: a folder that cannot be read, a
    ``*.jsonl`` that is not a regular file."""
    found: list[SessionFile] = []
    try:
        with os.scandir(root) as it:
            projects = [e.path for e in it if e.is_dir()]
    except FileNotFoundError:
        return found
    except OSError as exc:
        _unreadable(notes, str(root), exc)
        return found
    for project in sorted(projects):
        found += _scan_project(project, notes)
    return found


def _scan_project(project: str, notes: list[str] | None) -> list[SessionFile]:
    try:
        with os.scandir(project) as it:
            entries = list(it)
    except OSError as exc:
        _unreadable(notes, project, exc)
        return []
    dirs = set()
    sessions: list[tuple[os.DirEntry[str], os.stat_result]] = []
    legacy: list[tuple[str, int, int]] = []
    for entry in entries:
        name = entry.name
        try:
            if entry.is_dir():
                dirs.add(name)
            elif name.endswith(".jsonl") and (st := _regular(entry, notes)) is not None:
                if name.startswith("agent-"):
                    legacy.append((name, st.st_size, st.st_mtime_ns))
                else:
                    sessions.append((entry, st))
        except OSError:
            continue
    found: list[SessionFile] = []
    for entry, st in sessions:
        stem = entry.name[: -len(".jsonl")]
        stats = list(legacy)
        if stem in dirs:
            stats += [(f"{stem}/{n}", s, m) for n, s, m
                      in _stat_files(os.path.join(project, stem, "subagents"), notes=notes)]
        sig, sub_mtime = _signature(stats)
        found.append(SessionFile(entry.path, project, st.st_size, st.st_mtime_ns, sig, sub_mtime))
    return found


def session_file(path: Path) -> SessionFile | None:
    """One session file (``<project>/<session>.jsonl``) with its signature,
    exactly as :func:`scan` lists it (its project folder is listed again);
    ``None`` when it is gone or not a regular file."""
    wanted = str(path)
    return next((f for f in _scan_project(str(path.parent), None) if f.path == wanted), None)


def session_files(root: Path) -> list[Path]:
    """Every ``<project>/<session>.jsonl`` under ``root`` (no sub-agent files),
    by directory listings only (no signatures: see :func:`scan`)."""
    files: list[Path] = []
    try:
        projects = [p for p in root.iterdir() if p.is_dir()]
    except OSError:
        return files
    for project in projects:
        try:
            entries = list(project.iterdir())
        except OSError:
            continue
        for entry in entries:
            name = entry.name
            if name.endswith(".jsonl") and not name.startswith("agent-") and entry.is_file():
                files.append(entry)
    return files


_SESSION_ID = re.compile(r"[0-9a-fA-F][0-9a-fA-F-]{5,35}")
"""A session id (a UUID), or the start of one: at least 6 characters."""


def is_id_start(word: str) -> bool:
    """Whether ``word`` can be a session id or its start (6 to 36 hex digits and dashes)."""
    return _SESSION_ID.fullmatch(word) is not None


def sessions_by_id(word: str, root: Path | None = None) -> list[Path] | None:
    """The session files under ``root`` (default: the projects folder) whose
    id is ``word`` or starts with it, sorted by path; ``None`` when ``word``
    does not look like one (hex digits and dashes, 6 to 36 of them). What
    ``cctv sessions`` prints, or the first characters of it, then opens a
    session from any folder."""
    if not is_id_start(word):
        return None
    prefix = word.lower()
    base = root if root is not None else default_projects_dir()
    return sorted(p for p in session_files(base) if p.name.lower().startswith(prefix))
