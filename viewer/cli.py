"""The ``cctv`` command line."""

from __future__ import annotations

import argparse
import sys
from importlib import resources
from pathlib import Path

__all__ = ["main", "demo_path"]

USAGE = """\
cctv — a terminal viewer for Claude Code sessions

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
    from .launch import launch

    return launch(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
