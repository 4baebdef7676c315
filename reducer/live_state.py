"""What a session needs from you now: its live state, one rule for every surface.

Two steps, so that what needs a clock is kept apart from what the fold knows:

- :func:`reducer.live_facts.live_facts` reads a folded session (and the time of its lines) into
  :class:`LiveFacts`: what it was doing at the end of what was read, since
  when, with which call. The index stores them with each session's row.
- :func:`live_state` adds the clock — ``now`` and when the file last grew —
  and says :data:`LiveKind`: ``working`` (with what: ``Bash: npm test · 45s``),
  ``needs_approval``, ``needs_you``, ``rate_limited``, ``compacting`` or
  ``ended``, with the time it began.

A transcript on disk cannot tell a slow tool from a permission prompt: a call
with no result, in a file that has not grown for :data:`APPROVAL_AFTER_S`
(no progress rows either), reads ``needs_approval`` and says so with a
question mark (``waiting on Bash (approval?)``). The CLI's stdout says it
exactly (a pending ``can_use_tool`` control request). Pure: no Textual, no
I/O; light (the browser's first screen reads the states without the fold).
"""

from __future__ import annotations

from typing import Literal, NamedTuple, assert_never

import msgspec

from .format import plural, short_age

__all__ = ["APPROVAL_AFTER_S", "ATTENTION", "GLYPHS", "HORIZON_S", "SETTLED_AFTER_S", "LiveFacts", "LiveKind", "LiveState",
           "Phase", "WORDS", "changes_at", "live_state"]

LiveKind = Literal["working", "needs_approval", "needs_you", "rate_limited", "compacting", "ended"]
"""A session's live state (:func:`live_state`)."""

ATTENTION: tuple[LiveKind, ...] = ("needs_approval", "needs_you", "rate_limited", "working",
                                   "compacting", "ended")
"""The order live sessions are listed in: the ones that need you first."""

WORDS: dict[LiveKind, str] = {
    "working": "working", "needs_approval": "needs approval", "needs_you": "needs you",
    "rate_limited": "rate limited", "compacting": "compacting", "ended": "ended",
}
"""Each state as every screen says it."""

GLYPHS: dict[LiveKind, str] = {
    "working": "◐", "needs_approval": "?", "needs_you": "◆", "rate_limited": "⏸",
    "compacting": "◑", "ended": "■",
}
"""Each state's mark, before its words."""

Phase = Literal["generating", "thinking", "tool", "approval", "turn_over", "compacting",
                "rate_limited", "exited"]
"""What the fold says the session was doing when what was read ends:
``tool`` a call has no result yet, ``approval`` the CLI asked the host for
permission (stdout only), ``turn_over`` the model waits for a prompt,
``exited`` the user typed ``/exit``."""

HORIZON_S = 15 * 60.0
"""A session whose files have not grown for this long has ended, whatever it
last said (``cctv sessions --live``'s default ``--within``)."""

SETTLED_AFTER_S = 120.0
"""A file that has not grown for this long has settled: its state is what the
session ended in (:func:`reducer.facts.final_state`), not what its last row
would mean mid-turn (CLIs before 2.1 wrote no stop reason, so a finished
session of theirs would read "requesting" for ever); the viewer's status bar
and the live states both take it."""

APPROVAL_AFTER_S = 5.0
"""A call with no result in a file quiet this long reads ``needs_approval``."""

class LiveFacts(msgspec.Struct, frozen=True, kw_only=True):
    """The part of a live state that needs no clock (:func:`reducer.live_facts.live_facts`)."""

    phase: Phase
    since: float | None = None
    """When the phase began (epoch seconds, on the file's own clock), when the input tells."""
    last_at: float | None = None
    """The time of the last line read, on the same clock: :func:`live_state`
    measures :attr:`since` and :attr:`call_at` back from when the file last
    grew by their distance from it (a copied or replayed file keeps its old
    timestamps; a machine's clock may be off)."""
    tool: str | None = None
    """The call without a result: its tool (the innermost, a sub-agent's own call
    when one runs)."""
    doing: str | None = None
    """That call as one line: ``Bash: npm test``."""
    call_at: float | None = None
    """When that call was made."""
    call_elapsed: float | None = None
    """How long the CLI said the call had run (heartbeats, progress rows)."""
    may_ask: bool = False
    """The call is one the CLI may ask permission for: not a read-only tool
    (:data:`reducer.live_facts.NEVER_ASK`), not a sub-agent's (whose own file shows its progress)."""
    background: int = 0
    """Background tasks still running."""
    resets_at: float | None = None
    """When a rate limit that stopped the session lifts."""
    streamed: bool = False
    """Read from the CLI's stdout (stream-json): a permission prompt shows as
    one, so a quiet call is only a slow one."""
    settles_to: Phase | None = None
    """What the session ended in (:func:`reducer.facts.final_state`) when it
    differs from :attr:`phase`: its turn looks over (the model's last text,
    from a CLI that writes no stop reason); taken once the file has settled
    (:data:`SETTLED_AFTER_S`)."""


class LiveState(NamedTuple):
    """A session's live state at one moment (:func:`live_state`)."""

    kind: LiveKind
    since: float | None
    """When it began (epoch seconds; ``None``: unknown)."""
    activity: str
    """What it is doing or waiting on: ``Bash: npm test · 45s``, ``waiting on Bash
    (approval?)``, ``resets in 2h``; ``""`` when there is nothing to add."""
    tool: str | None = None
    """The tool it runs or waits on."""
    tool_since: float | None = None
    """When that call was made (on the clock of :attr:`since`)."""
    guessed: bool = False
    """A transcript on disk: the prompt is a guess (a quiet call)."""

    @property
    def words(self) -> str:
        return WORDS[self.kind]

    @property
    def glyph(self) -> str:
        return GLYPHS[self.kind]

    @property
    def rank(self) -> tuple[int, float]:
        """The sort key of "the ones that need you first" (:data:`ATTENTION`),
        the longest waiting first within a state."""
        return ATTENTION.index(self.kind), self.since if self.since is not None else 0.0

    @property
    def needs_you(self) -> bool:
        """Waiting on you: a prompt or a permission."""
        return self.kind in ("needs_you", "needs_approval")

    def label(self, now: float) -> str:
        """A row's few words: ``needs you · 2m``, ``working · Bash 45s``,
        ``needs approval · Bash? 10s`` (``?``: a guess, see :attr:`guessed`)."""
        if self.tool is not None:
            start = self.tool_since if self.tool_since is not None else self.since
            age = f" {short_age(now - start)}" if start is not None else ""
            return f"{self.words} · {self.tool}{'?' if self.guessed else ''}{age}"
        return f"{self.words} · {short_age(now - self.since)}" if self.since is not None \
            else self.words

    def describe(self, now: float) -> str:
        """One full line: ``needs you · 2m · 1 background task running``,
        ``working · Bash: npm test · 45s``, ``needs approval · 10s · waiting on
        Bash (approval?)``."""
        if self.kind == "working" and self.activity:
            return f"{self.words} · {self.activity}"
        age = f" · {short_age(now - self.since)}" if self.since is not None else ""
        more = f" · {self.activity}" if self.activity else ""
        return f"{self.words}{age}{more}"


def live_state(facts: LiveFacts, now: float, grew_at: float, *, horizon: float = HORIZON_S,
               closed: bool = False) -> LiveState:
    """The live state at ``now`` of a session whose files last grew at
    ``grew_at``; ``closed``: its output has ended (a stream's command exited).

    ``ended`` once the user typed ``/exit``, once a closed stream's turn is
    over, or past ``horizon`` seconds of quiet."""
    quiet = now - grew_at
    shift = grew_at - facts.last_at if facts.last_at is not None else 0.0
    since = min(facts.since + shift, grew_at) if facts.since is not None else grew_at
    if facts.phase == "exited":
        return LiveState("ended", since, "/exit")
    if quiet > horizon:
        return LiveState("ended", grew_at, f"quiet for {short_age(quiet)}")
    phase = facts.settles_to if facts.settles_to is not None and quiet >= SETTLED_AFTER_S \
        else facts.phase
    if closed and phase in ("turn_over", "rate_limited"):
        return LiveState("ended", grew_at, "output closed")
    match phase:
        case "rate_limited":
            if facts.resets_at is None or now < facts.resets_at:
                until = f"resets in {short_age(facts.resets_at - now)}" \
                    if facts.resets_at is not None else ""
                return LiveState("rate_limited", since, until)
            return LiveState("needs_you", facts.resets_at, "rate limit lifted")
        case "turn_over":
            more = f"{plural(facts.background, 'background task')} running" \
                if facts.background else ""
            return LiveState("needs_you", since, more)
        case "compacting":
            return LiveState("compacting", since, "")
        case "generating" | "thinking":
            return LiveState("working", since, f"{phase} · {short_age(now - since)}")
        case "approval":
            return LiveState("needs_approval", since, f"waiting on {facts.tool} (approval)",
                             facts.tool, since)
        case "tool":
            if not facts.streamed and facts.may_ask and quiet > APPROVAL_AFTER_S:
                return LiveState("needs_approval", grew_at, f"waiting on {facts.tool} (approval?)",
                                 facts.tool, grew_at, guessed=True)
            call_at = facts.call_at + shift if facts.call_at is not None else None
            return LiveState("working", since, _running(facts, now - shift), facts.tool, call_at)
        case "exited":
            raise AssertionError("handled above")
        case _:
            assert_never(phase)


def _running(facts: LiveFacts, now: float) -> str:
    """``Bash: npm test · 45s``: the call and how long it has run by ``now``
    (on the file's clock)."""
    ran = now - facts.call_at if facts.call_at is not None else facts.call_elapsed
    return f"{facts.doing} · {short_age(ran)}" if ran is not None else facts.doing or ""


def changes_at(facts: LiveFacts, grew_at: float, now: float, *,
               horizon: float = HORIZON_S) -> float | None:
    """When the state :func:`live_state` gives will change with nothing more
    written (a quiet call turns into a possible prompt, a rate limit lifts, the
    horizon passes), if after ``now``: the one time a watcher must look again."""
    times = [grew_at + horizon]
    if facts.settles_to is not None:
        times.append(grew_at + SETTLED_AFTER_S)
    if facts.phase == "tool" and facts.may_ask and not facts.streamed:
        times.append(grew_at + APPROVAL_AFTER_S)
    if facts.phase == "rate_limited" and facts.resets_at is not None:
        times.append(facts.resets_at)
    later = [t for t in times if t > now]
    return min(later) if later else None
