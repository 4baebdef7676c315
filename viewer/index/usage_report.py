"""``cctv usage``: what the saved sessions cost, by day, week, project, model
or session, from the index (a file is read again only when it changed).

Each API request counts once, whichever sessions hold a copy of it (a resumed
or forked session copies its rows). A request's cost is its share of the
cost the CLI recorded for its session, or an estimate from its tokens
(:mod:`reducer.pricing`): a figure with any estimate in it is marked ``~``.
A model without a price keeps its tokens and is named; its cost is not counted.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any, Literal, TextIO, get_args

from cctv.reducer.format import compact_count, format_cost
from cctv.reducer.safe import visible
from cctv.reducer.timestamps import parse_timestamp

from . import resolve_root
from .listing import open_index

__all__ = ["By", "BY", "run_usage"]

By = Literal["day", "week", "project", "model", "session"]
BY: tuple[str, ...] = get_args(By)


class _Sum:
    """One line of the report: requests and their tokens and cost summed."""

    def __init__(self) -> None:
        self.requests = self.input = self.output = self.cache_read = self.cache_write = 0
        self.cost = 0.0
        self.recorded = self.estimated = 0
        self.unpriced: set[str] = set()

    def add(self, row: tuple[Any, ...]) -> None:
        """Add a row of :meth:`viewer.index.store.IndexStore.usage`."""
        self.requests += row[1]
        self.input += row[2] or 0
        self.output += row[3] or 0
        self.cache_read += row[4] or 0
        self.cache_write += row[5] or 0
        self.cost += row[6] or 0.0
        self.recorded += row[7] or 0
        self.estimated += row[8] or 0
        if row[9]:
            self.unpriced.update(row[9].split(","))

    @property
    def source(self) -> str | None:
        """``recorded``, ``estimated``, ``mixed``, or ``None``: nothing priced."""
        if self.recorded and self.estimated:
            return "mixed"
        return "recorded" if self.recorded else "estimated" if self.estimated else None

    @property
    def cost_text(self) -> str:
        if self.source is None:
            return "–"
        return ("" if self.source == "recorded" else "~") + format_cost(self.cost)

    def as_json(self, key: str, label: str) -> dict[str, Any]:
        return {key: label, "requests": self.requests, "input_tokens": self.input,
                "output_tokens": self.output, "cache_read_tokens": self.cache_read,
                "cache_write_tokens": self.cache_write,
                "cost_usd": None if self.source is None else round(self.cost, 6),
                "cost_source": self.source, "unpriced_models": sorted(self.unpriced)}


def _week(day: str) -> str:
    """The ISO week of a ``YYYY-MM-DD`` day: ``2026-W48`` (``""`` for no day)."""
    when = parse_timestamp(day)
    if when is None:
        return ""
    year, week, _ = dt.datetime.fromtimestamp(when, dt.UTC).isocalendar()
    return f"{year}-W{week:02d}"


def report(index: Any, by: By, since: str | None) -> list[tuple[str, _Sum]]:
    """The report's lines, in order (days and weeks oldest first, the rest by cost)."""
    sql_by = {"week": "day", "project": "session"}.get(by, by)
    rows = index.usage(sql_by, since)
    label: Any = str
    if by == "week":
        label = _week
    elif by in ("project", "session"):
        sessions = index.rows_by_id()

        def label(sid: int) -> str:
            row = sessions.get(sid)
            if row is None:
                return "?"
            return row.project if by == "project" else row.session_id
    sums: dict[str, _Sum] = {}
    for row in rows:
        sums.setdefault(label(row[0]) or "(no time)", _Sum()).add(row)
    if by in ("day", "week"):
        return sorted(sums.items())
    return sorted(sums.items(), key=lambda kv: (-kv[1].cost, kv[0]))


def run_usage(directory: str | None, by: By, since: str | None, as_json: bool,
              use_index: bool, out: TextIO, err: TextIO) -> int:
    """Print the report (``--json``: a list of objects, the total last)."""
    root = resolve_root(directory)
    if not root.is_dir():
        if as_json:
            print("[]", file=out)
        print(visible(f"cctv: no projects folder at {root}", oneline=True), file=err)
        return 0 if as_json else 1
    index = open_index(directory, use_index, err, rows=False)
    lines = report(index, by, since)
    total = _Sum()
    for _, s in lines:
        total.add(("", s.requests, s.input, s.output, s.cache_read, s.cache_write, s.cost,
                   s.recorded, s.estimated, ",".join(s.unpriced)))
    if as_json:
        json.dump([*(s.as_json(by, k) for k, s in lines), total.as_json(by, "total")], out, indent=2)
        out.write("\n")
        return 0
    width = max([len(k) for k, _ in lines] + [5])
    print(f"{by:<{width}}  {'requests':>8}  {'in':>7}  {'out':>7}  {'cache r':>7}  {'cache w':>7}"
          f"  {'cost':>10}", file=out)
    for key, s in [*lines, ("total", total)]:
        print(visible(f"{key:<{width}}  {s.requests:>8}  {compact_count(s.input):>7}"
                      f"  {compact_count(s.output):>7}  {compact_count(s.cache_read):>7}"
                      f"  {compact_count(s.cache_write):>7}  {s.cost_text:>10}", oneline=True), file=out)
    if total.estimated:
        print("~: estimated from the tokens with genai-prices' table (no cost recorded)", file=out)
    if total.unpriced:
        print(visible(f"–: no price known for {', '.join(sorted(total.unpriced))}"
                      " (tokens counted, cost not)", oneline=True), file=out)
    return 0
