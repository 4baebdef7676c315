"""What a session cost and who spent it: the recorded cost where the CLI
wrote one, an estimate from each request's tokens where it did not
(:mod:`reducer.pricing`), each figure labelled with where it comes from.

Every request is counted once (:attr:`reducer.fold.Session.requests` is keyed
by message id and request id), at its own model, time and cache tier.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Literal, NamedTuple

from . import pricing
from .state import Request

if TYPE_CHECKING:
    from .fold import Session

__all__ = ["Cost", "CostSource", "Estimate", "cost_of", "estimate", "session_cost"]

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


def session_cost(recorded: float | None, requests: list[Request], recorded_through: int) -> Cost:
    """The session's cost: ``recorded`` (covering the first ``recorded_through``
    of ``requests``) plus an estimate of the requests after it, or, with
    nothing recorded, the estimate of them all."""
    if recorded is not None:
        later = requests[recorded_through:]
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
    return session_cost(session.cost_usd, list(session.requests.values()), session.recorded_through)
