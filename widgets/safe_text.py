"""Where state becomes drawable text: the one sanitising step of the UI.

Every string a widget, screen, notification or title shows goes through here
on its way to the screen. It returns Rich :class:`~rich.text.Text` or Textual
:class:`~textual.content.Content` built from *plain* text, never a markup
string, so ``[bold]`` or ``[link=file:///…]`` in a transcript stays literal,
and every control character is shown by :func:`reducer.safe.visible`
(``␛]0;…``) instead of acting on the terminal.

* :func:`text` / :func:`content` — a string from state as Text / Content.
* :func:`safe_text` — an already built Text (spans kept) made safe; cheap when
  it is safe already (one regex search).
* :func:`from_ansi` — a command's coloured output: SGR colours kept, every
  other escape shown, hyperlinks kept only to http(s) URLs.
* :func:`safe_link` — whether a URL may be made clickable.
"""

from __future__ import annotations

from rich.style import Style
from rich.text import Span, Text
from textual.content import Content

from cctv.reducer.safe import UNSAFE, is_safe, visible

__all__ = ["text", "content", "safe_text", "from_ansi", "safe_link", "visible", "is_safe"]


def text(value: object, style: Style | str = "", *, oneline: bool = False) -> Text:
    """``value`` (a string from state, or anything ``str()`` takes) as Rich Text:
    plain, never markup, with controls shown."""
    return Text(visible(value if isinstance(value, str) else _str(value), oneline=oneline),
                style=style)


def content(value: object, style: str = "", *, oneline: bool = True) -> Content:
    """``value`` as Textual Content: plain, never markup, with controls shown.
    Single-line by default (status bar, panel rows, titles, notifications)."""
    plain = visible(value if isinstance(value, str) else _str(value), oneline=oneline)
    return Content.styled(plain, style) if style else Content(plain)


def _str(value: object) -> str:
    return "" if value is None else str(value)


def safe_text(value: Text) -> Text:
    """``value`` with each unsafe character replaced by its visible stand-in,
    styles kept (a stand-in takes the style of the text around it). Returns
    ``value`` itself when it is safe already."""
    plain = value.plain
    if is_safe(plain) and "\t" not in plain:
        return value
    if "\t" in plain:
        value = value.copy()
        value.expand_tabs(4)
        plain = value.plain
        if is_safe(plain):
            return value
    out = value.blank_copy()
    done = 0
    for match in UNSAFE.finditer(plain):  # one character, or a run of tag characters
        start, end = match.span()
        if start > done:
            out.append_text(value[done:start])
        piece = value[start:end]
        out.append_text(Text(visible(piece.plain), style=_style_at(piece)))
        done = end
    if done < len(plain):
        out.append_text(value[done:])
    return out


def _style_at(piece: Text) -> Style | str:
    spans = [span.style for span in piece.spans]
    if not spans:
        return ""
    style = Style()
    for s in spans:
        if isinstance(s, Style):
            style += s
        else:
            try:
                style += Style.parse(s)
            except Exception:  # a theme name Rich cannot parse alone: no style then
                continue
    return style


def safe_link(url: str | None) -> bool:
    """True for an ``http://`` or ``https://`` URL with nothing unsafe in it:
    the only links cctv makes clickable."""
    if not url or not is_safe(url) or any(c in url for c in " \n\t"):
        return False
    return url.lower().startswith(("http://", "https://"))


def from_ansi(value: str, style: Style | str = "") -> Text:
    """A command's output that carries terminal colours: SGR styles kept,
    carriage returns dropped, links kept only when :func:`safe_link`, and any
    other escape shown visibly rather than sent."""
    decoded = Text.from_ansi(value.replace("\r\n", "\n"), style=style)
    spans: list[Span] = []
    for span in decoded.spans:
        s = span.style
        if isinstance(s, Style) and s.link and not safe_link(s.link):
            s = s.update_link(None)
        spans.append(Span(span.start, span.end, s))
    decoded.spans = spans
    return safe_text(decoded)
