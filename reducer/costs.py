"""What a session cost and who spent it: the recorded cost where the CLI
wrote one, an estimate from each request's tokens where it did not
(:mod:`reducer.pricing`), each figure labelled with where it comes from.

Every request is counted once (:attr:`reducer.fold.Session.requests` is keyed
by message id and request id), at its own model, time and cache tier.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

import msgspec

from . import pricing
from .format import format_cost
from .state import MAIN, Request
from .timestamps import parse_timestamp

if TYPE_CHECKING:
    from .fold import Session

__all__ = ["AgentFigures", "AgentMemo", "Cost", "CostMemo", "CostSource", "Estimate", "PricedRequest",
           "agent_figures",
           "cost_of", "cost_text", "estimate", "priced_requests", "session_cost"]

CostSource = Literal["recorded", "estimated", "mixed"]
"""Where a cost comes from: the CLI's own figure, cctv's estimate from the
tokens, or the recorded figure plus an estimate of what came after it (a
turn still running, a sub-agent's share of a recorded total)."""


class Estimate(NamedTuple):
    """Requests priced: what the priced ones cost, how many there were, and
    the models that have no price (their tokens are counted, their cost is not)."""

    usd: float
    priced: int
    unpriced: tuple[str, ...]


class Cost(NamedTuple):
    """A cost with its source; ``usd`` is ``None`` (and ``source`` too) when
    nothing recorded one and nothing could be priced: unknown, never $0."""

    usd: float | None
    source: CostSource | None
    unpriced: tuple[str, ...] = ()
    """Models whose requests have no price: the figure leaves them out."""

    @property
    def reason(self) -> str | None:
        """Why a figure is missing or short: ``no price known for …``."""
        if not self.unpriced:
            return None
        return "; ".join(pricing.unpriced_reason(m) for m in self.unpriced)


def estimate(requests: Iterable[Request]) -> Estimate:
    """Price ``requests`` (each at its own model, time and cache tier)."""
    usd = 0.0
    priced = 0
    unpriced: dict[str, None] = {}
    for r in requests:
        cost = pricing.request_cost(r.model, r.at, r.tokens)
        if cost is None:
            unpriced[r.model] = None
        else:
            usd += cost
            priced += 1
    return Estimate(usd, priced, tuple(unpriced))


def _split(requests: list[Request], recorded_through: int,
           recorded_at: str | None) -> tuple[list[Request], list[Request]]:
    """``requests`` as (those a recorded cost covers, those made after it): the
    first ``recorded_through``, and later ones made by ``recorded_at``."""
    until = parse_timestamp(recorded_at)
    covered, later = requests[:recorded_through], []
    for r in requests[recorded_through:]:
        t = parse_timestamp(r.at) if until is not None else None
        (covered if t is not None and t <= until else later).append(r)
    return covered, later


def session_cost(recorded: float | None, requests: list[Request], recorded_through: int,
                 recorded_at: str | None = None) -> Cost:
    """The session's cost: ``recorded`` (covering the first ``recorded_through``
    of ``requests``, and any later one made by ``recorded_at``) plus an
    estimate of the requests after it, or, with nothing recorded, the
    estimate of them all."""
    if recorded is not None:
        later = _split(requests, recorded_through, recorded_at)[1]
        if not later:
            return Cost(recorded, "recorded")
        more = estimate(later)
        if not more.priced:
            return Cost(recorded, "recorded", more.unpriced)
        return Cost(recorded + more.usd, "mixed", more.unpriced)
    if not requests:
        return Cost(None, None)
    est = estimate(requests)
    if not est.priced:
        return Cost(None, None, est.unpriced)
    return Cost(est.usd, "estimated", est.unpriced)


def cost_of(session: Session) -> Cost:
    """:func:`session_cost` of a folded session."""
    return session_cost(session.cost_usd, list(session.requests.values()),
                        session.recorded_through, session.recorded_at)


class AgentFigures(msgspec.Struct, kw_only=True):
    """What one agent (the main loop or a sub-agent) spent: its own requests,
    and with every agent it started, and theirs (``subtree_*``). The keys of
    ``summary --json``'s ``agents``."""

    agent_id: str
    """``""`` for the main loop; a sub-agent's: the id of the call that started it."""
    agent_type: str | None
    description: str
    parent_agent_id: str | None
    depth: int
    cost_usd: float | None
    cost_source: CostSource | None
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    tool_calls: int
    duration_s: float | None
    subtree_cost_usd: float | None
    unpriced: str | None = None
    """Why its cost leaves some tokens out (``no price known for …``)."""

    def as_dict(self) -> dict[str, Any]:
        return msgspec.structs.asdict(self)


class _Own:
    """One agent's own requests summed (a pass over the ledger)."""

    __slots__ = ("tokens", "usd", "priced", "unpriced", "first", "last")

    def __init__(self) -> None:
        self.tokens = [0, 0, 0, 0, 0]
        self.usd = 0.0
        self.priced = 0
        self.unpriced: dict[str, None] = {}
        self.first: str | None = None
        self.last: str | None = None

    def add(self, r: Request) -> None:
        t = self.tokens
        for i, n in enumerate(r.tokens):
            t[i] += n
        cost = pricing.request_cost(r.model, r.at, r.tokens)
        if cost is None:
            self.unpriced[r.model] = None
        else:
            self.usd += cost
            self.priced += 1
        if r.at:  # (ISO times of one writer compare as strings)
            self.first = r.at if self.first is None or r.at < self.first else self.first
            self.last = r.at if self.last is None or r.at > self.last else self.last

    @property
    def cost(self) -> tuple[float | None, CostSource | None, str | None]:
        reason = Cost(None, None, tuple(self.unpriced)).reason
        return (self.usd, "estimated", reason) if self.priced else (None, None, reason)


def agent_figures(session: Session) -> list[AgentFigures]:
    """One entry per agent, the main loop first, then the sub-agents in the
    order they started. Their costs add up to the session's (:func:`cost_of`):
    a sub-agent's is estimated from its requests; where the CLI recorded the
    session's total, the main loop's is that total less its sub-agents'."""
    mine: dict[str, _Own] = {a: _Own() for a in session.agents}
    for r in session.requests.values():
        (mine.get(r.agent) or mine.setdefault(r.agent, _Own())).add(r)
    own = {agent_id: o.cost for agent_id, o in mine.items()}
    total = cost_of(session)
    if total.source in ("recorded", "mixed") and total.usd is not None:
        subs = sum(usd for a, (usd, _, _) in own.items() if a != MAIN and usd is not None)
        own[MAIN] = (max(total.usd - subs, 0.0), "mixed" if subs else total.source, own[MAIN][2])
    parents = _parents(session)
    subtree: dict[str, float | None] = {}
    for agent_id in reversed(_top_down(parents)):  # every agent after the ones below it
        usd = own.get(agent_id, (None,))[0]
        below = [subtree[c] for c in parents.children.get(agent_id, ()) if subtree.get(c) is not None]
        subtree[agent_id] = None if usd is None and not below else (usd or 0.0) + sum(below)
    out = []
    for agent in session.agents.values():
        o = mine[agent.id]
        usd, source, reason = own[agent.id]
        out.append(AgentFigures(
            agent_id=agent.id,
            agent_type=agent.subagent_type,
            description=agent.description if agent.id != MAIN else "main",
            parent_agent_id=None if agent.id == MAIN else parents.of[agent.id],
            depth=agent.depth,
            cost_usd=usd, cost_source=source,
            input_tokens=o.tokens[0], output_tokens=o.tokens[1], cache_read_tokens=o.tokens[2],
            cache_write_tokens=o.tokens[3] + o.tokens[4],
            tool_calls=agent.tool_calls,
            duration_s=_duration(session, agent.id, o),
            subtree_cost_usd=subtree.get(agent.id),
            unpriced=reason,
        ))
    return out


class _Tree(NamedTuple):
    of: dict[str, str]
    """Each sub-agent's parent (the main loop when its own is unknown or would loop)."""
    children: dict[str, list[str]]


def _parents(session: Session) -> _Tree:
    """The agents' tree: each sub-agent under the agent that started it; one
    whose chain of parents leaves the session or comes back to itself (a
    crafted ``.meta.json``) hangs under the main loop."""
    agents = session.agents
    of: dict[str, str] = {}
    for agent in agents.values():
        if agent.id == MAIN:
            continue
        seen = {agent.id}
        up = agent.parent or MAIN
        while up != MAIN and up in agents and up not in seen:
            seen.add(up)
            up = agents[up].parent or MAIN
        of[agent.id] = (agent.parent or MAIN) if up == MAIN else MAIN
    children: dict[str, list[str]] = {}
    for child, parent in of.items():
        children.setdefault(parent, []).append(child)
    return _Tree(of, children)


def _top_down(tree: _Tree) -> list[str]:
    """The main loop, then every agent after the one that started it."""
    order = [MAIN]
    for agent_id in order:  # (grows as it goes: breadth first)
        order.extend(tree.children.get(agent_id, ()))
    return order


def _duration(session: Session, agent_id: str, own: _Own) -> float | None:
    """How long an agent ran: a sub-agent's call's duration (its task's when
    the call gives none); else from its first request to its last."""
    call = session.calls.get(agent_id)
    if call is not None and call.duration is not None:
        return call.duration
    task = session.tasks.get(call.task_id) if call is not None and call.task_id else None
    if task is not None and task.duration_ms is not None:
        return task.duration_ms / 1000
    first, last = parse_timestamp(own.first), parse_timestamp(own.last)
    return last - first if first is not None and last is not None else None


class CostMemo:
    """:func:`cost_of` for a screen that asks on every redraw: worked out again
    only when the session's requests or recorded cost changed. Until the
    price table is read (:func:`reducer.pricing.load`, in a worker), a cost
    that needs an estimate is ``None``: the screen draws it when it is there."""

    def __init__(self) -> None:
        self._key: tuple[int, int] | None = None
        self._at = 0.0
        self._cost = Cost(None, None)

    def cost(self, session: Session) -> Cost | None:
        """The session's cost; ``None`` while it waits for the price table."""
        key = (id(session), session.ledger_version)
        if key == self._key or _recent(self._key, key, self._at, session):
            return self._cost
        if not pricing.loaded() and session.requests and (
                session.cost_usd is None or session.recorded_through < len(session.requests)):
            return None
        self._key, self._cost, self._at = key, cost_of(session), time.monotonic()
        return self._cost


BIG = 2_000
"""Requests from which a live session's figures are worked out again at most
every :data:`EVERY` seconds (tens of ms each time, with thousands of agents)."""
EVERY = 0.5


def _recent(was: tuple[int, int] | None, key: tuple[int, int], at: float, session: Session) -> bool:
    """The same big session's figures were worked out less than :data:`EVERY` ago."""
    return was is not None and was[0] == key[0] and len(session.requests) >= BIG \
        and time.monotonic() - at < EVERY


class AgentMemo:
    """:func:`agent_figures` by agent id for cards drawn one at a time: worked
    out again only when the session's requests or recorded cost changed;
    ``None`` while the price table is being read (see :class:`CostMemo`)."""

    def __init__(self) -> None:
        self._key: tuple[int, int] | None = None
        self._at = 0.0
        self._figures: dict[str, AgentFigures] = {}

    def figures(self, session: Session) -> dict[str, AgentFigures] | None:
        key = (id(session), session.ledger_version)
        if key != self._key and not _recent(self._key, key, self._at, session):
            if not pricing.loaded() and session.requests:
                return None
            self._key, self._at = key, time.monotonic()
            self._figures = {a.agent_id: a for a in agent_figures(session)}
        return self._figures


def cost_text(cost: Cost | None) -> str:
    """A cost as the screens show it: ``$1.45`` recorded, ``~$1.45`` estimated
    (wholly or in part), ``–`` unknown, ``…`` while the price table is read."""
    if cost is None:
        return "…"
    if cost.usd is None:
        return "–"
    return ("" if cost.source == "recorded" else "~") + format_cost(cost.usd)


class PricedRequest(NamedTuple):
    """A request with its share of the session's cost (``None``: its model has no price)."""

    key: tuple[str, str | None]
    request: Request
    usd: float | None
    source: CostSource | None


def priced_requests(session: Session) -> list[PricedRequest]:
    """Every request of ``session`` with its cost: the estimate, or, for the
    requests a recorded cost covers, their share of it (the recorded total
    spread in proportion to their estimates), so a day's or a model's share
    of a session adds up to the session's cost."""
    keys = {id(r): k for k, r in session.requests.items()}
    requests = list(session.requests.values())
    costs = {id(r): pricing.request_cost(r.model, r.at, r.tokens) for r in requests}
    out: list[PricedRequest] = []
    later = requests
    if session.cost_usd is not None:
        covered, later = _split(requests, session.recorded_through, session.recorded_at)
        estimated = sum(c for r in covered if (c := costs[id(r)]) is not None)
        scale = session.cost_usd / estimated if estimated else 0.0
        for r in covered:
            c = costs[id(r)]
            out.append(PricedRequest(keys[id(r)], r, None if c is None else c * scale,
                                     None if c is None else "recorded"))
    for r in later:
        c = costs[id(r)]
        out.append(PricedRequest(keys[id(r)], r, c, None if c is None else "estimated"))
    return out
