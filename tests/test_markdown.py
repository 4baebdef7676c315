"""Replies drawn as Markdown lose no text and hide no link target.

Inline and block HTML is text in a reply (``Hello, <name>!``, ``Vec<String>``,
``<div>``); each link is drawn as ``label (target)``, clickable only when the
target is http(s). Checked on examples, on a real recording where Rich's own
Markdown dropped a word, and as a property over generated replies.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from cctv.reducer.fold import Session
from cctv.reducer.state import MAIN, TextItem
from cctv.widgets.cards import Palette, RenderContext, render_item

from conftest import FIXTURES, fold_file

WIDTH = 72


def rendered(text: str, width: int = WIDTH) -> list:
    item = TextItem(MAIN, 1, 0, text=text, message_id="msg_1")
    ctx = RenderContext(Session(), Console(width=200), Palette())
    return render_item(item, width, False, ctx)


def shown(text: str, width: int = WIDTH) -> str:
    """The rows of a reply as one string (rows joined by spaces)."""
    return " ".join(strip.text.rstrip() for strip in rendered(text, width))


def links(text: str) -> set[str]:
    return {seg.style.link for strip in rendered(text) for seg in strip
            if seg.style is not None and seg.style.link}


def squeeze(text: str) -> str:
    return "".join(text.split())


# --- HTML is text -----------------------------------------------------------------------------


def test_inline_html_is_shown_as_written() -> None:
    for reply in ('greet() returns "Hello, <name>!" for every name.',
                  "It returns Vec<String>, not a slice.",
                  "Note that a<b and c > d both hold.",
                  "Set the header to <your-api-key> first.",
                  "Wrap it in a <div> and a <span class='x'>span</span>.",
                  "A comment <!-- like this --> and <br/> stay."):
        assert squeeze(reply) in squeeze(shown(reply)), reply


def test_block_html_is_shown_as_written() -> None:
    reply = "Before.\n\n<div>\n  <b>inside</b>\n</div>\n\nAfter."
    text = squeeze(shown(reply))
    assert "<div>" in text and "<b>inside</b>" in text and "</div>" in text
    assert text.index("Before.") < text.index("<div>") < text.index("After.")


def test_markdown_still_works_around_html() -> None:
    reply = "# Title\n\nSome **bold** and `code <x>` and <tag>.\n\n- one <a>\n- two"
    text = shown(reply)
    assert "Title" in text and "bold" in text and "**" not in text
    assert "code <x>" in text and "<tag>" in text and "one <a>" in text


def test_a_real_reply_keeps_its_html_tag_name() -> None:
    # a real on-disk sub-agent transcript: Rich's Markdown read "<details>" as HTML and
    # drew "…identify the best place to add  tag filtering."
    path = (FIXTURES / "public" / "claude-code-log" / "real_projects"
            / "-Users-dain-workspace-coderabbit-review-helper" / "agent-b52b1c09.jsonl")
    session = fold_file(path).session
    replies = [item for agent in session.agents.values() for item in agent.items
               if isinstance(item, TextItem) and "<details>" in item.text]
    assert replies, "the recording has the reply"
    ctx = RenderContext(session, Console(width=200), Palette())
    rows = " ".join(s.text for s in render_item(replies[0], 100, False, ctx))
    assert "add <details> tag filtering" in " ".join(rows.split())


def test_the_interactive_capture_shows_hello_name() -> None:
    session = fold_file(FIXTURES / "captures" / "projects" / "-home-ada-src-demo"
                        / "694a18a9-5689-4e24-b856-71f45a125c49.jsonl").session
    replies = [item for item in session.main.items
               if isinstance(item, TextItem) and "Hello, <name>!" in item.text]
    assert replies
    ctx = RenderContext(session, Console(width=200), Palette())
    assert "Hello, <name>!" in " ".join(s.text for s in render_item(replies[0], 100, False, ctx))


# --- links ----------------------------------------------------------------------------------


def test_a_link_shows_its_target_and_only_the_target_is_clickable() -> None:
    text = shown("See [the docs](https://example.com/docs) now.")
    assert "See the docs (https://example.com/docs) now." in text
    assert links("See [the docs](https://example.com/docs) now.") == {"https://example.com/docs"}


def test_a_label_cannot_hide_a_non_http_target() -> None:
    for url in ("ssh://host/x", "mailto:a@b.c", "ftp://x/y", "vscode://file/etc/passwd"):
        reply = f"Click [here]({url})."
        assert f"here ({url})" in shown(reply), url
        assert links(reply) == set(), url
    # markdown-it refuses file: and javascript: links: they stay text, not clickable
    for reply in ("[x](file:///etc/passwd)", "[x](javascript:alert(1))"):
        assert links(reply) == set() and "x" in shown(reply)


def test_an_autolink_is_shown_once() -> None:
    assert "<https://a.example/x>" not in shown("Go to <https://a.example/x>.")
    assert shown("Go to <https://a.example/x>.").count("https://a.example/x") == 1
    assert links("Go to <https://a.example/x>.") == {"https://a.example/x"}
    assert shown("[https://a.example](https://a.example)").count("https://a.example") == 1


def test_an_image_shows_its_alt_text_and_source_unclickable() -> None:
    reply = "![a chart](https://img.example/c.png)"
    assert "image: a chart (https://img.example/c.png)" in shown(reply)
    assert links(reply) == set()


def test_rich_markup_in_a_reply_is_literal() -> None:
    reply = "Use [bold red]this[/] or [link=file:///etc/passwd]that[/link]."
    assert squeeze(reply) in squeeze(shown(reply))
    assert links(reply) == set()


def test_character_references_cannot_smuggle_controls() -> None:
    text = shown("a &#x202e; b &#13; c &#x1b; d")
    assert "\u202e" not in text and "\r" not in text and "\x1b" not in text
    assert "\\u202e" in text


# --- every character is shown ---------------------------------------------------------------

_WORD_CHARS = st.text(
    alphabet=st.sampled_from(list("abcdefghijklmnopqrstuvwxyzABCXYZ0123456789éß漢"
                                  "<>\"'/=!?.,;(){}$%^")),
    min_size=1, max_size=10)
_HTMLISH = st.sampled_from(["<name>", "Vec<String>", "a<b", "c > d", "<your-api-key>", "<div>",
                            "</div>", "<!--", "-->", "<?php", "<br/>", "<b>x</b>",
                            "<img src=x onerror=alert(1)>", "<a href='x'>y</a>", "<", ">"])
_WORD = st.one_of(_WORD_CHARS, _HTMLISH)
_LINE = st.builds(lambda first, words: " ".join([first, *words]),
                  st.sampled_from(["Note", "so", "It", "x", "and"]),
                  st.lists(_WORD, max_size=8))
_REPLY = st.lists(_LINE, min_size=1, max_size=6).map(lambda lines: "\n".join(lines))


def _in_order(needle: str, hay: str) -> bool:
    it = iter(hay)
    return all(ch in it for ch in needle)


@settings(max_examples=150, deadline=None)
@given(_REPLY, st.sampled_from(["\n", "\n\n"]), st.integers(min_value=20, max_value=100))
def test_every_character_of_a_reply_is_drawn(reply: str, sep: str, width: int) -> None:
    reply = reply.replace("\n", sep)
    drawn = squeeze(shown(reply, width))
    assert _in_order(squeeze(reply), drawn), (reply, drawn)


_STYLED = st.one_of(_WORD_CHARS.filter(lambda w: not set(w) & set("<>")).map(lambda w: f"**{w}**"),
                    _WORD_CHARS.filter(lambda w: not set(w) & set("<>")).map(lambda w: f"*{w}*"),
                    _WORD.map(lambda w: f"`{w}`"), _WORD)


@settings(max_examples=100, deadline=None)
@given(st.lists(_STYLED, min_size=1, max_size=12))
def test_every_character_is_drawn_markdown_syntax_aside(words: list[str]) -> None:
    reply = "Text " + " ".join(words)
    expected = squeeze(reply).replace("*", "").replace("`", "")
    assert _in_order(expected, squeeze(shown(reply))), reply
