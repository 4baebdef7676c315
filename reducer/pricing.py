"""What an API request cost, estimated from its tokens with the price table
that `genai-prices <https://github.com/pydantic/genai-prices>`_ ships (an
offline snapshot: nothing is fetched).

The table is imported on the first price asked for, never before: importing
it (pydantic included) takes ~0.15 s, which no start-up path pays. Each
(model, hour) gets a :class:`RateCard` once, from the library's own prices
and tier rule; a request is then priced with five multiplications, so pricing
every request of thousands of sessions stays cheap (the library's
``calc_price`` takes ~0.2 ms a call). tests/test_pricing.py checks the two
agree.
"""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime
from functools import lru_cache
from typing import NamedTuple

from .state import RequestTokens
from .timestamps import parse_timestamp

__all__ = ["RateCard", "context_window", "load", "loaded", "model_ref", "rate_card",
           "request_cost", "unpriced_reason"]

_PROVIDER = "anthropic"
_VARIANT = re.compile(r"\[[^\]]*\]$")
"""The CLI's suffix for a model's variant (``claude-opus-5[1m]``: the 1M-token window)."""


class RateCard(NamedTuple):
    """USD per token of each kind in :class:`RequestTokens`' order, for one
    model at one time: ``base`` up to the first tier, then ``tiers`` as
    (input tokens above which it applies, rates), the highest one reached
    applying to the whole request (the "cliff" rule)."""

    model: str
    """The price table's id of the model."""
    base: tuple[float, float, float, float, float]
    tiers: tuple[tuple[int, tuple[float, float, float, float, float]], ...]

    def cost(self, tokens: RequestTokens) -> float:
        rates = self.base
        if self.tiers:
            total = tokens.total_input
            for start, tier_rates in reversed(self.tiers):
                if total > start:
                    rates = tier_rates
                    break
        return (tokens.input * rates[0] + tokens.output * rates[1] + tokens.cache_read * rates[2]
                + tokens.cache_write_5m * rates[3] + tokens.cache_write_1h * rates[4])


def model_ref(model: str) -> str:
    """The name the price table knows ``model`` by (its variant suffix dropped)."""
    return _VARIANT.sub("", model)


@lru_cache(maxsize=1 << 16)
def request_cost(model: str, at: str | None, tokens: RequestTokens) -> float | None:
    """What a request of ``model`` made at ``at`` (ISO 8601; ``None``: now)
    cost in USD; ``None`` when the table has no price for the model. (Kept:
    a live session's cost is worked out again as it grows, from the same
    requests.)"""
    card = rate_card(model, _hour(at))
    return None if card is None else card.cost(tokens)


def unpriced_reason(model: str) -> str:
    """Why a model's requests have no cost: what a screen says beside its "–"."""
    return f"no price known for {model or 'an unnamed model'}"


def context_window(model: str) -> int | None:
    """The model's context window in tokens (``[1m]``: a million), ``None`` if unknown."""
    if model.endswith("[1m]"):
        return 1_000_000
    found = _model_info(model_ref(model))
    return None if found is None else found.context_window


def load() -> None:
    """Read the price table now (~0.4 s: a viewer does it in a worker thread
    once its first screen is up, so that no redraw waits for it)."""
    _model_info("claude-sonnet-4-5")


def loaded() -> bool:
    """The price table has been read: a price costs microseconds now."""
    return _model_info.cache_info().currsize > 0


def _hour(at: str | None) -> int:
    """The hour of an ISO 8601 time (hours since the epoch; no time: now).
    Prices change by date: a card per hour is exact enough and keeps them few."""
    when = parse_timestamp(at)
    return int((time.time() if when is None else when) // 3600)


@lru_cache(maxsize=None)
def _model_info(ref: str):  # -> genai_prices.types.ModelInfo | None
    from genai_prices import data_snapshot  # the table: imported on the first price asked

    try:
        return data_snapshot.get_snapshot().find_provider_model(ref, None, _PROVIDER, None)[1]
    except LookupError:
        return None


@lru_cache(maxsize=4096)
def rate_card(model: str, hour: int) -> RateCard | None:
    """The rates of ``model`` in force in ``hour`` (hours since the epoch),
    ``None`` when the table has no such model."""
    info = _model_info(model_ref(model))
    if info is None:
        return None
    from genai_prices.types import TieredPrices, calc_unit_price

    when = datetime.fromtimestamp(hour * 3600, UTC)
    prices = info.get_prices(when)
    # each kind's price, falling back as the table's own decomposition does:
    # an unpriced 1-hour write is a cache write, an unpriced cache kind is input
    input_p = prices.input_mtok
    write = prices.cache_write_mtok if prices.cache_write_mtok is not None else input_p
    kinds = (input_p, prices.output_mtok,
             prices.cache_read_mtok if prices.cache_read_mtok is not None else input_p,
             write,
             prices.cache_write_1h_mtok if prices.cache_write_1h_mtok is not None else write)
    starts = sorted({tier.start for p in kinds if isinstance(p, TieredPrices) for tier in p.tiers})

    def rates(total_input: int) -> tuple[float, float, float, float, float]:
        r = [float(calc_unit_price(p, 1, total_input, 1_000_000)) for p in kinds]
        return (r[0], r[1], r[2], r[3], r[4])

    return RateCard(info.id, rates(0), tuple((s, rates(s + 1)) for s in starts))
