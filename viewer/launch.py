"""From command-line words to a running app: pick the source, start the UI.

The sources (and the decoder they bring) are imported where a source is made:
the session browser (``cctv``, ``cctv browse``) starts without them.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import os
import shutil
import stat
import sys
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING

from .paths import demo_path

if TYPE_CHECKING:
    from .newest import NewestSession
    from .sources import Event, FileTail, Source, StreamSource
    from .viewer_app import ViewerApp

__all__ = ["NO_TERMINAL", "launch", "launch_browser", "exit_status", "build_source", "FifoSource",
           "StdinPipeSource", "no_terminal"]


class StdinPipeSource:
    """Frames piped into cctv; the pipe is opened inside the app's event loop."""

    kind = "pipe"

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.label = "stdin"
        self._inner: StreamSource | None = None

    async def events(self) -> AsyncIterator[Event]:
        from .sources import open_stdin

        self._inner = await open_stdin(self.fd, self.label)
        async for event in self._inner.events():
            yield event

    async def stop(self) -> None:
        if self._inner is not None:
            await self._inner.stop()


class FifoSource(StdinPipeSource):
    """A FIFO named on the command line, read as the pipe it is (``cctv PATH``
    as ``cctv - < PATH``). Opening it waits for a writer: that wait is in a
    thread of its own, so the keys work meanwhile and ``q`` quits at once."""

    def __init__(self, path: Path) -> None:
        super().__init__(-1)
        self.path = path
        self.label = str(path)

    async def events(self) -> AsyncIterator[Event]:
        from .sources import CannotRead, EndOfInput

        try:
            self.fd = await _open_when_written(self.path)
        except OSError as exc:
            yield CannotRead(str(self.path), exc.strerror or str(exc))
            yield EndOfInput()
            return
        async for event in super().events():
            yield event


async def _open_when_written(path: Path) -> int:
    """``path`` (a FIFO) opened for reading, once a writer opens it. The open
    blocks, in a daemon thread: nothing waits for it when the app quits."""
    loop = asyncio.get_running_loop()
    opened: asyncio.Future[int] = loop.create_future()

    def settle(fd: int | None, error: OSError | None) -> None:
        if opened.done():  # given up on (the app quit): nobody reads it
            if fd is not None:
                os.close(fd)
        elif error is not None:
            opened.set_exception(error)
        else:
            opened.set_result(fd)

    def run() -> None:
        try:
            fd, error = os.open(path, os.O_RDONLY | os.O_CLOEXEC), None
        except OSError as exc:
            fd, error = None, exc
        try:
            loop.call_soon_threadsafe(settle, fd, error)
        except RuntimeError:  # the loop is closed
            if fd is not None:
                os.close(fd)

    threading.Thread(target=run, name="cctv-fifo-open", daemon=True).start()
    return await opened


def _usage_error(message: str) -> int:
    print(f"cctv: {message}", file=sys.stderr)
    return 2


NO_TERMINAL = "cctv needs a terminal; try cctv summary / check / export"


def no_terminal(*, stdin_is_input: bool = False) -> bool:
    """True (after saying :data:`NO_TERMINAL` on stderr) when there is no terminal
    for the UI. Textual draws on standard error and reads keys from standard
    input; a standard input that is not a terminal (``</dev/null``) is traded
    for the controlling terminal, ``/dev/tty``, as ``less`` does — unless it
    is the frames to read (``stdin_is_input``: the caller moves it). From cron
    there is neither: Textual's key reader would spin on the end of input."""
    missing = not _isatty(2)
    if not missing and not stdin_is_input and not _isatty(0):
        from .sources import take_stdin_pipe

        try:
            old_stdin = take_stdin_pipe()
        except OSError:  # no controlling terminal
            missing = True
        else:
            if old_stdin is not None:
                os.close(old_stdin)  # what was there is not read
    if missing:
        print(NO_TERMINAL, file=sys.stderr)
    return missing


def _isatty(fd: int) -> bool:
    try:
        return os.isatty(fd)
    except OSError:
        return False


def _tail_args(args: list[str]) -> argparse.Namespace | str:
    """``cctv tail [PATH] [--follow-newest]``."""
    parser = argparse.ArgumentParser(prog="cctv tail", add_help=False)
    parser.add_argument("path", nargs="?")
    parser.add_argument("--follow-newest", action="store_true")
    try:
        ns, extra = parser.parse_known_args(args)
    except SystemExit:
        return "usage: cctv tail [PATH] [--follow-newest]"
    if extra:
        return f"unexpected arguments: {' '.join(extra)} (usage: cctv tail [PATH] [--follow-newest])"
    if ns.path is not None and ns.follow_newest:
        return "cctv tail PATH follows that file; --follow-newest is for cctv tail without a path"
    return ns


def newest_watch(args: list[str], source: Source) -> NewestSession | None:
    """For ``cctv tail`` (no path): what notices a session newer than the one followed."""
    from .newest import NewestSession
    from .sources import FileTail

    if not args or args[0] != "tail" or not isinstance(source, FileTail):
        return None
    ns = _tail_args(args[1:])
    if isinstance(ns, str) or ns.path is not None:
        return None
    from .discovery import projects_dir

    return NewestSession(projects_dir(), source.path)


def _command_error(argv: list[str]) -> tuple[str, int] | None:
    """Why ``argv`` cannot be started, with the shell's exit status (127, 126)."""
    name = argv[0]
    if os.sep in name:
        if not os.path.exists(name):
            return f"cannot start {name}: no such file", 127
        if os.path.isdir(name) or not os.access(name, os.X_OK):
            return f"cannot start {name}: not an executable file", 126
        return None
    if shutil.which(name) is None:
        return f"cannot start {name}: command not found", 127
    return None


def build_source(args: list[str]) -> Source | str:
    """The source the words ask for, or an error message."""
    from .sources import CommandSource, FileTail

    if args and args[0] == "run":
        rest = args[1:]
        if rest and rest[0] == "--":
            rest = rest[1:]
        if not rest:
            return "usage: cctv run -- COMMAND [ARGS…]"
        return CommandSource(rest)
    if args and args[0] == "tail":
        tail = _tail_args(args[1:])
        if isinstance(tail, str):
            return tail
        if tail.path is not None:  # follow PATH, waiting for it if it does not exist yet
            return _file_source(tail.path, follow=True, wait=True)
        args = ["tail"]
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
    if ns.path is not None:
        return f"unexpected argument: {ns.path} (cctv --help)"
    if ns.wait and (target in (None, "-", "demo", "tail") or not follow):
        return "usage: cctv --wait PATH (waits for PATH to appear, then follows it)"
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
    return _file_source(target, follow=follow, wait=ns.wait)


def _file_source(target: str, *, follow: bool, wait: bool) -> FileTail | FifoSource | str:
    """A session file named on the command line (a FIFO: read as a pipe), or
    why it cannot be read; ``wait``: a file that does not exist yet is waited for."""
    from .index.scan import file_kind
    from .sources import FileTail

    path = Path(target).expanduser()
    try:
        mode = path.stat().st_mode
    except OSError:
        mode = None
    if mode is not None and stat.S_ISDIR(mode):
        return f"{path}: is a directory, not a session file"
    if mode is not None and stat.S_ISFIFO(mode):
        return FifoSource(path)
    if mode is not None and not stat.S_ISREG(mode):
        return f"{path}: is a {file_kind(mode)}, not a session file"
    if mode is not None and not os.access(path, os.R_OK):
        return f"{path}: cannot read (permission denied)"
    if mode is None and not wait:
        return f"{path}: no such file (cctv tail {target} waits for it to appear)"
    return FileTail(path, follow=follow)


def _intro(args: list[str], source: Source) -> str | None:
    """What to tell the user about the source cctv chose for them."""
    from .sources import FileTail

    target = args[0] if args else None
    if target not in (None, "tail") or not isinstance(source, FileTail):
        return None
    if target == "tail" and any(not word.startswith("-") for word in args[1:]):
        return None  # cctv tail PATH: the user named it
    if source.path == demo_path().resolve() or source.path == demo_path():
        from .discovery import projects_dir

        return f"No sessions under {projects_dir()}: showing the bundled demo session."
    if target == "tail" and "--follow-newest" in args[1:]:
        return f"Following the most recent session: {source.path} (and any newer one that starts)"
    return f"Following the most recent session: {source.path}"


def launch_browser(directory: str | None = None, *, use_index: bool = True, search: str = "") -> int:
    """Run the session browser over a projects folder (or a config root holding
    one), ``search`` in its search box."""
    from .app import BrowseOptions, CctvApp
    from .index import resolve_root

    root = resolve_root(directory)
    if directory is not None and not root.is_dir():
        return _usage_error(f"{root}: no such folder")
    if no_terminal():
        return 2
    options = BrowseOptions(root, use_index=use_index, examples=[demo_path()], search=search)
    # what is imported lives as long as the process: the collections the start-up
    # sets off (it allocates the list's rows and cells) need not walk it all
    gc.freeze()
    app = CctvApp(None, browse=options)
    status = exit_status(app, app.run())
    _exit_now(status)
    return status  # not reached


def launch(args: list[str]) -> int:
    """Run the viewer for the given words; return the exit status."""
    if not args and sys.stdin.isatty():
        return launch_browser()
    from .sources import CommandSource

    source = build_source(args)
    if isinstance(source, str) and source != "stdin":
        return _usage_error(source)
    if isinstance(source, CommandSource) and (problem := _command_error(source.argv)):
        message, status = problem
        print(f"cctv: {message}", file=sys.stderr)
        return status
    if no_terminal(stdin_is_input=source == "stdin"):
        return 2
    from .sources import FileTail

    if isinstance(source, FileTail):
        from .fold_cache import load_early

        load_early(source.path)  # (while the app is imported and built)
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
    follow_newest = bool(args and args[0] == "tail" and "--follow-newest" in args[1:])
    app = CctvApp(source, intro=_intro(args, source), newest=newest_watch(args, source),
                  follow_newest=follow_newest)
    status = exit_status(app, app.run())
    _exit_now(status)
    return status  # not reached


def exit_status(app: ViewerApp, code: int | None) -> int:
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


def _exit_now(status: int) -> None:
    """End the process without freeing the session object by object.

    With a big session loaded, the interpreter's own teardown (every entry,
    item and string released one at a time) took most of a second after the
    screen had already been restored. The exit handlers still run and the
    standard streams are flushed; then the process ends."""
    import atexit

    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(status)
