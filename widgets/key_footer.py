"""The footer of every cctv screen: :class:`KeyFooter`, Textual's Footer with
whole key labels only.

Textual's Footer lays its keys out in one row and lets the ones past its width
run on under the command-palette key docked at the right: a label was cut
mid-word there (``- Sl▏^p palette``). This footer leaves out, whole, the keys
that do not fit, from the right, giving room first to the keys it keeps
(help and quit: ``?`` lists every key the footer leaves out).
"""

from __future__ import annotations

from rich.cells import cell_len
from textual import events
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

__all__ = ["KeyFooter"]

KEPT_ACTIONS = ("help", "quit")
"""The actions whose keys stay in the footer whatever its width (while they fit)."""


def _advance(key: FooterKey) -> int:
    """The cells ``key`` takes in the footer's row: its label, gutter and margins."""
    styles = key.styles
    return cell_len(key.render().plain) + styles.gutter.width + styles.margin.width


class KeyFooter(Footer):
    """A footer whose keys fit its width whole: the ones that would be cut are hidden."""

    async def recompose(self) -> None:
        """The keys of the bindings now active, fitted to the width."""
        await super().recompose()
        self.fit_keys()

    def on_resize(self, event: events.Resize) -> None:
        self.fit_keys()

    def fit_keys(self) -> None:
        """Show the kept keys, then the others left to right, while their labels
        fit whole beside the palette key; hide the rest."""
        if not self.size.width:
            return
        keys = list(self.query_children(FooterKey))
        room = self.size.width - sum(_advance(k) for k in keys if k.has_class("-command-palette"))
        keys = [k for k in keys if not k.has_class("-command-palette")]
        shown: set[FooterKey] = set()
        for key in [k for k in keys if k.action in KEPT_ACTIONS] + \
                [k for k in keys if k.action not in KEPT_ACTIONS]:
            advance = _advance(key)
            if advance > room:
                break
            shown.add(key)
            room -= advance
        for key in keys:
            key.display = key in shown
