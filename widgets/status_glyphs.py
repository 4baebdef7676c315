"""One glyph, one word and one colour per status, for every view.

Tool cards, sub-agent cards, the tasks panel, hooks, the status bar and the
help legend all draw a status from :data:`STATUSES`, keyed by the status the
fold set (:data:`reducer.state.CallStatus`, ``TaskStatus``, ``HookStatus``:
one vocabulary; a hook's ``ran`` is :data:`HOOK_RAN`).

``role`` names a colour of the theme: the transcript's :class:`Palette`
attribute of that name, or ``$text-<role>`` in Textual styles (:func:`css`).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Status", "STATUSES", "HOOK_RAN", "css", "LEGEND", "TODO_GLYPHS",
           "NOTICE_GLYPHS", "HOOK", "THINKING", "PROBLEM", "UNKNOWN", "IDLE", "ENDED", "BACKGROUND", "FOLLOW",
           "PAUSED"]


@dataclass(frozen=True, slots=True)
class Status:
    """How one status is drawn."""

    glyph: str
    word: str
    role: str
    """``muted``, ``accent``, ``success``, ``error`` or ``warning``."""
    bold: bool = False


STATUSES: dict[str, Status] = {
    "pending": Status("○", "pending", "muted"),
    "running": Status("◐", "running", "accent", bold=True),
    "done": Status("✓", "done", "success"),
    "failed": Status("✗", "failed", "error", bold=True),
    "denied": Status("⊘", "denied", "warning"),
    "interrupted": Status("⏸", "interrupted", "warning"),
}
"""The six statuses of a tool call, a sub-agent, a task or a hook."""

HOOK_RAN = Status("·", "ran", "muted")
"""A hook the transcript says only ran (its outcome was not recorded)."""

def css(role: str, bold: bool = False) -> str:
    """A Textual style for a role: ``$text-<role>`` (``bold`` first when asked)."""
    return ("bold " if bold else "") + f"$text-{role}"


TODO_GLYPHS = {"pending": "☐", "in_progress": "◐", "completed": "☑"}
"""A todo list's boxes (TodoWrite's own three states)."""

NOTICE_GLYPHS = {"error": STATUSES["failed"].glyph, "warning": "!", "info": "·"}
"""A notice row's mark by its level."""

HOOK = "⚓"
THINKING = "✻"
PROBLEM = "⚠"
UNKNOWN = "?"
IDLE = Status("◇", "idle", "muted")
ENDED = Status("■", "ended", "muted", bold=True)
BACKGROUND = Status("→", "background", "secondary")
FOLLOW = "▶"
"""The status bar: the view follows the end."""
PAUSED = "‖"
"""The status bar: the view stays where you scrolled (not ⏸, which is "interrupted")."""

LEGEND: list[tuple[str, str, str]] = [
    *((s.glyph, s.word + (" (or stopped, killed, cancelled)" if key == "interrupted" else ""),
       css(s.role, s.bold)) for key, s in STATUSES.items()),
    (BACKGROUND.glyph, "running in the background", css(BACKGROUND.role)),
    (NOTICE_GLYPHS["warning"], "a warning notice (an error notice shows ✗)", "$text-warning"),
    (HOOK, "hook run", "$text-secondary"),
    (IDLE.glyph, "status bar: idle (nothing running)", css(IDLE.role)),
    (ENDED.glyph, "status bar: ended (/exit, or the source ended)", css(ENDED.role, ENDED.bold)),
    (FOLLOW, "status bar: following the end", "$text-success"),
    (PAUSED, "status bar: paused where you scrolled (G follows again)", "bold $text-warning"),
    (THINKING, "thinking (with its token count)", "$text-accent"),
    (PROBLEM, "problem line: malformed, or a frame kind cctv does not know", "$text-error"),
]
"""(glyph, meaning, Textual style) for the help screen's "What you're looking at"."""
