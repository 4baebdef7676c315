"""The parts a session is made of, and how they refer to each other.

Each part keeps one concern's state and folds the entries of its kinds
(its ``on_<kind>`` methods, which :data:`reducer.fold.session.HANDLERS`
routes to): :class:`~.info.Info` (what was read, what the session says about
itself), :class:`~.chain.Chain` (the rewind chain), :class:`~.usage.Usage`,
:class:`~.calls.Calls`, :class:`~.turns.Turns`, :class:`~.tasks.Tasks`,
:class:`~.hooks.Hooks`, :class:`~.notices.Notices` and
:class:`~.messages.Messages`, over a shared :class:`~.core.Core` (the agents
and their items, the change records, the routing context of the entry being
folded). A part reaches another only through the references it is made with
(:func:`new_parts`); they refer to each other without cycles (each only to
parts before it in :class:`Parts`), so a state no longer needed is freed by reference
counting once its cards' back references are broken
(:func:`reducer.replay.player.release`).
"""

from __future__ import annotations

from typing import NamedTuple

from .. import frames as F
from ..state import Task, ToolCall, Turn
from .calls import Calls
from .chain import Chain
from .core import Core
from .hooks import Hooks
from .info import Info
from .messages import Messages
from .notices import Notices
from .tasks import Tasks
from .turns import Turns
from .usage import Usage

__all__ = ["Parts", "new_parts", "on_nothing", "on_progress"]


class Parts(NamedTuple):
    """What a :class:`~reducer.fold.Session` is made of: one object per
    concern, each keeping that concern's state. The session's public state
    is every public attribute of these, each kept by one of them."""

    core: Core
    chain: Chain
    info: Info
    usage: Usage
    calls: Calls
    turns: Turns
    tasks: Tasks
    hooks: Hooks
    notices: Notices
    messages: Messages


def new_parts() -> Parts:
    """The parts of a session with nothing folded yet, each given the parts
    and the tables it reads."""
    # the tables several parts read, each kept by one
    calls: dict[str, ToolCall] = {}
    tasks: dict[str, Task] = {}
    turns: list[Turn] = []
    core = Core(calls, turns)
    chain = Chain(core)
    info = Info(core, chain)
    usage = Usage(core)
    calls_part = Calls(core, calls, turns, tasks)
    turns_part = Turns(core, turns, info, usage, calls_part)
    tasks_part = Tasks(core, tasks, calls, turns_part)
    notices = Notices(core)
    return Parts(core, chain, info, usage, calls_part, turns_part, tasks_part,
                 Hooks(core, tasks_part), notices,
                 Messages(core, info, turns_part, usage, calls_part, tasks_part, notices))


# --- entries of more than one part, or of none: handlers of the parts as a whole --------


def on_progress(parts: Parts, e: F.Progress, agent: str) -> None:
    """An on-disk ``progress`` row: a hook's is a hook run, the rest report
    on a call."""
    if e.data.type == "hook_progress":
        parts.hooks.progress_row(e, agent)
    else:
        parts.calls.progress_row(e)


def on_nothing(parts: Parts, e: F.Entry, agent: str) -> None:
    """Control responses, keep-alives, metadata rows and blank lines draw nothing."""
