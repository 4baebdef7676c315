"""Numbers, counts of things, durations, costs, ids, paths and text cut to a
width, for display: the one set of formatters.

Every view (the transcript's cards, the tasks panel, the status bar, the
browser, the headless ``cctv summary``, the export) formats with these, so a
duration, a token count or a cut title reads the same everywhere. Pure
functions; no Textual, no Rich, no environment (the home directory is passed in).
"""

from __future__ import annotations

__all__ = ["human_bytes", "compact_count", "exact_count", "format_duration", "format_cost",
           "short_path", "tilde", "plural", "clip", "short_id", "short_age", "title_text",
           "WORDS"]


def exact_count(n: int | float | None) -> str:
    """A count in full with thousands separators: ``1,234``."""
    return f"{int(n or 0):,}"


def plural(n: int, word: str, many: str | None = None, *, grouped: bool = False) -> str:
    """``1 tool``, ``3 tools``: a count and its word. ``many`` is the plural when
    it is not ``word + "s"`` (``2 matches``); ``grouped`` separates the count's
    thousands (``1,234 more lines``)."""
    count = f"{n:,}" if grouped else str(n)
    return f"{count} {word}" if n == 1 else f"{count} {many or word + 's'}"


def human_bytes(n: int) -> str:
    """``812 B``, ``1.2 KiB``, ``24.0 MiB``."""
    if n < 1024:
        return f"{n} B"
    value = float(n)
    for unit in ("KiB", "MiB", "GiB"):
        value /= 1024
        if value < 1024 or unit == "GiB":
            return f"{value:.1f} {unit}"
    raise AssertionError  # unreachable


def compact_count(n: int | float | None) -> str:
    """Token counts the short way: ``812``, ``1.2k``, ``12.3k``, ``123k``, ``1.2M``, ``1M``."""
    if n is None:
        return "–"
    n = int(n)
    sign = "-" if n < 0 else ""
    n = abs(n)
    if n < 1000:
        return f"{sign}{n}"
    if n < 100_000:
        text = f"{n / 1000:.1f}".removesuffix(".0") + "k"
    elif n < 999_500:
        text = f"{round(n / 1000)}k"
    else:
        text = f"{n / 1_000_000:.1f}".removesuffix(".0") + "M"
    return sign + text


def format_duration(seconds: float | None) -> str:
    """``0.4s``, ``12s``, ``4m05s``, ``1h02m``; ``""`` for ``None``."""
    if seconds is None:
        return ""
    if seconds < 0:
        seconds = 0.0
    if seconds < 10:
        return f"{seconds:.1f}s"
    s = int(seconds)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{(s % 3600) // 60:02d}m"


def format_cost(usd: float | None) -> str:
    """``$0.0213`` below a dollar, ``$1.49`` above."""
    if usd is None:
        return "$–"
    return f"${usd:.4f}" if abs(usd) < 1 else f"${usd:.2f}"


def clip(text: str, width: int, *, one_line: bool = False, trim: bool = False,
         tail: bool = False) -> str:
    """``text`` in at most ``width`` characters, cut with ``…`` where it is cut.

    ``one_line`` first makes each run of whitespace (newlines too) one space;
    ``trim`` leaves no whitespace beside the ``…``; ``tail`` keeps the end
    (where a path's telling part is) and cuts the start. Characters, not
    terminal cells: a table cell is cut to its cells by Rich when drawn."""
    if one_line:
        text = " ".join(text.split())
    if len(text) <= width:
        return text
    if width <= 0:
        return ""
    if tail:
        kept = text[len(text) - width + 1:]
        return "…" + (kept.lstrip() if trim else kept)
    kept = text[: width - 1]
    return (kept.rstrip() if trim else kept) + "…"


def short_id(value: str, keep: int = 4) -> str:
    """``b0q8…`` for a long id (ids are told apart by their first characters);
    an id at most two characters longer than ``keep`` is shown whole."""
    return value if len(value) <= keep + 2 else clip(value, keep + 1)


def tilde(path: str, home: str) -> str:
    """``path`` with the home directory ``home`` at its start as ``~``
    (``~/src/demo``). A home of ``/`` (or none) is no home: every path is under it."""
    home = home.rstrip("/")
    if home and (path == home or path.startswith(home + "/")):
        return "~" + path[len(home):]
    return path


def short_path(path: str, width: int, home: str | None = None) -> str:
    """``path`` with ``home`` as ``~`` (:func:`tilde`) and, if still wider than
    ``width`` characters, its middle replaced by ``…`` (the file name is kept)."""
    if home:
        path = tilde(path, home)
    if len(path) <= width:
        return path
    if width <= 1:
        return "…"[:width]
    name = path.rsplit("/", 1)[-1]
    if len(name) + 2 >= width:  # only the name fits (and maybe not all of it)
        return "…" + name[-(width - 1):]
    keep_head = width - len(name) - 2  # "…" and "/" before the name
    head = path[: keep_head]
    return f"{head}…/{name}"


def short_age(seconds: float) -> str:
    """How long ago, or for how long, in one unit: ``45s``, ``2m``, ``3h``, ``2d``."""
    s = max(0, int(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m"
    if s < 86400:
        return f"{s // 3600}h"
    return f"{s // 86400}d"


def title_text(title: str | None) -> str:
    """A session's title as drawn: ``(untitled)`` when it has none (its
    figures, and every JSON, say ``None``)."""
    return title or "(untitled)"


WORDS: dict[str, str] = {
    "turns": "turn",
    "prompts": "prompt",
    "tool_calls": "tool call",
    "subagents": "sub-agent",
    "tasks": "task",
    "in": "in",
    "uncached": "uncached",
    "cache read": "cache read",
    "cache write": "cache write",
    "out": "out",
}
"""The word each figure is labelled with on every screen (a count's word in
the singular, for :func:`plural`). The README's ``cctv summary
--json`` table says what each one counts; a test holds the two together."""
