"""The raw view: the exact JSON of one frame, pretty-printed, and a key to copy it."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.highlight import highlight
from textual.screen import ModalScreen
from textual.widgets import Footer, Static

from reducer.frames import Entry
from reducer.pretty import human_bytes, raw_view
from widgets.safe_text import content, visible

__all__ = ["RawScreen"]


class RawScreen(ModalScreen[None]):
    """One line of the source as it was read: its place, its kind and its JSON.

    The JSON is re-indented with every value kept byte for byte (string escapes
    and numbers as written) and highlighted with the theme's colours. A line that
    is not JSON shows its bytes escaped, with the reason. Past 200 KB only the
    start is shown; copying always takes the whole line.

    | Key(s) | Description |
    | :- | :- |
    | y, c | Copy the raw line to the clipboard |
    | escape, q, r | Close |
    | up/down, j/k, pgup/pgdn, g/G | Scroll |
    """

    BINDINGS = [
        Binding("y", "copy", "Copy line", id="raw.copy",
                tooltip="Copy the exact line (UTF-8) to the clipboard"),
        Binding("c", "copy", "Copy line", show=False),
        Binding("escape", "dismiss", "Close", id="raw.close"),
        Binding("q", "dismiss", "Close", show=False),
        Binding("r", "dismiss", "Close", show=False),
        Binding("j", "scroll('down')", "Down", show=False),
        Binding("k", "scroll('up')", "Up", show=False),
        Binding("g", "scroll('home')", "Top", show=False),
        Binding("G", "scroll('end')", "Bottom", show=False),
    ]

    DEFAULT_CSS = """
    RawScreen {
        align: center middle;
        & > #raw-box {
            width: 94%;
            height: 90%;
            border: round $border;
            border-title-color: $text-primary;
            border-title-style: bold;
            border-subtitle-color: $text-muted;
            background: $surface;
        }
        & #raw-notes {
            height: auto;
            padding: 0 1;
            color: $text-warning;
            background: $warning-muted;
            display: none;
            &.-shown { display: block; }
        }
        & #raw-scroll {
            height: 1fr;
            padding: 0 1;
            background: $surface;
            &:focus { background-tint: $foreground 0%; }
        }
    }
    """

    def __init__(self, entry: Entry, source_label: str = "") -> None:
        super().__init__()
        self.entry = entry
        self.source_label = source_label
        reason = getattr(entry, "reason", None) if entry.kind == "malformed" else None
        self.view = raw_view(entry.raw, reason=reason)

    @property
    def title_text(self) -> str:
        """``line N · offset O · kind_key · size``."""
        e = self.entry
        return (f"line {e.line_no} · offset {e.offset:,} · {e.kind_key} · "
                f"{human_bytes(len(e.raw))}")

    def compose(self) -> ComposeResult:
        with Vertical(id="raw-box") as box:
            box.border_title = content(self.title_text)
            box.border_subtitle = content(self.source_label)
            notes = Static(content("\n".join(f"⚠ {n}" for n in self.view.notes), oneline=False),
                           id="raw-notes", classes="-shown" if self.view.notes else "")
            yield notes
            with VerticalScroll(id="raw-scroll"):
                yield Static(self._body(), id="raw-body", markup=False)
        yield Footer()

    def _body(self) -> Content:
        view = self.view
        if view.is_json:
            return highlight(visible(view.text), language="json")
        return Content.styled(visible(view.text), "$text")

    def on_mount(self) -> None:
        self.query_one("#raw-scroll").focus()

    def action_copy(self) -> None:
        raw = self.entry.raw
        self.app.copy_to_clipboard(raw.decode("utf-8", "replace"))
        self.notify(f"copied {len(raw)} bytes (line {self.entry.line_no})", title="Raw line")

    def action_scroll(self, where: str) -> None:
        scroll = self.query_one("#raw-scroll", VerticalScroll)
        if where == "down":
            scroll.scroll_down(animate=False)
        elif where == "up":
            scroll.scroll_up(animate=False)
        elif where == "home":
            scroll.scroll_home(animate=False)
        else:
            scroll.scroll_end(animate=False)
