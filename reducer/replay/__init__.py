"""Replaying a recorded session frame by frame: pure logic, no Textual, no I/O.

* :mod:`.order` — the frames of a session in replay order (the main source
  and its sub-agent files merged by their recorded time);
* :mod:`.pacing` — when each frame happened (recorded, derived or even),
  idle-gap skipping and a clock-driven :class:`Pacer`;
* :mod:`.markers` — turns, tool calls, errors, hooks, task events and
  compactions, for next / previous jumps and the timeline;
* :mod:`.player` — the :class:`Replay`: a :class:`~reducer.fold.Session`
  at any frame, by restoring the nearest checkpoint (or one restored ahead)
  and folding on;
* :mod:`.snapshot` — a state snapshotted, packed and restored;
* :mod:`.checkpoints` — how checkpoints are kept and read back;
  :mod:`.pool` — the final state's units they share;
* :mod:`.describe` — what a frame's change records mean, in words.
"""

from .describe import ChangeDescriber
from .order import AgentFile, ReplayFrame, merge_frames, row_time
from .markers import MARKER_KINDS, MarkerKind, Markers, frame_markers
from .pacing import EVEN_STEP_S, IDLE_GAP_S, IDLE_KEPT_S, Pacer, PacingSource, Timeline, pace
from .checkpoints import Checkpoints
from .player import Replay

__all__ = [
    "AgentFile", "ReplayFrame", "merge_frames", "row_time",
    "Timeline", "PacingSource", "pace", "Pacer", "EVEN_STEP_S", "IDLE_GAP_S", "IDLE_KEPT_S",
    "MarkerKind", "MARKER_KINDS", "Markers", "frame_markers",
    "Replay", "Checkpoints", "ChangeDescriber",
]
