"""Which session files a projects folder holds, and a cheap signature of each.

A session is ``<projects>/<folder>/<sessionId>.jsonl``; its sub-agent transcripts
(``<sessionId>/subagents/**/agent-*.jsonl``, or, from older CLIs, ``agent-*.jsonl``
beside it) belong to it and are never sessions of their own. Only ``stat`` and
directory listings here: nothing is opened, nothing is written.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

__all__ = ["SessionFile", "default_projects_dir", "resolve_root", "scan", "session_files",
           "sessions_by_id"]


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


def _stat_files(folder: str, prefix: str = "agent-") -> list[tuple[str, int, int]]:
    """``(name, size, mtime_ns)`` of the ``agent-*.jsonl`` files under ``folder``, recursively."""
    out: list[tuple[str, int, int]] = []
    try:
        with os.scandir(folder) as it:
            entries = list(it)
    except OSError:
        return out
    for entry in entries:
        try:
            if entry.is_dir(follow_symlinks=False):
                out.extend((f"{entry.name}/{n}", s, m) for n, s, m in _stat_files(entry.path, prefix))
            elif entry.name.startswith(prefix) and entry.name.endswith(".jsonl"):
                st = entry.stat()
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


def scan(root: Path) -> list[SessionFile]:
    """Every session file under ``root`` with its signature; an unreadable or
    missing folder gives what could be listed (possibly nothing)."""
    found: list[SessionFile] = []
    try:
        with os.scandir(root) as it:
            projects = [e.path for e in it if e.is_dir()]
    except OSError:
        return found
    for project in sorted(projects):
        try:
            with os.scandir(project) as it:
                entries = list(it)
        except OSError:
            continue
        dirs = set()
        sessions: list[os.DirEntry[str]] = []
        legacy: list[tuple[str, int, int]] = []
        for entry in entries:
            name = entry.name
            try:
                if entry.is_dir():
                    dirs.add(name)
                elif name.endswith(".jsonl"):
                    if name.startswith("agent-"):
                        st = entry.stat()
                        legacy.append((name, st.st_size, st.st_mtime_ns))
                    else:
                        sessions.append(entry)
            except OSError:
                continue
        for entry in sessions:
            try:
                st = entry.stat()
            except OSError:
                continue
            stem = entry.name[: -len(".jsonl")]
            stats = list(legacy)
            if stem in dirs:
                stats += [(f"{stem}/{n}", s, m) for n, s, m
                          in _stat_files(os.path.join(project, stem, "subagents"))]
            sig, sub_mtime = _signature(stats)
            found.append(SessionFile(entry.path, project, st.st_size, st.st_mtime_ns, sig, sub_mtime))
    return found


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


def sessions_by_id(word: str, root: Path | None = None) -> list[Path] | None:
    """The session files under ``root`` (default: the projects folder) whose
    id is ``word`` or starts with it, sorted by path; ``None`` when ``word``
    does not look like one (hex digits and dashes, 6 to 36 of them). What
    ``cctv sessions`` prints, or the first characters of it, then opens a
    session from any folder."""
    if not _SESSION_ID.fullmatch(word):
        return None
    prefix = word.lower()
    base = root if root is not None else default_projects_dir()
    return sorted(p for p in session_files(base) if p.name.lower().startswith(prefix))
