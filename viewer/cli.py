"""The ``cctv`` command line."""

from __future__ import annotations

import argparse
import sys
from importlib import resources
from pathlib import Path

__all__ = ["main", "demo_path"]

USAGE = """\
cctv — a terminal viewer for Claude Code sessions

  cctv                      browse every saved session under ~/.claude/projects
  cctv browse [DIR]         browse the sessions of DIR (a projects folder or a config root)
  cctv sessions [DIR] [--json]       list the saved sessions (from the index)
  cctv search QUERY [DIR] [--json]   full-text search across every saved session
  cctv PATH                 open a transcript (stream-json or on-disk) and follow it
  cctv tail                 follow the most recently written session under ~/.claude/projects
  cctv -                    read frames from standard input (also: claude -p … | cctv)
  cctv run -- CMD [ARGS…]   start CMD and view its stdout as frames
  cctv demo                 open the bundled example session
  cctv check PATH… [--json] decode files and report kinds, malformed lines, round trip
  cctv summary PATH [--json] the folded session state in a few lines
"""


def demo_path() -> Path:
    """The bundled example session (package data)."""
    return Path(str(resources.files("viewer") / "demo" / "demo_session.jsonl"))


def _parser(prog: str, desc: str) -> argparse.ArgumentParser:
    return argparse.ArgumentParser(prog=prog, description=desc)


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


def _main(argv: list[str] | None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in ("-h", "--help", "help"):
        print(USAGE)
        return 0
    command = args[0] if args else ""
    if command == "check":
        p = _parser("cctv check", "Decode files; report kinds, malformed lines and the round trip.")
        p.add_argument("paths", nargs="+", metavar="PATH")
        p.add_argument("--json", action="store_true", help="machine-readable output")
        ns = p.parse_args(args[1:])
        from .headless import run_check

        return run_check(ns.paths, ns.json, sys.stdout, sys.stderr)
    if command == "summary":
        p = _parser("cctv summary", "Print the folded state of a session.")
        p.add_argument("path", metavar="PATH")
        p.add_argument("--json", action="store_true", help="machine-readable output")
        ns = p.parse_args(args[1:])
        from .headless import run_summary

        return run_summary(ns.path, ns.json, sys.stdout, sys.stderr)
    if command in ("sessions", "search", "browse"):
        return _index_command(command, args[1:])
    from .launch import launch

    return launch(args)


def _index_command(command: str, rest: list[str]) -> int:
    """``cctv sessions``, ``cctv search`` and ``cctv browse``: the session index."""
    descriptions = {
        "sessions": "List every saved session (newest activity first).",
        "search": "Full-text search across every saved session's prompts, replies and tool inputs.",
        "browse": "Browse every saved session.",
    }
    p = _parser(f"cctv {command}", descriptions[command])
    if command == "search":
        p.add_argument("query", metavar="QUERY")
    p.add_argument("dir", nargs="?", metavar="DIR",
                   help="a projects folder, or a config root holding projects/"
                        " (default: $CLAUDE_CONFIG_DIR/projects or ~/.claude/projects)")
    if command != "browse":
        p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--no-index", action="store_true",
                   help="read the files directly; use and write no index")
    ns = p.parse_args(rest)
    if command == "browse":
        from .launch import launch_browser

        return launch_browser(ns.dir, use_index=not ns.no_index)
    from .index.commands import run_search, run_sessions

    if command == "sessions":
        return run_sessions(ns.dir, ns.json, not ns.no_index, sys.stdout, sys.stderr)
    return run_search(ns.query, ns.dir, ns.json, not ns.no_index, sys.stdout, sys.stderr)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
