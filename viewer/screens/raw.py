"""The raw view: the exact JSON of one frame, pretty-printed, and a key to copy it."""

from __future__ import annotations

from collections.abc import Callable

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.highlight import highlight
from textual.screen import ModalScreen
from textual.widgets import Static

from cctv.reducer.format import human_bytes
from cctv.reducer.frame_links import FrameStepper
from cctv.reducer.frames import Entry
from cctv.reducer.pretty import RawView, raw_view
from cctv.widgets.key_footer import KeyFooter
from cctv.widgets.safe_text import content, visible

from ..messages import DiskNotes

__all__ = ["RawScreen"]

GIANT_FRAME = 200_000
RAW_HEAD = 16 * 1024
"""Bytes of a frame longer than :data:`GIANT_FRAME` drawn at once (laying out more
takes seconds); ``o`` shows the whole frame in the pager."""


def _size(raw: bytes) -> int:
    """The whole line's length (``raw`` may be only its start: a LineHead)."""
    return getattr(raw, "size", len(raw))


def _view(entry: Entry) -> RawView:
    reason = getattr(entry, "reason", None) if entry.kind == "malformed" else None
    size = _size(entry.raw)
    limit = RAW_HEAD if size > GIANT_FRAME else GIANT_FRAME
    return raw_view(entry.raw, reason=reason, limit=limit, size=size)


class RawScreen(ModalScreen[None]):
    """One line of the source as it was read: its place, its kind and its JSON.

    The JSON is re-indented with every value kept byte for byte (string escapes
    and numbers as written) and highlighted with the theme's colours. A line that
    is not JSON shows its bytes escaped, with the reason. Of a frame over 200 KB only the
    first 16 KB are shown, at once; ``o`` shows it all in the pager, copying takes the
    whole line.

    | Key(s) | Description |
    | :- | :- |
    | y, c | Copy the raw line to the clipboard |
    | o, O | The whole frame, pretty-printed, in $PAGER / $EDITOR |
    | escape, q, r | Close |
    | up/down, j/k, pgup/pgdn, g/G | Scroll |
    | ], [ | Next / previous paired frame (a call's result, task frames, heartbeats; a hook's response) |
    | n, p | Next / previous line of the file |
    """

    BINDINGS = [
        Binding("y", "copy", "Copy line", id="raw.copy",
                tooltip="Copy the exact line (UTF-8) to the clipboard"),
        Binding("c", "copy", "Copy line", show=False),
        Binding("o", "open_text(False)", "Pager", show=False, id="raw.pager",
                tooltip="The whole frame, pretty-printed, in $PAGER"),
        Binding("O", "open_text(True)", "Editor", show=False, id="raw.editor"),
        Binding("escape", "dismiss", "Close", id="raw.close"),
        Binding("q", "dismiss", "Close", show=False),
        Binding("r", "dismiss", "Close", show=False),
        Binding("j", "scroll('down')", "Down", show=False),
        Binding("k", "scroll('up')", "Up", show=False),
        Binding("g", "scroll('home')", "Top", show=False),
        Binding("G", "scroll('end')", "Bottom", show=False),
        Binding("right_square_bracket", "step_paired(1)", "Next paired", key_display="]",
                id="raw.next_paired", tooltip="The call's result, its task frames, heartbeats…"),
        Binding("left_square_bracket", "step_paired(-1)", "Prev paired", key_display="[",
                show=False, id="raw.previous_paired"),
        Binding("n", "step_line(1)", "Next line", show=False, id="raw.next_line"),
        Binding("p", "step_line(-1)", "Previous line", show=False, id="raw.previous_line"),
    ]

    CSS_PATH = "raw.tcss"

    def __init__(self, entry: Entry, source_label: str = "",
                 stepper: FrameStepper | None = None,
                 fill: Callable[[Entry], Entry] | None = None) -> None:
        super().__init__()
        self.entry = entry
        self.source_label = source_label
        self.stepper = stepper
        """Where ``[`` / ``]`` and ``n`` / ``p`` go (``None``: this frame only)."""
        self.fill = fill
        """Gives a stepped-to entry its bytes (read back from the file; it may
        raise :class:`viewer.rawstore.RawUnavailable`)."""
        self.view = _view(entry)

    @property
    def title_text(self) -> str:
        """``line N · offset O · kind_key · size``."""
        e = self.entry
        return (f"line {e.line_no} · offset {e.offset:,} · {e.kind_key} · "
                f"{human_bytes(_size(e.raw))}")

    def compose(self) -> ComposeResult:
        with Vertical(id="raw-box") as box:
            box.border_title = content(self.title_text)
            box.border_subtitle = content(self.source_label)
            notes = Static(self._notes(), id="raw-notes",
                           classes="-shown" if self.view.notes else "")
            yield notes
            with VerticalScroll(id="raw-scroll"):
                yield Static(self._body(), id="raw-body", markup=False)
        yield KeyFooter()

    def _notes(self) -> Content:
        more = ("o: the whole frame in $PAGER, O: in $EDITOR",) if self.view.truncated else ()
        return content("\n".join(f"⚠ {n}" for n in (*self.view.notes, *more)), oneline=False)

    def _body(self) -> Content:
        view = self.view
        if view.is_json:
            return highlight(visible(view.text), language="json")
        return Content.styled(visible(view.text), "$text")

    def on_mount(self) -> None:
        self.query_one("#raw-scroll").focus()
        self._show_place()

    # --- stepping to other frames -----------------------------------------------------

    def _show_place(self) -> None:
        box = self.query_one("#raw-box")
        box.border_title = content(self.title_text)
        place = ""
        if self.stepper is not None:
            at, count = self.stepper.position
            if count > 1:
                place = f"paired frame {at} of {count} ([ / ]) · "
        box.border_subtitle = content(place + self.source_label)

    def _show(self, entry: Entry) -> None:
        if self.fill is not None:
            from ..rawstore import RawUnavailable

            try:
                entry = self.fill(entry)
            except RawUnavailable as exc:
                self.notify(str(exc), title="Raw line", severity="warning")
                return
        self.entry = entry
        self.view = _view(entry)
        notes = self.query_one("#raw-notes", Static)
        notes.update(self._notes())
        notes.set_class(bool(self.view.notes), "-shown")
        self.query_one("#raw-body", Static).update(self._body())
        self.query_one("#raw-scroll", VerticalScroll).scroll_home(animate=False)
        self._show_place()

    def action_step_paired(self, direction: int) -> None:
        target = self.stepper.paired(direction) if self.stepper is not None else None
        if target is None:
            self.notify("no other paired frame that way", severity="warning", timeout=2)
            return
        self._show(target)

    def action_step_line(self, direction: int) -> None:
        target = self.stepper.line(direction) if self.stepper is not None else None
        if target is None:
            self.notify("no line that way", severity="warning", timeout=2)
            return
        self._show(target)

    def action_copy(self) -> None:
        from ..rawstore import whole_line

        try:
            raw = whole_line(self.entry.raw)
        except OSError as exc:
            self.notify(f"cannot read the line again: {exc}", title="Raw line", severity="error")
            return
        self.app.copy_to_clipboard(raw.decode("utf-8", "replace"))
        self.notify(f"copied {len(raw)} bytes (line {self.entry.line_no})", title="Raw line")

    def action_open_text(self, editor: bool) -> None:
        from cctv.reducer.pretty import escape_bytes, pretty_json
        from cctv.viewer.external import editor_command, open_text, pager_command, write_cache_file
        from cctv.viewer.storage import DiskError

        from ..rawstore import whole_line

        e = self.entry
        try:
            raw = whole_line(e.raw)
        except OSError as exc:
            self.notify(f"cannot read the line again: {exc}", title="Raw line", severity="error")
            return
        try:
            text = pretty_json(raw)
        except Exception:  # not JSON: its bytes, escaped
            text = escape_bytes(raw, keep_newlines=True)
        title = "Editor" if editor else "Pager"
        try:
            path = write_cache_file(text, f"line{e.line_no}-{e.kind_key}.json")
        except DiskError as exc:
            self.notify(str(exc.note), title=title, severity="error")
            return
        self.post_message(DiskNotes())  # a temporary folder used instead: said once
        error = open_text(self.app, path, editor_command() if editor else pager_command())
        if error:
            self.notify(error, title=title, severity="error")

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
