"""A one-line question (e.g. "jump to time"): an input box over the screen."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from cctv.widgets.safe_text import content

__all__ = ["AskScreen"]


class AskScreen(ModalScreen[str | None]):
    """Ask for one line of text; dismissed with it (enter) or ``None`` (escape).

    | Key(s) | Description |
    | :- | :- |
    | enter | Answer |
    | escape | Cancel |
    """

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="ask.cancel")]

    CSS_PATH = "ask.tcss"

    def __init__(self, title: str, hint: str, placeholder: str = "", value: str = "") -> None:
        super().__init__()
        self.title_text = title
        self.hint = hint
        self.placeholder = placeholder
        self.value = value

    def compose(self) -> ComposeResult:
        with Vertical(id="ask-box") as box:
            box.border_title = content(self.title_text)
            yield Static(content(self.hint, oneline=False), id="ask-hint", markup=False)
            yield Input(value=self.value, placeholder=self.placeholder, id="ask-input")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    @on(Input.Submitted)
    def _answer(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)
