"""The fold: decoded frames in, session state out.

:class:`Session` takes entries one at a time (:meth:`Session.apply`) and keeps
what a viewer needs: turns, tool calls paired with their results, sub-agents,
tasks, hooks, compactions, cost and usage. Each ``apply`` returns the
:data:`~reducer.state.Change` records for what it touched. The fold is
deterministic and does no I/O; the rules follow WIRE.md §4 and FOLD-NOTES.md.

A session is made of one part per concern, one module each (calls, tasks,
hooks, turns, usage, the rewind chain…; :mod:`reducer.fold.parts` says how
they fit), and routes each entry to the part that folds it
(:mod:`reducer.fold.session`).
"""

from .calls import SUBAGENT_TOOLS
from .messages import NON_PROMPT_MARKERS
from .parts import Parts
from .session import HANDLERS, Session
from .values import block_text

__all__ = ["Session", "Parts", "HANDLERS", "SUBAGENT_TOOLS", "NON_PROMPT_MARKERS", "block_text"]
