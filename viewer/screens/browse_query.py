"""What the browser's search box asks: words and a role.

``role:ROLE`` (a role of :data:`~reducer.roles.ROLES`, or the start of
one that names it alone: ``role:hook``, ``role:tool_r``) limits the full-text
hits to the texts of that role, as ``cctv search --role`` does; the other words
narrow the titles and are searched. No Textual here.
"""

from __future__ import annotations

from dataclasses import dataclass

from cctv.reducer.roles import ROLES, Role

__all__ = ["ROLE_PREFIX", "Query", "parse_query", "with_role", "next_role"]

ROLE_PREFIX = "role:"


@dataclass(frozen=True, slots=True)
class Query:
    """A search as typed, read."""

    words: str
    """The words searched for (the role qualifier left out), single-spaced."""
    role: Role | None = None
    """The role the hits are limited to."""
    unknown_role: str | None = None
    """What followed ``role:`` when it names no role (or several)."""

    def describe_role(self) -> str:
        """``role: hook``; ``role:tool — tool_use or tool_result?``; ``role:x is
        no role (user, …)``; ``""`` for none."""
        if self.role is not None:
            return f"{ROLE_PREFIX} {self.role}"
        if self.unknown_role is None:
            return ""
        named = _roles_starting(self.unknown_role)
        if named:
            return f"{ROLE_PREFIX}{self.unknown_role} — {', '.join(named[:-1])} or {named[-1]}?"
        return f"{ROLE_PREFIX}{self.unknown_role} is no role ({', '.join(ROLES)})"


def _roles_starting(text: str) -> tuple[Role, ...]:
    name = text.lower().replace("-", "_")
    exact = tuple(r for r in ROLES if r == name)
    return exact or tuple(r for r in ROLES if r.startswith(name))


def parse_query(text: str) -> Query:
    """Read a search: its words, and its (last) ``role:`` qualifier."""
    words: list[str] = []
    role: Role | None = None
    unknown: str | None = None
    for word in text.split():
        if not word.lower().startswith(ROLE_PREFIX):
            words.append(word)
            continue
        name = word[len(ROLE_PREFIX):]
        found = _roles_starting(name) if name else ()
        role, unknown = (found[0], None) if len(found) == 1 else (None, name)
    return Query(" ".join(words), role, unknown)


def with_role(text: str, role: Role | None) -> str:
    """``text`` with its role qualifier replaced by ``role`` (``None``: left out)."""
    words = [w for w in text.split() if not w.lower().startswith(ROLE_PREFIX)]
    if role is not None:
        words.append(ROLE_PREFIX + role)
    return " ".join(words) + (" " if words else "")


def next_role(role: Role | None) -> Role | None:
    """The role after ``role`` in :data:`ROLES`, then none, then the first again."""
    if role is None:
        return ROLES[0]
    at = ROLES.index(role) + 1
    return ROLES[at] if at < len(ROLES) else None
