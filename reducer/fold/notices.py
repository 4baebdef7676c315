"""One-line events: API retries and errors, rate limits, notifications,
informational and local-command output, and any ``system`` subtype with no
rule of its own (shown generically)."""

from __future__ import annotations

import re
from typing import Any

import msgspec

from .. import frames as F
from ..format import plural
from ..state import MAIN, RateLimit
from .core import Core
from .values import as_text

__all__ = ["Notices"]

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
"""Terminal styling the CLI wrote into a message's text (``\x1b[1m…\x1b[22m``)."""


_RESET = re.compile(r"\|(\d{9,11})\s*$")
"""The reset time (epoch seconds) at the end of a rate-limit error's text."""


def _num(value: object) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


class Notices:
    """Frames that become a notice in the transcript (and maybe a counter)."""

    def __init__(self, core: Core) -> None:
        self._core = core
        self.rate_limit: dict[str, Any] | None = None
        """The latest ``rate_limit_info`` as the CLI wrote it (see :attr:`rate_limit_state`)."""
        self.rate_limit_state = RateLimit()
        self.limited_line: int | None = None
        """The line of the rate limit that stopped the session (a ``rejected``
        event, an on-disk rate-limit error row); ``None`` once allowed again."""
        self.api_retries = 0

    def on_rate_limit(self, e: F.RateLimitEvent, agent: str) -> None:
        """Every event updates the state (utilization, reset times, overage);
        a change of status is also a notice."""
        info = e.rate_limit_info
        prev = (self.rate_limit or {}).get("status")
        self.rate_limit = info
        state = self.rate_limit_state
        status = info.get("status")
        state.status = status if isinstance(status, str) else state.status
        state.kind = _str(info.get("rateLimitType")) or state.kind
        state.utilization = _num(info.get("utilization"))
        state.resets_at = _num(info.get("resetsAt"))
        state.overage_status = _str(info.get("overageStatus"))
        state.overage_resets_at = _num(info.get("overageResetsAt"))
        state.events += 1
        if status == "rejected":
            self.limited_line = e.line_no
        elif status:
            self.limited_line = None
        if status and status != "allowed" and status != prev:
            kind = info.get("rateLimitType") or "rate limit"
            util = info.get("utilization")
            pct = f" at {util * 100:.0f}%" if isinstance(util, (int, float)) else ""
            level = "error" if status == "rejected" else "warning"
            self._core.notice(MAIN, e.line_no, "rate limit", f"rate limit {status}: {kind}{pct}",
                         level=level)
        self._core.session_changed()

    def rate_limit_error(self, line_no: int, text: str) -> None:
        """An on-disk assistant row the CLI wrote for a rate-limit error: the
        limit was hit; its text may end in the reset time (``…|1754020800``)."""
        state = self.rate_limit_state
        state.status = "rejected"
        reset = _RESET.search(text)
        state.resets_at = float(reset.group(1)) if reset else None
        state.events += 1
        self.limited_line = line_no
        self._core.session_changed()

    def on_api_retry(self, e: F.ApiRetry, agent: str) -> None:
        self.api_retries += 1
        err = e.error if isinstance(e.error, str) else (e.error or "")
        self._core.notice(agent, e.line_no, "api retry",
                     f"API retry {e.attempt}/{e.max_retries} in {(e.retry_delay_ms or 0) / 1000:.1f}s"
                     f" ({e.error_status or 'no status'} {err})".rstrip(), level="warning")

    def on_api_error(self, e: F.ApiError, agent: str) -> None:
        self.api_retries += 1
        self._core.notice(agent, e.line_no, "api error",
                     f"API error (attempt {e.retryAttempt}/{e.maxRetries}): {e.error}",
                     level="warning")

    def on_notification(self, e: F.Notification, agent: str) -> None:
        level = "warning" if e.priority in ("high", "immediate") else "info"
        self._core.notice(agent, e.line_no, "notification", e.text, level=level, detail=e.key)

    def on_informational(self, e: F.Informational, agent: str) -> None:
        self._core.notice(agent, e.line_no, "info", as_text(e.content),
                     level="warning" if e.level == "warning" else "info")

    def on_local_command_output(self, e: F.LocalCommandOutput, agent: str) -> None:
        self._core.notice(agent, e.line_no, "command output", as_text(e.content))

    def on_system_other(self, e: F.System, agent: str) -> None:
        """A subtype with no rule of its own (or, CLI 1.0.x, no subtype at all:
        hook results, "limit reached, now using Sonnet"): show it, generically."""
        text = as_text(e.content) if e.content is not None else ""
        level = e.level if e.level in ("warning", "error") else "info"
        if not e.subtype:
            self._core.notice(agent, e.line_no, "system", _ANSI.sub("", text) or "system message",
                         level=level)
            return
        self._core.notice(agent, e.line_no, f"system/{e.subtype}",
                     text or _frame_fields(e.raw) or e.subtype, level=level)

    def on_tool_use_summary(self, e: F.ToolUseSummary, agent: str) -> None:
        self._core.notice(MAIN, e.line_no, "tool summary", e.summary)

    def on_prompt_suggestion(self, e: F.PromptSuggestion, agent: str) -> None:
        self._core.notice(MAIN, e.line_no, "suggestion", e.suggestion)

    def on_vcs_state(self, e: F.VcsStateChanged, agent: str) -> None:
        where = f" on {e.branch}" if e.branch else ""
        self._core.notice(agent, e.line_no, "git", f"{e.change or 'change'}{where}", detail=e.cwd)

    def on_control_response(self, e: F.ControlResponse, agent: str) -> None:
        """A failed control request (``set_model``, ``interrupt``…) is an error the user sees."""
        response = e.response if isinstance(e.response, dict) else {}
        if response.get("subtype") == "error":
            self._core.notice(MAIN, e.line_no, "control",
                         f"control request failed: {response.get('error') or 'no reason given'}",
                         level="error", detail=f"request {response.get('request_id') or '?'}")


_ENVELOPE_KEYS = frozenset({"type", "subtype", "uuid", "session_id", "sessionId", "timestamp",
                            "parentUuid", "parent_tool_use_id", "isSidechain", "userType", "cwd",
                            "version", "gitBranch", "level", "content"})


def _frame_fields(raw: bytes) -> str:
    """``key value · key value`` for the scalar fields of a frame the fold has no
    rule for (a PR's ``url``, a state), so what it says is shown, not only its kind;
    lists and objects are counted."""
    if not raw or len(raw) > 64 * 1024:
        return ""
    try:
        frame = msgspec.json.decode(raw)
    except msgspec.DecodeError:
        return ""
    if not isinstance(frame, dict):
        return ""
    parts = []
    for key, value in frame.items():
        if key in _ENVELOPE_KEYS or value in (None, "", [], {}):
            continue
        if isinstance(value, (list, dict)):
            parts.append(f"{key}: {plural(len(value), 'item')}")
        else:
            parts.append(f"{key}: {value}")
    return " · ".join(parts)
