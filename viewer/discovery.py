"""Find Claude Code sessions on disk, fast, without parsing whole transcripts.

Layout (see reference TRANSCRIPTS.md): ``$CLAUDE_CONFIG_DIR/projects`` (or
``~/.claude/projects``) holds one folder per sanitised cwd, each with
``<sessionId>.jsonl`` trunks and ``<sessionId>/subagents/**/agent-<id>.jsonl``
sub-agent transcripts (older CLIs put ``agent-<id>.jsonl`` in the project folder).

Listing reads only a 64 KiB head and a 64 KiB tail of each file (the Python SDK's
``LITE_READ_BUF_SIZE`` approach) and pulls fields out with regexes, decoding only
the few short lines that can carry a title or the first prompt. Nothing here raises
on odd content: a half-written, truncated or binary file yields what could be read.

This module must not import Textual or Rich.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cctv.reducer.decode import Format, detect_format
from cctv.reducer.format import clip

from .index.scan import default_projects_dir, open_regular, session_files

__all__ = [
    "HEAD_BYTES",
    "Format",
    "TAIL_BYTES",
    "SessionInfo",
    "latest_session",
    "list_sessions",
    "projects_dir",
    "read_session_info",
    "sniff_format",
    "subagent_files",
]

HEAD_BYTES = 64 * 1024
TAIL_BYTES = 64 * 1024
TITLE_MAX = 100



def projects_dir() -> Path:
    """Return ``$CLAUDE_CONFIG_DIR/projects``, else ``~/.claude/projects``."""
    return default_projects_dir()


@dataclass
class SessionInfo:
    """What a session list shows about one ``<project>/<session>.jsonl`` file.

    Timestamps are the ISO strings found in the rows (``None`` if absent);
    ``mtime`` is the file's modification time in epoch seconds.
    """

    path: Path
    project: str
    project_path: str
    session_id: str
    title: str = ""
    first_prompt: str | None = None
    last_prompt: str | None = None
    custom_title: str | None = None
    ai_title: str | None = None
    summary: str | None = None
    first_timestamp: str | None = None
    last_timestamp: str | None = None
    mtime: float = 0.0
    size: int = 0
    git_branch: str | None = None
    version: str | None = None
    subagent_count: int = 0


# --------------------------------------------------------------------------- regexes

_JSON_STR = r'"((?:[^"\\]|\\.)*)"'


def _key_re(key: str) -> re.Pattern[str]:
    return re.compile(r'"' + re.escape(key) + r'"\s*:\s*' + _JSON_STR)


_TIMESTAMP_RE = _key_re("timestamp")
_CWD_RE = _key_re("cwd")
_GIT_BRANCH_RE = _key_re("gitBranch")
# Only semver-looking values: "version" is also a key of nested objects (plugins, …).
_VERSION_RE = re.compile(r'"(?:version|claude_code_version)"\s*:\s*"(\d+\.\d+\.\d+[^"\\]*)"')
_SESSION_ID_RE = re.compile(r'"(?:sessionId|session_id)"\s*:\s*"([0-9A-Za-z_-]{6,})"')
_META_LINE_RE = re.compile(r'"type"\s*:\s*"(custom-title|ai-title|summary|last-prompt)"')
_USER_LINE_RE = re.compile(r'"type"\s*:\s*"user"')

# Prompt texts that are not something a human typed.
_NON_PROMPT_PREFIXES = (
    "<command-",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
    "<system-reminder>",
    "<session-start-hook>",
    "<ide_opened_file>",
    "<ide_selection>",
    "<task-notification>",
    "<tick>",
    "<goal>",
    "[Request interrupted",
)
_COMMAND_NAME_RE = re.compile(r"<command-name>\s*([^<]*?)\s*</command-name>")


def _unescape(raw: str) -> str:
    """Decode the body of a JSON string literal; fall back to the raw text."""
    try:
        value = json.loads('"' + raw + '"')
    except ValueError:
        return raw
    return value if isinstance(value, str) else raw


def _first(pattern: re.Pattern[str], *texts: str) -> str | None:
    for text in texts:
        m = pattern.search(text)
        if m:
            return _unescape(m.group(1))
    return None


def _last(pattern: re.Pattern[str], *texts: str) -> str | None:
    """Last match, searching ``texts`` from the last one backwards."""
    for text in reversed(texts):
        value = None
        for m in pattern.finditer(text):
            value = m.group(1)
        if value is not None:
            return _unescape(value)
    return None


# --------------------------------------------------------------------------- reading


def _read_head_tail(path: Path, size: int) -> tuple[str, str]:
    """Return (head, tail) text. A file of at most head+tail bytes is read whole
    into ``head`` (tail empty); otherwise the tail drops its first, partial line.
    Partial lines left at the end of the head simply fail to decode later."""
    with open_regular(path) as fh:
        if size <= HEAD_BYTES + TAIL_BYTES:
            return fh.read(HEAD_BYTES + TAIL_BYTES).decode("utf-8", errors="replace"), ""
        head_b = fh.read(HEAD_BYTES)
        fh.seek(size - TAIL_BYTES)
        tail_b = fh.read(TAIL_BYTES)
        nl = tail_b.find(b"\n")
        tail_b = tail_b[nl + 1 :] if nl >= 0 else b""
    head = head_b.decode("utf-8", errors="replace")
    tail = tail_b.decode("utf-8", errors="replace")
    return head, tail


def _lines(text: str) -> list[str]:
    return [ln for ln in text.split("\n") if ln.strip()]


def _loads(line: str) -> Any:
    try:
        return json.loads(line)
    except (ValueError, RecursionError):
        return None


def _prompt_text(row: dict[str, Any]) -> tuple[str | None, str | None]:
    """Return (prompt, command) for a user row/frame: the human prompt text if it
    is one, else the slash command it carries (used as a fallback title)."""
    if row.get("type") != "user":
        return None, None
    if row.get("isMeta") or row.get("isCompactSummary") or row.get("isSynthetic"):
        return None, None
    if row.get("isVisibleInTranscriptOnly") or row.get("isSidechain"):
        return None, None
    if row.get("parent_tool_use_id") or row.get("toolUseResult") is not None:
        return None, None
    message = row.get("message")
    if not isinstance(message, dict):
        return None, None
    content = message.get("content")
    texts: list[str] = []
    if isinstance(content, str):
        texts = [content]
    elif isinstance(content, list):
        for block in content:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_result":
                return None, None
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
    command: str | None = None
    for text in texts:
        stripped = text.strip()
        if not stripped:
            continue
        if stripped.startswith(_NON_PROMPT_PREFIXES):
            m = _COMMAND_NAME_RE.search(stripped)
            if m and command is None:
                command = m.group(1)
            continue
        return stripped, None
    return None, command


def _first_prompt(head: str) -> tuple[str | None, str | None]:
    command: str | None = None
    for line in head.split("\n"):
        if not _USER_LINE_RE.search(line):
            continue
        row = _loads(line)
        if not isinstance(row, dict):
            continue
        prompt, cmd = _prompt_text(row)
        if prompt:
            return prompt, command
        if cmd and command is None:
            command = cmd
    return None, command


_META_FIELDS = {
    "custom-title": "customTitle",
    "ai-title": "aiTitle",
    "summary": "summary",
    "last-prompt": "lastPrompt",
}


def _metadata(head: str, tail: str) -> dict[str, str]:
    """Last-wins session metadata from ``custom-title``/``ai-title``/``summary``/
    ``last-prompt`` rows found in the head, then the tail."""
    found: dict[str, str] = {}
    for text in (head, tail):
        for line in text.split("\n"):
            if len(line) > 16384 or not _META_LINE_RE.search(line):
                continue
            row = _loads(line)
            if not isinstance(row, dict):
                continue
            kind = row.get("type")
            key = _META_FIELDS.get(kind) if isinstance(kind, str) else None
            value = row.get(key) if key else None
            if isinstance(kind, str) and isinstance(value, str) and value.strip():
                found[kind] = value
    return found


def _subagent_count(session_path: Path) -> int:
    sub = session_path.parent / session_path.stem / "subagents"
    try:
        if not sub.is_dir():
            return 0
        return sum(1 for _ in sub.rglob("agent-*.jsonl"))
    except OSError:
        return 0


def read_session_info(path: Path | str) -> SessionInfo:
    """Summarise one session file from its 64 KiB head and tail.

    Title precedence: custom-title > ai-title > summary > first human prompt >
    last-prompt > slash command. Never raises on odd content (a missing file
    gives an empty record with size 0).
    """
    path = Path(path)
    info = SessionInfo(
        path=path,
        project=path.parent.name,
        project_path=path.parent.name,
        session_id=path.stem,
    )
    try:
        st = path.stat()
        info.mtime = st.st_mtime
        info.size = st.st_size
    except OSError:
        return info
    try:
        head, tail = _read_head_tail(path, info.size)
    except OSError:
        return info
    try:
        _fill(info, head, tail)
    except Exception:  # noqa: BLE001 - listing must survive any content
        pass
    info.subagent_count = _subagent_count(path)
    return info


def _fill(info: SessionInfo, head: str, tail: str) -> None:
    info.first_timestamp = _first(_TIMESTAMP_RE, head, tail)
    info.last_timestamp = _last(_TIMESTAMP_RE, head, tail)
    cwd = _first(_CWD_RE, head, tail)
    if cwd:
        info.project_path = cwd
    info.git_branch = _last(_GIT_BRANCH_RE, head, tail)
    info.version = _last(_VERSION_RE, head, tail)
    if not _looks_like_uuid(info.session_id):
        sid = _first(_SESSION_ID_RE, head, tail)
        if sid:
            info.session_id = sid

    meta = _metadata(head, tail)
    info.custom_title = meta.get("custom-title")
    info.ai_title = meta.get("ai-title")
    info.summary = meta.get("summary")
    info.last_prompt = meta.get("last-prompt")
    prompt, command = _first_prompt(head)
    info.first_prompt = prompt
    title = (
        info.custom_title
        or info.ai_title
        or info.summary
        or info.first_prompt
        or info.last_prompt
        or command
        or ""
    )
    info.title = clip(title, TITLE_MAX, one_line=True, trim=True)


_UUID_RE = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")


def _looks_like_uuid(text: str) -> bool:
    return bool(_UUID_RE.match(text))


# --------------------------------------------------------------------------- listing


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def list_sessions(root: Path | str | None = None) -> list[SessionInfo]:
    """All sessions under ``root`` (default :func:`projects_dir`), newest first by mtime."""
    base = Path(root) if root is not None else projects_dir()
    infos = [read_session_info(p) for p in session_files(base)]
    infos.sort(key=lambda i: (i.mtime, str(i.path)), reverse=True)
    return infos


def latest_session(root: Path | str | None = None) -> Path | None:
    """The most recently written session file under ``root``, or ``None``."""
    base = Path(root) if root is not None else projects_dir()
    files = session_files(base)
    if not files:
        return None
    return max(files, key=lambda p: (_mtime(p), str(p)))


def _read_meta(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def _meta_path(agent_file: Path) -> Path:
    return agent_file.with_name(agent_file.name[: -len(".jsonl")] + ".meta.json")


_WARMUP = re.compile(rb'"content"\s*:\s*"Warmup"')


def not_a_subagent(file_name: str, head: bytes) -> str | None:
    """Why the file ``file_name`` (whose first bytes are ``head``) is not a
    sub-agent transcript: ``"compaction"`` or ``"warm-up"``; ``None`` if it is one.

    The CLI writes some ``agent-*.jsonl`` files that are not sub-agents: the
    compaction agent's (``agent-acompact-*``) and the warm-up agent's (a one-line
    ``"Warmup"`` prompt sent to prime the cache, CLI 2.0.x). Neither was started
    by an Agent/Task call, so neither is a sub-agent, and neither ever "runs"."""
    if file_name.startswith("agent-acompact"):
        return "compaction"
    first = head.split(b"\n", 1)[0]
    if b'"type":"user"' in first.replace(b" ", b"") and _WARMUP.search(first):
        return "warm-up"
    return None


def subagent_files(session_path: Path | str) -> list[tuple[Path, dict[str, Any]]]:
    """Sub-agent transcripts of a session, each with its ``.meta.json`` (or ``{}``).

    Includes ``<session>/subagents/**/agent-*.jsonl`` (workflow runs nest under
    ``subagents/workflows/<runId>/``), sorted by path, then legacy
    ``<project>/agent-*.jsonl`` files whose head names this session's id.
    """
    session_path = Path(session_path)
    session_id = session_path.stem
    out: list[tuple[Path, dict[str, Any]]] = []
    sub = session_path.parent / session_id / "subagents"
    try:
        nested = sorted(p for p in sub.rglob("agent-*.jsonl") if p.is_file()) if sub.is_dir() else []
    except OSError:
        nested = []
    for p in nested:
        try:
            with open_regular(p) as fh:
                head = fh.read(HEAD_BYTES)
        except OSError:
            continue
        if not_a_subagent(p.name, head) is None:  # compaction and warm-up agents are not
            out.append((p, _read_meta(_meta_path(p))))

    needle = re.compile(r'"(?:sessionId|session_id)"\s*:\s*"' + re.escape(session_id) + '"')
    try:
        legacy = sorted(session_path.parent.glob("agent-*.jsonl"))
    except OSError:
        legacy = []
    for p in legacy:
        try:
            with open_regular(p) as fh:
                raw = fh.read(HEAD_BYTES)
        except OSError:
            continue
        head = raw.decode("utf-8", errors="replace")
        if needle.search(head) and not_a_subagent(p.name, raw) is None:
            out.append((p, _read_meta(_meta_path(p))))
    return out


# --------------------------------------------------------------------------- sniffing

def sniff_format(head: bytes) -> Format:
    """Tell stream-json stdout from an on-disk transcript by content: the
    reducer's own :func:`reducer.decode.detect_format` over the head's lines
    (a last line without its newline counts too)."""
    if head.startswith(b"\xef\xbb\xbf"):
        head = head[3:]
    return detect_format([line for line in head.split(b"\n") if line.strip()])
