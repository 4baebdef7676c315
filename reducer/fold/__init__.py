"""The fold, one module per concern: see :mod:`reducer.fold.session`."""

from .kernel import SUBAGENT_TOOLS, block_text
from .messages import NON_PROMPT_MARKERS
from .session import HANDLERS, Session

__all__ = ["Session", "HANDLERS", "SUBAGENT_TOOLS", "NON_PROMPT_MARKERS", "block_text"]
