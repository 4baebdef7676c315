"""A task's output file (a background shell's log, a monitor's capture), read-only."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from cctv.reducer.format import human_bytes
from cctv.reducer.pretty import escape_bytes
from cctv.widgets.key_footer import KeyFooter
from cctv.widgets.safe_text import content, text

__all__ = ["OutputScreen", "read_tail", "TAIL_BYTES"]

TAIL_BYTES = 256 * 1024
"""How much of the end of an output file is shown."""


def read_tail(path: Path, limit: int = TAIL_BYTES) -> tuple[str, str]:
    """The last ``limit`` bytes of ``path`` as safe text (control bytes escaped)
    and a one-line note (size, cut, or why it cannot be read)."""
    try:
        size = path.stat().st_size
        with open(path, "rb") as fh:
            if size > limit:
                fh.seek(size - limit)
            data = fh.read(limit)
    except OSError as exc:
        return "", f"cannot read {path}: {exc.strerror or exc}"
    if size > limit:
        cut = data.find(b"\n")
        data = data[cut + 1:] if 0 <= cut < 4096 else data
        note = f"{human_bytes(size)} · the last {human_bytes(len(data))}"
    else:
        note = human_bytes(size) if data else "empty"
    return escape_bytes(data, keep_newlines=True), note  # bytes escaped; shown via safe_text


class OutputScreen(ModalScreen[None]):
    """The end of one task's output file, as it is on disk when opened.

    | Key(s) | Description |
    | :- | :- |
    | escape, q | Close |
    | R | Read the file again |
    | j/k, g/G | Scroll |
    """

    BINDINGS = [
        Binding("escape", "dismiss", "Close", id="output.close"),
        Binding("q", "dismiss", "Close", show=False),
        Binding("R", "reload", "Reload", id="output.reload"),
        Binding("j", "scroll('down')", "Down", show=False),
        Binding("k", "scroll('up')", "Up", show=False),
        Binding("g", "scroll('home')", "Top", show=False),
        Binding("G", "scroll('end')", "Bottom", show=False),
    ]

    CSS_PATH = "output.tcss"

    def __init__(self, path: str, title: str) -> None:
        super().__init__()
        self.path = Path(path)
        self.title_text = title
        self.text, self.note = read_tail(self.path)

    def compose(self) -> ComposeResult:
        with Vertical(id="output-box") as box:
            box.border_title = content(self.title_text)
            box.border_subtitle = self._subtitle()
            with VerticalScroll(id="output-scroll"):
                yield Static(self._body(), id="output-body", markup=False)
        yield KeyFooter()

    def _body(self) -> Text:
        return text(self.text or f"({self.note})")

    def _subtitle(self) -> Content:
        return content(f"{escape_bytes(str(self.path).encode())} · {self.note}")

    def on_mount(self) -> None:
        scroll = self.query_one("#output-scroll", VerticalScroll)
        scroll.focus()
        self.call_after_refresh(scroll.scroll_end, animate=False)

    def action_reload(self) -> None:
        self.text, self.note = read_tail(self.path)
        self.query_one("#output-body", Static).update(self._body())
        self.query_one("#output-box").border_subtitle = self._subtitle()
        self.query_one("#output-scroll", VerticalScroll).scroll_end(animate=False)

    def action_scroll(self, where: str) -> None:
        scroll = self.query_one("#output-scroll", VerticalScroll)
        if where == "down":
            scroll.scroll_down(animate=False)
        elif where == "up":
            scroll.scroll_up(animate=False)
        elif where == "home":
            scroll.scroll_home(animate=False)
        else:
            scroll.scroll_end(animate=False)
