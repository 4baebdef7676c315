"""Markdown for replies: every character of the text is shown, every link says where it goes.

Rich's :class:`~rich.markdown.Markdown` parses inline and block HTML and then
drops it, so ``returns "Hello, <name>!"`` would read ``returns "Hello, !"``
and ``Vec<String>`` would read ``Vec``. A model's reply is not a web page:
here HTML is plain text. And a link's label can say anything, so each link is
drawn as ``label (target)``; only an http(s) target is made clickable, and only
the target itself (never ``file:``, ``javascript:`` or any other scheme).
Images are drawn the same way, as ``image: alt (source)``.

Every text a token carries goes through :func:`reducer.safe.visible` after
parsing too, because character references (``&#x202e;``, ``&#13;``) are decoded
by the parser.
"""

from __future__ import annotations

from markdown_it import MarkdownIt
from markdown_it.token import Token
from rich.markdown import Markdown

from .safe_text import safe_link, visible

__all__ = ["ReplyMarkdown", "reply_markdown"]

_PARSER = MarkdownIt("commonmark", {"html": False}).enable("strikethrough").enable("table")

_TEXT_TOKENS = ("text", "code_inline", "fence", "code_block")


class ReplyMarkdown(Markdown):
    """:class:`~rich.markdown.Markdown` with HTML as text and links that show their target."""

    def __init__(self, markup: str, code_theme: str = "monokai", **kwargs) -> None:
        super().__init__("", code_theme=code_theme, **kwargs)
        self.markup = markup
        self.parsed = _safe_tokens(_PARSER.parse(markup))


def reply_markdown(source: str, code_theme: str) -> ReplyMarkdown:
    """A reply's text as a renderable, code highlighted with ``code_theme``."""
    return ReplyMarkdown(visible(source), code_theme=code_theme, inline_code_lexer="text",
                         inline_code_theme=code_theme)


def _text(content: str) -> Token:
    return Token("text", "", 0, content=content)


def _safe_tokens(tokens: list[Token]) -> list[Token]:
    for token in tokens:
        if token.type in _TEXT_TOKENS:
            token.content = visible(token.content)
        if token.type == "fence":
            token.info = visible(token.info, oneline=True)
        if token.children:
            token.children = _inline(token.children)
    return tokens


def _target(url: str) -> list[Token]:
    """The link target as drawn: clickable only for http(s)."""
    shown = _text(visible(url, oneline=True))
    if not safe_link(url):
        return [shown]
    return [Token("link_open", "a", 1, attrs={"href": url}, markup="target"), shown,
            Token("link_close", "a", -1)]


def _inline(children: list[Token]) -> list[Token]:
    """Inline tokens with each link as ``label (target)`` and each image as
    ``image: alt (source)``; text made visible."""
    out: list[Token] = []
    label: list[Token] | None = None
    href = ""
    autolink = False
    for token in children:
        kind = token.type
        if kind == "link_open":
            label, href = [], str(token.attrs.get("href") or "")
            autolink = token.markup in ("autolink", "linkify")
            continue
        if kind == "link_close" and label is not None:
            plain = "".join(t.content for t in label if t.type in ("text", "code_inline"))
            if autolink or plain == href:
                out += _target(href) if safe_link(href) else label
            else:
                out += [*label, _text(" ("), *_target(href), _text(")")]
            label = None
            continue
        if kind == "image":
            alt = "".join(t.content for t in token.children or () if t.type == "text")
            src = str(token.attrs.get("src") or "")
            token = _text(visible(f"image: {alt} (" if alt else "image (") + visible(src) + ")")
        elif kind in _TEXT_TOKENS:
            token.content = visible(token.content)
        (label if label is not None else out).append(token)
    if label is not None:  # an unclosed link (cannot happen with markdown-it): keep the text
        out += label
    return out
