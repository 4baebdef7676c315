"""The standard error of a command started with ``cctv run``."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Log, Static

from cctv.reducer.format import plural
from cctv.widgets.key_footer import KeyFooter
from cctv.widgets.safe_text import visible

from ..stderr_buffer import StderrBuffer

__all__ = ["StderrScreen"]


def _size(chars: int) -> str:
    return f"{chars / 1e6:.1f} MB" if chars >= 100_000 else f"{chars / 1e3:.1f} kB"


def spill_note(buffer: StderrBuffer) -> str | None:
    """What the screen says when not every line is in memory."""
    if not buffer.spilled_lines:
        return None
    where = (f"in {buffer.spill_path}" if buffer.spill_path is not None
             else f"not kept ({buffer.spill_error})")
    return (f"showing the last {len(buffer):,} lines; the first "
            f"{buffer.spilled_lines:,} lines ({_size(buffer.spilled_chars)}) are {where}")


class StderrScreen(ModalScreen[None]):
    """The command's stderr lines kept in memory (the last ~1 MB), and where the rest
    is; each control character shown visibly (``␛[31m``) rather than sent to the
    terminal: the child's stderr is as untrusted as its stdout.

    | Key(s) | Description |
    | :- | :- |
    | escape, q, s | Close |
    """

    BINDINGS = [
        Binding("escape", "dismiss", "Close"),
        Binding("q", "dismiss", "Close", show=False),
        Binding("s", "dismiss", "Close", show=False),
    ]

    CSS_PATH = "stderr.tcss"

    def __init__(self, buffer: StderrBuffer) -> None:
        super().__init__()
        self.buffer = buffer

    def compose(self) -> ComposeResult:
        note = spill_note(self.buffer)
        if note is not None:
            yield Static(Content(note), id="spilled")
        log = Log(id="box", highlight=False)
        log.border_title = "stderr"
        total = self.buffer.total_lines
        log.border_subtitle = f"{plural(total, 'line', grouped=True)} · {_size(self.buffer.total_chars)}"
        yield log
        yield KeyFooter()

    def on_mount(self) -> None:
        self.buffer.flush()
        log = self.query_one(Log)
        if len(self.buffer):
            log.write_lines(visible(line, oneline=True) for line in self.buffer.lines)
        else:
            log.write_line("(the command has written nothing to stderr)")
