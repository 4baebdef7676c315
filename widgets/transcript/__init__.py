"""The transcript of one agent: :class:`~.view.TranscriptView` and its parts.

``TranscriptView`` is imported on first use (as ``textual.widgets`` does), so
the Textual-free parts (:mod:`.line_index`, :mod:`.fenwick`,
:mod:`.search_state`, :mod:`.follow_state`, :mod:`.expansion`,
:mod:`.navigation`) import without Textual or Rich.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .view import TranscriptView

__all__ = ["TranscriptView"]


def __getattr__(name: str) -> Any:
    if name == "TranscriptView":
        from .view import TranscriptView

        return TranscriptView
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
