"""The standard error of a command started with ``cctv run``."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import ModalScreen
from textual.widgets import Footer, Log

from widgets.safe_text import visible

__all__ = ["StderrScreen"]


class StderrScreen(ModalScreen[None]):
    """Every stderr line the command wrote so far, each control character shown
    visibly (``␛[31m``) rather than sent to the terminal: the child's stderr is
    as untrusted as its stdout.

    | Key(s) | Description |
    | :- | :- |
    | escape, q, s | Close |
    """

    BINDINGS = [
        Binding("escape", "dismiss", "Close"),
        Binding("q", "dismiss", "Close", show=False),
        Binding("s", "dismiss", "Close", show=False),
    ]

    DEFAULT_CSS = """
    StderrScreen { align: center middle; }
    StderrScreen > #box { width: 90%; height: 80%; border: round $error; background: $surface; }
    StderrScreen #title { dock: top; padding: 0 1; color: $text-muted; }
    """

    def __init__(self, lines: list[str]) -> None:
        super().__init__()
        self.lines = lines

    def compose(self) -> ComposeResult:
        log = Log(id="box", highlight=False)
        log.border_title = "stderr"
        yield log
        yield Footer()

    def on_mount(self) -> None:
        log = self.query_one(Log)
        if self.lines:
            log.write_lines(visible(line, oneline=True) for line in self.lines)
        else:
            log.write_line("(the command has written nothing to stderr)")
