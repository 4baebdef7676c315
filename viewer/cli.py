"""The ``cctv`` command line: one table of subcommands, one dispatch.

Headless subcommands (``check``, ``summary``, …) import only what they need, so
they start fast and never load Textual; ``tests/test_import_hygiene.py`` checks it.
"""

from __future__ import annotations

import argparse
import difflib
import math
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from cctv.reducer.safe import visible

__all__ = ["main", "version", "COMMANDS"]


def version() -> str:
    """The installed distribution's version (the source tree's when not installed)."""
    from importlib import metadata

    try:
        return metadata.version("cctv")
    except metadata.PackageNotFoundError:  # running from a checkout
        return "0.0.0+source"


@dataclass(frozen=True)
class Command:
    """One ``cctv WORD``: its usage line, its one-line help and what runs it."""

    usage: str
    help: str
    run: Callable[[str, list[str]], int]


def _parser(name: str, desc: str) -> argparse.ArgumentParser:
    return argparse.ArgumentParser(prog=f"cctv {name}", description=desc)


def _speed(word: str) -> float:
    """A ``--speed``: a factor, or ``max`` (no pacing: infinitely fast)."""
    if word == "max":
        return math.inf
    try:
        return float(word)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number or max: {word!r}") from None


def _positive(word: str) -> int:
    """An argument that must be a whole number above 0."""
    try:
        n = int(word)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"not a whole number above 0: {word!r}")
    return n


# --- the subcommands ---------------------------------------------------------------------


_PATH_HELP = "a session file, or a saved session's id (or its first 6+ characters)"


_SHORT_ID = re.compile(r"(?=[^0-9]*[0-9])[0-9a-fA-F][0-9a-fA-F-]{2,4}")
"""The start of a session id too short to name one (with a digit, so not a word like ``add``)."""


def _session_arg(word: str) -> str:
    """A PATH argument as given; or, when no such file exists and ``word`` is a
    session id or its first characters (as ``cctv sessions`` prints them), the
    file of the one session under the projects folder it names. Naming
    several is a usage error (exit 2)."""
    if word == "-" or word.startswith("-") or Path(word).expanduser().exists():
        return word
    from .index.scan import sessions_by_id

    found = sessions_by_id(word)
    if found is None and _SHORT_ID.fullmatch(word):
        raise SystemExit(_error(f"no file '{word}'; to name a session by its id, give its "
                                "first 6 characters or more"))
    if not found:
        return word
    if len({p.stem.lower() for p in found}) == 1 and len(found) > 1:
        code = _error(f"'{word}' is the id of {len(found)} sessions, in different project"
                      f" folders; give the path of one (cctv browse {word} lists them to pick from):")
        for path in found:
            print(visible(f"  {path}", oneline=True), file=sys.stderr)
        raise SystemExit(code)
    if len(found) > 1:
        ids = ", ".join(p.stem for p in found[:4]) + (", …" if len(found) > 4 else "")
        raise SystemExit(_error(f"'{word}' starts {len(found)} session ids ({ids}): "
                                "give more of it"))
    return str(found[0])


def _browse_target(word: str | None) -> tuple[str | None, str]:
    """``cctv browse WORD``: a folder to browse (``WORD`` as given), or a session
    id or its start: the projects folder, the id in the search box, so the
    sessions it names are listed to pick from (an id shared by sessions of
    several project folders: each of them). Returns the folder and the search."""
    if word is None or Path(word).expanduser().exists():
        return word, ""
    from .index.scan import default_projects_dir, sessions_by_id

    found = sessions_by_id(word)
    if found is None and _SHORT_ID.fullmatch(word):
        raise SystemExit(_error(f"no folder '{word}'; to name a session by its id, give its "
                                "first 6 characters or more"))
    if found is None:
        return word, ""  # a folder that is not there: said as such
    if not found:
        raise SystemExit(_error(f"no folder '{word}', and no session id under "
                                f"{default_projects_dir()} starts with it"))
    return None, word


def _viewer(name: str, args: list[str]) -> int:
    """Subcommands that open the terminal UI (tail, run, demo, a path)."""
    from .launch import launch

    if name in ("", "tail") and args:  # a session named by its id opens like its path
        args = [_session_arg(args[0]), *args[1:]]
    return launch([name, *args] if name else args)


def _viewer_with_help(desc: str, usage: str) -> Callable[[str, list[str]], int]:
    def run(name: str, args: list[str]) -> int:
        if args[:1] in (["-h"], ["--help"]):
            print(f"usage: {usage}\n\n{desc}")
            return 0
        return _viewer(name, args)

    return run


def _check(name: str, args: list[str]) -> int:
    p = _parser(name, "Decode files; report kinds, malformed lines and the round trip.")
    p.add_argument("paths", nargs="+", metavar="PATH", help=_PATH_HELP)
    p.add_argument("--json", action="store_true", help="machine-readable output")
    ns = p.parse_args(args)
    from .headless import run_check

    return run_check([_session_arg(path) for path in ns.paths], ns.json, sys.stdout, sys.stderr)


def _summary(name: str, args: list[str]) -> int:
    p = _parser(name, "Print the folded state of a session.")
    p.add_argument("path", metavar="PATH", help=_PATH_HELP)
    p.add_argument("--json", action="store_true", help="machine-readable output")
    ns = p.parse_args(args)
    from .headless import run_summary

    return run_summary(_session_arg(ns.path), ns.json, sys.stdout, sys.stderr)


def _export(name: str, args: list[str]) -> int:
    p = _parser(name, "Write a session as Markdown (standard output unless -o).")
    p.add_argument("path", metavar="PATH", help=_PATH_HELP)
    p.add_argument("--md", action="store_true", help="Markdown (the only format so far)")
    p.add_argument("-o", "--output", metavar="FILE", help="write here (default: stdout)")
    p.add_argument("--hide", default="", metavar="KINDS",
                   help="leave out these kinds: hooks,harness,notices,thinking,footers")
    p.add_argument("--only-errors", action="store_true", help="only failed calls and errors")
    p.add_argument("--only-tool", metavar="NAME", help="only the calls of this tool")
    p.add_argument("--no-times", action="store_true", help="leave out each item's time")
    ns = p.parse_args(args)
    ns.path = _session_arg(ns.path)
    from .export import run_export

    return run_export(ns.path, ns.output, hide=ns.hide, only_errors=ns.only_errors,
                      only_tool=ns.only_tool, times=not ns.no_times,
                      out=sys.stdout, err=sys.stderr)


_SPAN_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def _span(text: str) -> float:
    """``--within``'s value: ``90s``, ``15m``, ``2h``, ``1d`` (a bare number: minutes)."""
    text = text.strip().lower()
    unit = _SPAN_UNITS.get(text[-1:], 0)
    number = text[:-1] if unit else text
    try:
        value = float(number) * (unit or 60)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a span of time: {text!r} (say 90s, 15m, 2h)") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"not a span of time: {text!r} (say 90s, 15m, 2h)")
    return value


def _cache(name: str, args: list[str]) -> int:
    p = _parser(name, "Show the session checkpoints kept in the cache (reopening a big "
                      "session restores its fold from one); --clear removes them.")
    p.add_argument("--clear", action="store_true", help="remove every checkpoint")
    ns = p.parse_args(args)
    from .fold_cache import run_cache

    return run_cache(ns.clear, sys.stdout)


def _usage(name: str, args: list[str]) -> int:
    """``cctv usage``: what the saved sessions cost, from the index."""
    from .index.usage_report import BY, run_usage

    p = _parser(name, "What the saved sessions cost, by day, week, project, model or session "
                      "(from the index; ~ marks an estimate from the tokens).")
    p.add_argument("dir", nargs="?", metavar="DIR",
                   help="a projects folder, or a config root holding projects/"
                        " (default: $CLAUDE_CONFIG_DIR/projects or ~/.claude/projects)")
    p.add_argument("--by", choices=BY, default="day", help="one line per … (default: day)")
    p.add_argument("--since", metavar="DATE", type=_date, help="requests made on DATE (YYYY-MM-DD) or later")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--no-index", action="store_true",
                   help="read the files directly; use and write no index")
    ns = p.parse_args(args)
    return run_usage(ns.dir, ns.by, ns.since, ns.json, not ns.no_index, sys.stdout, sys.stderr)


def _date(text: str) -> str:
    """``--since``'s day, as ``YYYY-MM-DD``."""
    from cctv.reducer.timestamps import utc_day

    day = utc_day(text)
    if day is None:
        raise argparse.ArgumentTypeError(f"not a date (YYYY-MM-DD): {text!r}")
    return day


def _index_command(command: str, rest: list[str]) -> int:
    """``cctv sessions``, ``cctv search`` and ``cctv browse``: the session index."""
    p = _parser(command, COMMANDS[command].help[0].upper() + COMMANDS[command].help[1:] + ".")
    if command == "search":
        from cctv.reducer.roles import ROLES

        p.add_argument("query", metavar="QUERY")
        p.add_argument("--role", choices=ROLES, metavar="ROLE",
                       help="only texts of this role: " + ", ".join(ROLES))
        p.add_argument("--limit", type=_positive, metavar="N",
                       help="the first N hits, then a line saying how many more (default: every hit)")
    if command == "browse":
        p.add_argument("dir", nargs="?", metavar="DIR|ID",
                       help="a projects folder, or a config root holding projects/"
                            " (default: $CLAUDE_CONFIG_DIR/projects or ~/.claude/projects);"
                            " or a session id (6+ characters): the sessions it names, to pick from")
    else:
        p.add_argument("dir", nargs="?", metavar="DIR",
                       help="a projects folder, or a config root holding projects/"
                            " (default: $CLAUDE_CONFIG_DIR/projects or ~/.claude/projects)")
    if command != "browse":
        p.add_argument("--json", action="store_true", help="machine-readable output")
    if command == "sessions":
        p.add_argument("--live", action="store_true",
                       help="only the sessions written to lately, with what each is doing,"
                            " the ones that need you first")
        p.add_argument("--within", type=_span, default=None, metavar="SPAN",
                       help="with --live: written to within SPAN (90s, 15m, 2h; default 15m)")
    p.add_argument("--no-index", action="store_true",
                   help="read the files directly; use and write no index")
    ns = p.parse_args(rest)
    if command == "browse":
        from .launch import launch_browser

        directory, search = _browse_target(ns.dir)
        return launch_browser(directory, use_index=not ns.no_index, search=search)
    from .index.listing import run_search, run_sessions

    if command == "sessions":
        if ns.within is not None and not ns.live:
            p.error("--within goes with --live")
        from cctv.reducer.live_state import HORIZON_S

        within = (ns.within or HORIZON_S) if ns.live else None
        return run_sessions(ns.dir, ns.json, not ns.no_index, sys.stdout, sys.stderr,
                            live_within=within)
    return run_search(ns.query, ns.dir, ns.json, not ns.no_index, sys.stdout, sys.stderr,
                      limit=ns.limit, role=ns.role)


_REPLAY_HEAD_BYTES = 4 << 20
"""A replay of a bigger file opens on this much (after the ``--from`` line),
the rest read behind."""


def _replay(name: str, args: list[str]) -> int:
    """``cctv replay``: the viewer paused at a frame, or ``--emit`` (headless)."""
    p = _parser(name, "Replay a recorded session at its recorded pace.")
    p.add_argument("path", metavar="PATH", help=_PATH_HELP)
    p.add_argument("--speed", type=_speed, default=1.0, metavar="N",
                   help="speed factor, 0.25 to 64 (default 1); with --emit also max"
                        " (every line at once, no pacing)")
    p.add_argument("--from", dest="from_line", type=int, default=None, metavar="LINE",
                   help="start at this line of the file")
    p.add_argument("--emit", action="store_true",
                   help="write the lines to stdout at their recorded pace instead of viewing")
    p.add_argument("--keep-idle", action="store_true",
                   help="do not shorten idle gaps longer than a few seconds")
    p.add_argument("--raw", action="store_true",
                   help="with --emit: write the bytes to a terminal too (it acts on"
                        " any escape sequence in them)")
    ns = p.parse_args(args)
    ns.path = _session_arg(ns.path)
    if ns.speed == math.inf and not ns.emit:
        p.error("--speed max goes with --emit")
    if not (0.25 <= ns.speed <= 64 or ns.speed == math.inf):
        p.error("--speed must be between 0.25 and 64, or max with --emit")
    if ns.from_line is not None and ns.from_line < 1:
        p.error("--from must be a line number (1 or more)")
    if ns.raw and not ns.emit:
        p.error("--raw goes with --emit")
    if ns.emit and not ns.raw and sys.stdout.isatty():
        print("cctv replay: --emit writes the file's raw bytes, which a terminal would act on:"
              " pipe it into cctv (cctv replay FILE --emit | cctv -), or add --raw",
              file=sys.stderr)
        return 2
    if ns.emit:
        from .replay.emit import run_emit

        return run_emit(ns.path, speed=ns.speed, from_line=ns.from_line or 1,
                        skip_idle=not ns.keep_idle, out=getattr(sys.stdout, "buffer", sys.stdout),
                        err=sys.stderr)
    from .launch import no_terminal
    from .loader import InputError
    from .replay.recording import load_recording

    try:
        recording = load_recording(ns.path, head_bytes=_REPLAY_HEAD_BYTES,
                                   through_line=ns.from_line)
    except InputError as exc:
        print(visible(f"cctv replay: {exc}", oneline=True), file=sys.stderr)
        return 2
    if not recording.frames:
        print(visible(f"cctv replay: {ns.path}: no lines to replay", oneline=True), file=sys.stderr)
        return 2
    if no_terminal():
        return 2
    from .replay.app import ReplayApp

    replay = recording.replay()
    start = replay.position_of_line(ns.from_line) if ns.from_line else 1
    app = ReplayApp(recording, replay=replay, start=start, speed=ns.speed,
                    skip_idle=not ns.keep_idle)
    from .launch import exit_status

    return exit_status(app, app.run())


COMMANDS: dict[str, Command] = {
    "browse": Command(
        "cctv browse [DIR | ID]",
        "browse every saved session (DIR: a projects folder or a config root; ID: the"
        " sessions of that id, to pick from)",
        _index_command,
    ),
    "sessions": Command(
        "cctv sessions [DIR] [--json] [--live [--within 15m]]",
        "list the saved sessions, newest activity first (from the index)",
        _index_command,
    ),
    "search": Command(
        "cctv search QUERY [DIR] [--json] [--role ROLE] [--limit N]",
        "full-text search across every text of every saved session, sub-agents' included",
        _index_command,
    ),
    "usage": Command(
        "cctv usage [DIR] [--by day|week|project|model|session] [--since DATE] [--json]",
        "what the saved sessions cost, by day, week, project, model or session",
        _usage,
    ),
    "tail": Command(
        "cctv tail [PATH] [--follow-newest]",
        "follow the most recently written session (or PATH, waiting for it to appear)",
        _viewer_with_help("Follow the newest session under $CLAUDE_CONFIG_DIR/projects "
                          "(default ~/.claude/projects), or PATH, waiting until it exists. "
                          "When a newer session starts, L switches to it; with "
                          "--follow-newest cctv switches by itself.",
                          "cctv tail [PATH] [--follow-newest]"),
    ),
    "run": Command(
        "cctv run -- CMD [ARGS…]",
        "start CMD and view its stdout as frames (s: its stderr, x: stop it)",
        _viewer_with_help("Start CMD (e.g. claude -p … --output-format stream-json --verbose) and view "
                          "its standard output live. cctv exits with the command's status.",
                          "cctv run -- CMD [ARGS…]"),
    ),
    "demo": Command(
        "cctv demo",
        "open the bundled example session",
        _viewer_with_help("Open the bundled example session.", "cctv demo"),
    ),
    "replay": Command(
        "cctv replay PATH [--speed N|max] [--from LINE] [--emit [--raw]]",
        "step through a recorded session frame by frame (--emit: its lines at their pace)",
        _replay,
    ),
    "check": Command(
        "cctv check PATH… [--json]",
        "decode files: kinds, malformed lines, round trip (exit 1 if malformed)",
        _check,
    ),
    "summary": Command(
        "cctv summary PATH [--json]",
        "the folded session state in a few lines",
        _summary,
    ),
    "export": Command(
        "cctv export PATH --md [-o FILE]",
        "the session as Markdown (--hide KINDS, --only-errors, --only-tool NAME)",
        _export,
    ),
    "cache": Command(
        "cctv cache [--clear]",
        "the session checkpoints in the cache: where, how many, how big (--clear: remove them)",
        _cache,
    ),
}
"""Every subcommand, in the order ``cctv --help`` lists them."""


def usage() -> str:
    """The text of ``cctv --help``: every way in, one line each."""
    rows = [
        ("cctv", "browse every saved session under ~/.claude/projects"),
        ("cctv PATH", "open a transcript (stream-json or on-disk) and follow it as it grows"),
        ("cctv SESSION-ID", "the same for a saved session, by its id or the start of it"),
        ("cctv -", "read frames from standard input (also: claude -p … | cctv)"),
        *((c.usage, c.help) for c in COMMANDS.values()),
        ("cctv --version", "print the version"),
    ]
    width = max(len(u) for u, _ in rows) + 2
    lines = [f"cctv {version()} — a terminal viewer for Claude Code sessions", "", "usage:"]
    lines += [f"  {u.ljust(width)}{h}" for u, h in rows]
    lines += ["", "Each command takes -h for its own help. Keys inside the viewer: press ?."]
    return "\n".join(lines)


def _looks_like_a_path(word: str) -> bool:
    return word in ("-", ".", "..") or "/" in word or "." in word or Path(word).exists()


def _error(message: str) -> int:
    print(visible(f"cctv: {message}", oneline=True), file=sys.stderr)
    return 2


def _main(argv: list[str] | None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] in (["-h"], ["--help"], ["help"]):
        print(usage())
        return 0
    if args[:1] in (["-V"], ["--version"]):
        print(f"cctv {version()}")
        return 0
    word = args[0] if args else ""
    command = COMMANDS.get(word)
    if command is not None:
        return command.run(word, args[1:])
    if word and not word.startswith("-") and not _looks_like_a_path(word):
        path = _session_arg(word)
        if path == word:
            close = difflib.get_close_matches(word, list(COMMANDS), n=1, cutoff=0.5)
            hint = f" (did you mean 'cctv {close[0]}'?)" if close else " (cctv --help lists them)"
            return _error(f"'{word}' is not a cctv command, a file or a session id{hint}")
        args = [path, *args[1:]]
    return _viewer("", args)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``cctv`` console script."""
    try:
        return _main(argv)
    except BrokenPipeError:  # `cctv summary x | head`
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
