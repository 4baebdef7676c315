"""Every session priced: the estimate from each request's tokens against the
CLI's own figures (forge recordings of CLI 2.1.220 carry ``costUSD`` per
model in their ``result`` frames), against a sum written here for the public
transcripts (which recorded no cost), each request counted once."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from cctv.reducer import pricing
from cctv.reducer.costs import cost_of
from cctv.reducer.state import RequestTokens
from cctv.reducer.summary import format_summary, summarize
from cctv.viewer.discovery import subagent_files
from cctv.viewer.loader import load_path

from conftest import FIXTURES

FORGE = FIXTURES / "forge" / "2.1.220"
REAL = FIXTURES / "public" / "claude-code-log" / "real_projects"


def _json_lines(path: Path) -> list[dict]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            d = json.loads(line)
        except ValueError:
            continue
        if isinstance(d, dict):
            out.append(d)
    return out


def _stdout_holds_every_request(frames: list[dict], model_usage: dict) -> bool:
    """The recording's assistant frames carry every request the CLI billed:
    their input and cache tokens add up to its ``modelUsage`` (a workflow's
    agents, for one, bill requests that never reach stdout)."""
    seen: dict[tuple, dict] = {}
    for d in frames:
        if d.get("type") == "assistant" and d["message"].get("usage"):
            seen[(d["message"]["id"], d.get("request_id"))] = d["message"]["usage"]
    sums = [sum(u.get(k) or 0 for u in seen.values())
            for k in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")]
    told = [sum(m[k] for m in model_usage.values())
            for k in ("inputTokens", "cacheReadInputTokens", "cacheCreationInputTokens")]
    return sums == told


def _forge_cases() -> list[Path]:
    return sorted(p for p in FORGE.glob("*.jsonl") if not p.name.endswith(".stdin.jsonl"))


def test_the_estimate_of_a_forge_recording_is_the_clis_own_cost_to_the_cent() -> None:
    compared = []
    for path in _forge_cases():
        frames = _json_lines(path)
        results = [d for d in frames if d.get("type") == "result" and d.get("modelUsage")]
        if not results:
            continue
        model_usage = results[-1]["modelUsage"]
        if not _stdout_holds_every_request(frames, model_usage):
            continue
        cli_cost = sum(m["costUSD"] for m in model_usage.values())
        session = load_path(path).session
        # the recorded cost hidden: what the tokens alone say
        session.cost_usd = None
        cost = cost_of(session)
        assert cost.source == "estimated", path.name
        assert cost.usd == pytest.approx(cli_cost, abs=0.005), path.name
        compared.append((path.name, tuple(model_usage)))
    assert len(compared) >= 30  # nearly all of the 45 scenarios
    models = {m for _, ms in compared for m in ms}
    assert {"claude-opus-5[1m]", "claude-sonnet-4-6"} <= models  # 1-hour writes and 5-minute ones


def test_a_recorded_cost_is_shown_as_recorded_and_a_later_turn_as_mixed(tmp_path: Path) -> None:
    path = FORGE / "multi_turn.jsonl"
    session = load_path(path).session
    assert cost_of(session) == (session.cost_usd, "recorded", ())
    # the stdout cut in its second turn, after its first request: that turn still runs
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    first_result = next(i for i, l in enumerate(lines) if '"type":"result"' in l)
    request = next(i for i, l in enumerate(lines) if i > first_result and '"type":"assistant"' in l)
    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(lines[:request + 1]), encoding="utf-8")
    running = load_path(cut).session
    recorded = json.loads(lines[first_result])["total_cost_usd"]
    later = json.loads(lines[request])["message"]
    u = later["usage"]
    by_hand = pricing.request_cost(later["model"], None, RequestTokens(
        u["input_tokens"], u["output_tokens"], u["cache_read_input_tokens"],
        u["cache_creation"]["ephemeral_5m_input_tokens"],
        u["cache_creation"]["ephemeral_1h_input_tokens"]))
    cost = cost_of(running)
    assert cost.source == "mixed"
    assert cost.usd == pytest.approx(recorded + by_hand)


# --- the public transcripts: an independent sum ----------------------------------------------

# Anthropic's list prices, USD per million tokens: input, output, cache read,
# 5-minute cache write, 1-hour cache write (none of these requests passes 200k
# input tokens, where Sonnet's long-context prices start).
_PRICES = {
    "claude-opus-4-20250514": (15, 75, 1.5, 18.75, 30),
    "claude-opus-4-1-20250805": (15, 75, 1.5, 18.75, 30),
    "claude-opus-4-5-20251101": (5, 25, 0.5, 6.25, 10),
    "claude-opus-4-6": (5, 25, 0.5, 6.25, 10),
    "claude-opus-4-7": (5, 25, 0.5, 6.25, 10),
    "claude-sonnet-4-20250514": (3, 15, 0.3, 3.75, 6),
    "claude-sonnet-4-5-20250929": (3, 15, 0.3, 3.75, 6),
    "claude-haiku-4-5-20251001": (1, 5, 0.1, 1.25, 2),
}


def _hand_sum(files: list[Path]) -> float:
    """Each (message id, request id) once, its last row's usage, priced by hand."""
    last: dict[tuple, dict] = {}
    for f in files:
        for d in _json_lines(f):
            m = d.get("message")
            if d.get("type") == "assistant" and isinstance(m, dict) and m.get("usage") \
                    and m.get("id") and m.get("model") != "<synthetic>":
                last[(m["id"], d.get("requestId"))] = m
    usd = 0.0
    for m in last.values():
        u = m["usage"]
        p = _PRICES[m["model"]]
        write = u.get("cache_creation_input_tokens") or 0
        hour = (u.get("cache_creation") or {}).get("ephemeral_1h_input_tokens") or 0
        usd += ((u.get("input_tokens") or 0) * p[0] + (u.get("output_tokens") or 0) * p[1]
                + (u.get("cache_read_input_tokens") or 0) * p[2] + (write - hour) * p[3]
                + hour * p[4]) / 1e6
    return usd


def _real_sessions() -> list[Path]:
    return sorted(p for p in REAL.glob("*/*.jsonl") if not p.name.startswith("agent-"))


def test_every_public_session_with_a_known_model_is_priced_as_a_hand_sum_says() -> None:
    priced = 0
    for path in _real_sessions():
        session = load_path(path).session
        assert session.cost_usd is None  # none of these CLIs recorded one
        cost = cost_of(session)
        # the session's sub-agents as the viewer finds them (warm-up and
        # compaction agents' files are not sub-agents: see the README)
        files = [path, *(p for p, _ in subagent_files(path))]
        expected = _hand_sum(files)
        if not session.requests:
            assert cost.usd is None and cost.source is None
            continue
        assert cost.source == "estimated", path
        assert cost.unpriced == ()
        assert cost.usd == pytest.approx(expected, rel=1e-9), path
        priced += 1
    assert priced >= 25


def _biggest_session() -> Path:
    return max(_real_sessions(), key=lambda p: p.stat().st_size)


def test_the_summary_says_where_its_cost_comes_from() -> None:
    path = _biggest_session()
    data = summarize(load_path(path).session)
    assert data["cost_source"] == "estimated" and data["cost_usd"] > 0
    assert "cost ~$" in format_summary(data)
    recorded = summarize(load_path(FORGE / "trivial.jsonl").session)
    assert recorded["cost_source"] == "recorded"
    assert recorded["cost_usd"] == pytest.approx(0.63463, abs=1e-5)


# --- each request once -----------------------------------------------------------------------


def _copy_with_session_id(lines: list[str], new_id: str) -> list[str]:
    out = []
    for line in lines:
        d = json.loads(line)
        if "sessionId" in d:
            d["sessionId"] = new_id
        out.append(json.dumps(d) + "\n")
    return out


def test_a_duplicated_row_a_resumed_copy_and_a_fork_are_priced_once(tmp_path: Path) -> None:
    path = _biggest_session()
    once = cost_of(load_path(path, subagents=False).session)
    assert once.usd and once.usd > 0
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    assistant = [l for l in lines if '"type":"assistant"' in l]
    # every assistant row written twice
    doubled = tmp_path / "doubled.jsonl"
    doubled.write_text("".join(lines + assistant), encoding="utf-8")
    # a resumed session: the old rows copied under a new session id, then its own
    resumed = tmp_path / "resumed.jsonl"
    resumed.write_text("".join(lines + _copy_with_session_id(lines, "resumed-0001")), encoding="utf-8")
    for p in (doubled, resumed):
        cost = cost_of(load_path(p, subagents=False).session)
        assert cost.usd == pytest.approx(once.usd, rel=1e-12), p.name
    # the peer's fork fixture: three sessions sharing their first rows
    fork = FIXTURES / "public" / "claude-code-log" / "dag_fork.jsonl"
    session = load_path(fork).session
    keys = {(d["message"]["id"], d.get("requestId")) for d in _json_lines(fork)
            if d.get("type") == "assistant"}
    assert set(session.requests) == keys


def test_an_unknown_model_shows_its_tokens_and_no_cost(tmp_path: Path) -> None:
    path = _biggest_session()
    text = path.read_text(encoding="utf-8")
    models = {d["message"]["model"] for d in _json_lines(path) if d.get("type") == "assistant"}
    for m in models - {"<synthetic>"}:
        text = text.replace(f'"model":"{m}"', '"model":"claude-fable-9"')
    odd = tmp_path / "odd.jsonl"
    odd.write_text(text, encoding="utf-8")
    session = load_path(odd, subagents=False).session
    cost = cost_of(session)
    assert cost.usd is None and cost.source is None
    assert cost.unpriced == ("claude-fable-9",)
    assert cost.reason == "no price known for claude-fable-9"
    data = summarize(session)
    assert data["cost_usd"] is None and data["usage"]["output_tokens"] > 0
    text = format_summary(data)
    assert "cost – (no price known for claude-fable-9)" in text
    assert "$0" not in text


# --- the rate cards are the library's prices -------------------------------------------------


_MODELS = ["claude-opus-4-20250514", "claude-sonnet-4-5-20250929", "claude-haiku-4-5-20251001",
           "claude-opus-4-6", "claude-sonnet-4-6", "claude-opus-5", "claude-3-5-haiku-20241022"]


@settings(max_examples=150, deadline=None)
@given(model=st.sampled_from(_MODELS),
       day=st.dates(min_value=datetime(2025, 1, 1).date(), max_value=datetime(2026, 12, 31).date()),
       tokens=st.tuples(*[st.integers(0, 400_000)] * 5))
def test_a_rate_card_prices_a_request_as_genai_prices_does(model, day, tokens) -> None:
    from genai_prices import Usage, calc_price

    t = RequestTokens(*tokens)
    write = t.cache_write_5m + t.cache_write_1h
    usage = Usage(input_tokens=t.total_input, output_tokens=t.output, cache_read_tokens=t.cache_read,
                  cache_write_tokens=write, cache_write_1h_tokens=t.cache_write_1h,
                  cache_write_5m_tokens=t.cache_write_5m)
    at = f"{day.isoformat()}T12:00:00Z"
    want = calc_price(usage, model, provider_id="anthropic",
                      genai_request_timestamp=datetime.fromisoformat(at.replace("Z", "+00:00")))
    assert pricing.request_cost(model, at, t) == pytest.approx(float(want.total_price), rel=1e-9)


def test_the_model_variant_and_the_window() -> None:
    t = RequestTokens(4, 179, 96230, 0, 62947)
    assert pricing.request_cost("claude-opus-5[1m]", "2026-07-25T05:00:00Z", t) == pytest.approx(0.68208)
    assert pricing.context_window("claude-opus-5[1m]") == 1_000_000
    assert pricing.context_window("claude-sonnet-4-5-20250929") == 200_000
    assert pricing.context_window("claude-fable-9") is None
    assert pricing.request_cost("claude-fable-9", None, t) is None


def test_a_screen_shows_an_estimate_once_the_table_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    from cctv.reducer.costs import CostMemo, cost_text

    session = load_path(_biggest_session()).session
    memo = CostMemo()
    monkeypatch.setattr(pricing, "loaded", lambda: False)  # still being read, in a worker
    assert memo.cost(session) is None and cost_text(memo.cost(session)) == "…"
    recorded = load_path(FORGE / "trivial.jsonl").session  # a recorded cost needs no table
    assert cost_text(memo.cost(recorded)) == "$0.6346"
    monkeypatch.undo()
    cost = memo.cost(session)
    assert cost == cost_of(session) and cost_text(cost).startswith("~$")
    assert memo.cost(session) is cost  # asked again: the same, not worked out again
