"""The fold as composed parts (reducer/fold/parts.py): one table routes every
entry class to one part's handler, the session's public state is its parts',
each name kept once, the parts refer to each other without cycles, and a
part folds on its own what the whole session folds, on the real recordings."""

from __future__ import annotations

import inspect
from pathlib import Path

from cctv.reducer import frames as F
from cctv.reducer.decode import decode_line
from cctv.reducer.fold import HANDLERS, Parts, Session
from cctv.reducer.fold.core import Core
from cctv.reducer.fold.notices import Notices
from cctv.reducer.fold.session import _OWNERS, _Kept
from cctv.reducer.fold.usage import Usage
from cctv.reducer.state import MAIN, Turn
from cctv.viewer.loader import load_path

from conftest import FIXTURES

_DECODABLE = {*F.TOP_LEVEL, *F.SYSTEM_SUBTYPES.values(), F.SystemOther, F.Unknown,
              F.Malformed, F.Blank}
_PART_CLASSES = [type(part) for part in Session().parts]


def _public(obj: object) -> set[str]:
    return {name for name in vars(obj) if not name.startswith("_")}


def test_every_decodable_class_has_one_handler_a_method_of_one_part() -> None:
    assert _DECODABLE <= set(HANDLERS)
    for cls, handler in HANDLERS.items():
        owners = [part for part in _PART_CLASSES if part.__dict__.get(handler.__name__) is handler]
        assert len(owners) + (handler.__module__ == Parts.__module__) == 1, cls
        assert handler.__name__.startswith("on_"), cls
    assert set(_OWNERS) == set(HANDLERS.values())


def test_every_handler_of_a_part_folds_some_entry_class() -> None:
    routed = set(HANDLERS.values())
    for part in _PART_CLASSES:
        unrouted = [name for name, fn in vars(part).items()
                    if name.startswith("on_") and inspect.isfunction(fn) and fn not in routed]
        assert not unrouted, part.__name__


def test_the_public_state_is_the_parts_each_name_kept_by_one(recording: Path) -> None:
    session = load_path(recording).session
    declared = {name: attr.part for name, attr in vars(Session).items() if type(attr) is _Kept}
    kept: dict[str, str] = {}
    for field, part in zip(Parts._fields, session.parts):
        for name in _public(part):
            assert name not in kept, (name, kept.get(name), field)  # one part keeps each name
            kept[name] = field
    assert kept == declared
    for name, field in kept.items():  # the session reads the very object its part keeps
        assert getattr(session, name) is getattr(getattr(session.parts, field), name), name


def test_setting_a_public_attribute_sets_its_part() -> None:
    session = Session()
    session.format = "transcript"
    assert session.parts.info.format == "transcript" and session.format == "transcript"


def test_parts_refer_only_to_parts_before_them() -> None:
    """No cycle among the parts: a state no longer needed is freed by reference
    counting (tests/test_replay_seek.py checks that with the collector)."""
    parts = Session().parts
    for index, part in enumerate(parts):
        refers = [other for other in parts if any(value is other for value in vars(part).values())]
        assert all(parts.index(other) < index for other in refers), type(part).__name__


def _entries(path: Path) -> list[F.Entry]:
    return [decode_line(line, n, 0) for n, line in enumerate(path.read_bytes().splitlines(), 1)]


def _core() -> Core:
    core = Core({}, [])
    core.begin([], MAIN, None)
    return core


def test_notices_fold_on_their_own_what_the_session_folds(recording: Path) -> None:
    # the rate-limit, retry and notice frames, folded by a Notices part that has
    # only a Core: its state is the whole session's
    session = Session()
    notices = Notices(_core())
    for entry in _entries(recording):
        session.apply(entry)
        handler = HANDLERS[type(entry)]
        if _OWNERS[handler] == "notices":
            handler(notices, entry, MAIN)
    assert (notices.rate_limit, notices.rate_limit_state, notices.api_retries) \
        == (session.rate_limit, session.rate_limit_state, session.api_retries), recording.name


def test_usage_folds_on_its_own_the_results_and_cost_the_session_folds(recording: Path) -> None:
    # results (each closing a turn of its own here), cost-state rows and conversation
    # resets, folded by a Usage part that has only a Core: the totals are the session's
    session = Session()
    usage = Usage(_core())
    for entry in _entries(recording):
        session.apply(entry)
        if isinstance(entry, F.Result):
            usage.result(entry, Turn(0, None, entry.line_no))
        elif isinstance(entry, F.CostState):
            usage.on_cost_state(entry, MAIN)
        elif isinstance(entry, F.ConversationReset):
            usage.restart()
    mine = (usage.cost_usd, usage.results, usage.is_error, usage.result_usage,
            usage.model_usage, usage.context_window)
    assert mine == (session.cost_usd, session.results, session.is_error, session.result_usage,
                    session.model_usage, session.context_window), recording.name


def test_the_recordings_exercise_the_parts_folded_alone() -> None:
    """(So that the two tests above are not vacuous.)"""
    streams = sorted((FIXTURES / "forge").rglob("*.jsonl"))
    sessions = [load_path(p).session for p in streams]
    assert sum(s.rate_limit_state.events for s in sessions) > 10
    assert sum(s.results for s in sessions) > 10 and any(s.cost_usd for s in sessions)
