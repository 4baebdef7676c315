"""Cost and usage: tokens of assistant messages (counted once per message),
of ``result`` frames, the cost of each turn and in all, the context window;
and every API request's tokens, model and time (:attr:`Usage.requests`), the
ledger a cost is estimated from (:mod:`reducer.costs`).
"""

from __future__ import annotations

from typing import Any

from .. import frames as F
from ..state import Agent, Request, RequestTokens, Totals, Turn
from .core import Core

__all__ = ["Usage", "request_tokens", "usage_counts", "usage_totals"]


def usage_totals(u: F.Usage | None) -> Totals:
    """Token counters of an API ``usage`` object (``None`` fields read as 0)."""
    if u is None:
        return Totals()
    return Totals(*usage_counts(u))


def usage_counts(u: F.Usage) -> tuple[int, int, int, int]:
    """:func:`usage_totals` as the tuple :attr:`Totals.counts` (no Totals made)."""
    return (u.input_tokens or 0, u.output_tokens or 0,
            u.cache_creation_input_tokens or 0, u.cache_read_input_tokens or 0)


def request_tokens(u: F.Usage) -> RequestTokens:
    """A usage's tokens by price: its cache writes split by how long they are
    kept (a usage that does not say wrote 5-minute ones, the default)."""
    write = u.cache_creation_input_tokens or 0
    split = u.cache_creation
    hour = min(split.ephemeral_1h_input_tokens or 0, write) if split is not None else 0
    return RequestTokens(u.input_tokens or 0, u.output_tokens or 0,
                         u.cache_read_input_tokens or 0, write - hour, hour)


class Usage:
    """Token and cost totals, and each turn's share of them."""

    def __init__(self, core: Core) -> None:
        self._core = core
        self.cost_usd: float | None = None
        """Total cost in USD; ``None`` while no frame recorded one (unknown, not $0)."""
        self._cost_base = 0.0
        self._cost_last = 0.0
        self._api_last = 0.0
        self.result_usage = Totals()
        self.assistant_usage = Totals()
        self._usage_by_message: dict[tuple[str, str | None], tuple[int, int, int, int]] = {}
        """(message id, request id) → the :attr:`Totals.counts` last counted for it."""
        self.requests: dict[tuple[str, str | None], Request] = {}
        """(message id, request id) → the request, in the order first seen."""
        self.recorded_through = 0
        """How many of :attr:`requests` the recorded :attr:`cost_usd` covers (those
        seen before the frame that recorded it)."""
        self.recorded_at: str | None = None
        """The latest time among those requests: a request folded later but
        made by then (a sub-agent's file is read after the main one) is
        covered too."""
        self._latest_at: str | None = None
        self._compacted = False
        """A compaction came since the main loop's last request."""
        self.ledger_version = 0
        """Raised whenever a request or the recorded cost changes (what a cost
        worked out from them is kept until it moves: :class:`reducer.costs.CostMemo`)."""
        self._turn_requests: list[Request] = []
        """The main loop's requests since the last ``result``."""
        self.model_usage: dict[str, dict[str, Any]] = {}
        self.context_window: int | None = None
        self.context_tokens: int | None = None
        self.results = 0
        self.is_error = False
        self.last_result: F.Result | None = None

    @property
    def totals(self) -> Totals:
        """Main-loop usage: summed from ``result`` frames when there are any, else
        from assistant messages counted once per (message id, request id)."""
        return self.result_usage if self.results else self.assistant_usage

    def assistant(self, agent: Agent, main: bool, key: tuple[str, str | None],
                  usage: F.Usage, model: str, at: str | None, turn: int) -> None:
        """An assistant frame of ``agent`` (``main``: the main loop) reported
        ``usage`` for the message ``key`` (message id, request id), made by
        ``model`` at ``at`` in the main-loop turn ``turn``: the latest
        frame's figures count, once per message."""
        new = usage_counts(usage)
        old = self._usage_by_message.get(key)
        if new != old:  # (each content block of a message repeats its usage)
            self._request(agent.id, main, key, usage, model, at, turn)
        self._usage_by_message[key] = new
        more = new[1] - old[1] if old is not None else new[1]
        agent.output_tokens += more
        if main:  # main loop only, like result.usage
            self.assistant_usage.add_counts(new, old)
            self.context_tokens = sum(new)
        elif more:
            self._core.agent_changed(agent.id)

    def _request(self, agent: str, main: bool, key: tuple[str, str | None], usage: F.Usage,
                 model: str, at: str | None, turn: int) -> None:
        """Note the request ``key`` in the ledger (the CLI's own ``<synthetic>``
        messages are no request)."""
        if model == "<synthetic>":
            return
        self.ledger_version += 1
        tokens = request_tokens(usage)
        if at is not None and (self._latest_at is None or at > self._latest_at):
            self._latest_at = at
        request = self.requests.get(key)
        if request is None:
            request = self.requests[key] = Request(agent, model, at, tokens, turn)
            if main and self._compacted:
                request.after_compaction, self._compacted = True, False
            if main:
                kept = self._turn_requests
                if kept and kept[-1].turn != turn:  # a turn that no result closed
                    kept.clear()
                kept.append(request)
        else:
            request.tokens = tokens

    def _turn_output(self, usage: F.Usage | None) -> None:
        """A ``result``'s usage is its turn's main-loop requests summed, with
        their final output: stream-json's assistant frames show a request's
        output only as far as it had streamed. The last request takes what
        they miss (when the result's input figures are those requests')."""
        requests, self._turn_requests = self._turn_requests, []
        if usage is None or not requests:
            return
        told = request_tokens(usage)
        seen = [sum(col) for col in zip(*(r.tokens for r in requests))]
        if (told.input, told.cache_read, told.cache_write_5m + told.cache_write_1h) \
                != (seen[0], seen[2], seen[3] + seen[4]) or told.output <= seen[1]:
            return
        last = requests[-1]
        last.tokens = last.tokens._replace(output=last.tokens.output + told.output - seen[1])
        self.ledger_version += 1

    def result(self, e: F.Result, turn: Turn) -> None:
        """A ``result`` closed ``turn``: its cost, usage and API time, and the totals."""
        self._turn_output(e.usage)
        self.results += 1
        self.last_result = e
        total = e.total_cost_usd
        if total is not None:
            if total < self._cost_last:  # a new query() run: its total starts again
                self._cost_base += self._cost_last
                self._api_last = 0.0  # and so does its API time
            turn.cost_usd = max(total - self._cost_last, 0.0) if total >= self._cost_last else total
            self._cost_last = total
            self.cost_usd = self._cost_base + total
            self._recorded()
        usage = usage_totals(e.usage)
        turn.usage = usage
        self.result_usage.add(usage)
        if e.modelUsage:
            self.model_usage = e.modelUsage  # (a turn's own is in its result: end_line)
            for mu in e.modelUsage.values():
                window = mu.get("contextWindow") if isinstance(mu, dict) else None
                if window:
                    self.context_window = window
        api = e.duration_api_ms
        turn.api_total_ms = api
        if api:  # the query's running total: this turn's share is what it added
            turn.duration_api_ms = api - self._api_last if api >= self._api_last else api
            self._api_last = api
        else:
            turn.duration_api_ms = api
        self.is_error = e.is_error

    def _recorded(self) -> None:
        """A frame recorded the cost of every request so far."""
        self.ledger_version += 1
        self.recorded_through = len(self.requests)
        self.recorded_at = self._latest_at

    def compacted(self) -> None:
        """The main loop's context was compacted: its next request starts from the summary."""
        self._compacted = True

    def restart(self) -> None:
        """The conversation was reset: the CLI's running cost starts again."""
        self._cost_base += self._cost_last
        self._cost_last = 0.0

    def on_cost_state(self, e: F.CostState, agent: str) -> None:
        if e.totalCostUSD is not None and not self.results:
            self.cost_usd = e.totalCostUSD
            self._recorded()
            if e.modelUsage:
                self.model_usage = e.modelUsage
            self._core.session_changed()

    def tables(self) -> list[dict[tuple[str, str | None], tuple[int, int, int, int]]]:
        """The containers it made itself that grow with the session."""
        return [self._usage_by_message, self.requests, self._turn_requests]
