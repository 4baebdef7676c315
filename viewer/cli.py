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
  cctv replay PATH [--speed N] [--from LINE] [--emit]
                            step through a recorded session frame by frame (--emit:
                            write its lines to stdout at their recorded pace)
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
    if command == "replay":
        return _replay(args[1:])
    from .launch import launch

    return launch(args)


_REPLAY_HEAD_BYTES = 4 << 20
"""A replay of a bigger stream-json file opens on this much, the rest read behind."""


def _replay(args: list[str]) -> int:
    """``cctv replay``: the viewer paused at a frame, or ``--emit`` (headless)."""
    p = _parser("cctv replay", "Replay a recorded session at its recorded pace.")
    p.add_argument("path", metavar="PATH")
    p.add_argument("--speed", type=float, default=1.0, metavar="N",
                   help="speed factor, 0.25 to 64 (default 1)")
    p.add_argument("--from", dest="from_line", type=int, default=None, metavar="LINE",
                   help="start at this line of the file")
    p.add_argument("--emit", action="store_true",
                   help="write the lines to stdout at their recorded pace instead of viewing")
    p.add_argument("--keep-idle", action="store_true",
                   help="do not shorten idle gaps longer than a few seconds")
    ns = p.parse_args(args)
    if not 0.25 <= ns.speed <= 64:
        p.error("--speed must be between 0.25 and 64")
    if ns.from_line is not None and ns.from_line < 1:
        p.error("--from must be a line number (1 or more)")
    if ns.emit:
        from .replay_emit import run_emit

        return run_emit(ns.path, speed=ns.speed, from_line=ns.from_line or 1,
                        skip_idle=not ns.keep_idle, out=getattr(sys.stdout, "buffer", sys.stdout),
                        err=sys.stderr)
    from .loader import InputError
    from .replay_source import load_recording

    try:
        # opening at a line needs that line: only a replay from the start reads just the head
        recording = load_recording(ns.path,
                                   head_bytes=None if ns.from_line else _REPLAY_HEAD_BYTES)
    except InputError as exc:
        print(f"cctv replay: {exc}", file=sys.stderr)
        return 2
    if not recording.frames:
        print(f"cctv replay: {ns.path}: no lines to replay", file=sys.stderr)
        return 2
    from .replay_app import ReplayApp

    replay = recording.replay()
    start = replay.position_of_line(ns.from_line) if ns.from_line else 1
    app = ReplayApp(recording, replay=replay, start=start, speed=ns.speed,
                    skip_idle=not ns.keep_idle)
    return int(app.run() or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
