"""From command-line words to a running app: pick the source, start the UI."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from .sources import CommandSource, Event, FileTail, Source, StreamSource, open_stdin

if TYPE_CHECKING:
    from .app import CctvApp

__all__ = ["launch", "launch_browser", "exit_status", "build_source", "StdinPipeSource"]


class StdinPipeSource:
    """Frames piped into cctv; the pipe is opened inside the app's event loop."""

    kind = "pipe"

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.label = "stdin"
        self._inner: StreamSource | None = None

    async def events(self) -> AsyncIterator[Event]:
        self._inner = await open_stdin(self.fd, self.label)
        async for event in self._inner.events():
            yield event

    async def stop(self) -> None:
        if self._inner is not None:
            await self._inner.stop()


def _usage_error(message: str) -> int:
    print(f"cctv: {message}", file=sys.stderr)
    return 2


def build_source(args: list[str]) -> Source | str:
    """The source the words ask for, or an error message."""
    from .cli import demo_path

    if args and args[0] == "run":
        rest = args[1:]
        if rest and rest[0] == "--":
            rest = rest[1:]
        if not rest:
            return "usage: cctv run -- COMMAND [ARGS…]"
        return CommandSource(rest)
    parser = argparse.ArgumentParser(prog="cctv", add_help=False)
    parser.add_argument("target", nargs="?")
    parser.add_argument("path", nargs="?")
    parser.add_argument("--no-follow", action="store_true")
    parser.add_argument("--wait", action="store_true")
    try:
        ns, extra = parser.parse_known_args(args)
    except SystemExit:
        return "bad arguments (cctv --help)"
    if extra:
        return f"unexpected arguments: {' '.join(extra)} (cctv --help)"
    follow = not ns.no_follow
    target = ns.target
    wait = ns.wait
    if target == "tail" and ns.path is not None:  # `cctv tail PATH`: follow PATH, waiting for it
        target, wait = ns.path, True
    elif ns.path is not None:
        return f"unexpected argument: {ns.path} (cctv --help)"
    if target == "demo":
        return FileTail(demo_path(), follow=False)
    if target == "tail" or (target is None and sys.stdin.isatty()):
        from .discovery import latest_session, projects_dir

        latest = latest_session()
        if latest is None:
            if target == "tail":
                return f"no session found under {projects_dir()} (is CLAUDE_CONFIG_DIR right?)"
            return FileTail(demo_path(), follow=False)
        return FileTail(latest, follow=True)
    if target is None or target == "-":
        return "stdin"  # opened by the caller (needs the event loop)
    path = Path(target).expanduser()
    if path.is_dir():
        return f"{path}: is a directory, not a session file"
    if path.exists() and not os.access(path, os.R_OK):
        return f"{path}: cannot read (permission denied)"
    if not path.exists() and not wait:
        return f"{path}: no such file (cctv tail {target} waits for it to appear)"
    return FileTail(path, follow=follow)


def _intro(args: list[str], source: Source) -> str | None:
    """What to tell the user about the source cctv chose for them."""
    from .cli import demo_path

    target = args[0] if args else None
    if target not in (None, "tail") or not isinstance(source, FileTail):
        return None
    if source.path == demo_path().resolve() or source.path == demo_path():
        from .discovery import projects_dir

        return f"No sessions under {projects_dir()}: showing the bundled demo session."
    return f"Following the most recent session: {source.path}"


def launch_browser(directory: str | None = None, *, use_index: bool = True) -> int:
    """Run the session browser over a projects folder (or a config root holding one)."""
    from .app import BrowseOptions, CctvApp
    from .cli import demo_path
    from .index import resolve_root

    root = resolve_root(directory)
    if directory is not None and not root.is_dir():
        return _usage_error(f"{root}: no such folder")
    options = BrowseOptions(root, use_index=use_index, examples=[demo_path()])
    app = CctvApp(None, browse=options)
    return exit_status(app, app.run())


def launch(args: list[str]) -> int:
    """Run the viewer for the given words; return the exit status."""
    if not args and sys.stdin.isatty():
        return launch_browser()
    source = build_source(args)
    if isinstance(source, str) and source != "stdin":
        return _usage_error(source)
    from .app import CctvApp

    if source == "stdin":
        from .sources import take_stdin_pipe

        try:
            fd = take_stdin_pipe()
        except OSError:
            return _usage_error("reading frames from a pipe needs a terminal for the keyboard"
                                " (no /dev/tty here); save the frames to a file and open that")
        if fd is None:
            return _usage_error("standard input is a terminal: pipe frames into cctv"
                                " (claude -p … --output-format stream-json --verbose | cctv)")
        source = StdinPipeSource(fd)
    app = CctvApp(source, intro=_intro(args, source))
    code = app.run()
    return exit_status(app, code)


def exit_status(app: CctvApp, code: int | None) -> int:
    """cctv's exit status after the app ended: a crash is never 0.

    An unhandled exception prints one line and leaves the traceback in the
    cache directory (``viewer.crash``)."""
    if app.crash is not None:
        from .crash import crash_message, write_crash_log

        print(crash_message(app.crash, write_crash_log(app.crash)), file=sys.stderr)
        return 1
    if app.return_code not in (None, 0):
        return int(app.return_code)
    return int(code or 0)
