"""The fold: decoded frames in, session state out.

:class:`Session` takes entries one at a time (:meth:`Session.apply`) and keeps
what a viewer needs: turns, tool calls paired with their results, sub-agents,
tasks, hooks, compactions, cost and usage. Each ``apply`` returns the
:class:`~reducer.state.Change` records for what it touched. The fold is
deterministic and does no I/O; the rules follow WIRE.md §4 and FOLD-NOTES.md.

The code is a kernel and one module per concern: see :mod:`reducer.fold.session`.
"""

from .kernel import SUBAGENT_TOOLS, block_text
from .messages import NON_PROMPT_MARKERS
from .session import HANDLERS, Session

__all__ = ["Session", "HANDLERS", "SUBAGENT_TOOLS", "NON_PROMPT_MARKERS", "block_text"]
