"""Shared helpers for the reducer tests: where the reference recordings are, and
two ways to fold one.

- ``FIXTURES``: ``tests/fixtures/``, the real recordings vendored into the
  repository (see ``tests/fixtures/README.md`` for their origin and licence).
  It is the one place tests find data: a fresh clone passes alone.
- ``reference`` (fixture): the same folder, for tests that take it as an argument.
- ``fold_file(path) -> Feed``: the whole file through :func:`viewer.loader.load_path`
  (an on-disk transcript gets its ``subagents/`` files too).
- ``fold_until(path, line_no) -> Session``: the lines up to and including
  ``line_no`` of one file, folded as a live reader would have them.
- ``recording`` (parametrised fixture): every ``*.jsonl`` under ``forge/`` and
  ``captures/``, ``.stdin.jsonl`` and sub-agent files included.
- ``state_graph(session)``: the whole state as plain data, which objects are
  shared included (to tell a restored state from a freshly folded one).

Relative paths given to the helpers are taken inside ``FIXTURES``.

For app tests: ``await wait_for(pilot, condition, timeout=8.0)`` lets the app
run until ``condition()`` holds; ``screen_text(app)`` is the visible transcript.
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cctv.reducer.feed import Feed, read_file_lines
from cctv.reducer.fold import Session


FIXTURES = Path(__file__).resolve().parent / "fixtures"
"""The vendored recordings: ``captures/``, ``forge/`` and ``public/``."""

if not (FIXTURES / "captures").is_dir():  # a broken checkout, not a reason to skip
    raise RuntimeError(f"test fixtures missing at {FIXTURES}")


def recordings() -> list[Path]:
    """Every recording under forge/ and captures/, in a stable order."""
    files = [p for top in ("forge", "captures") for p in (FIXTURES / top).rglob("*.jsonl")]
    return sorted(files)


def ref_path(path: str | Path) -> Path:
    """``path`` itself when absolute, else the file of that name in the reference."""
    p = Path(path)
    return p if p.is_absolute() else FIXTURES / p


def fold_file(path: str | Path) -> Feed:
    """Decode and fold a whole file the way ``cctv`` opens it."""
    from cctv.viewer.loader import load_path

    return load_path(ref_path(path))


def replay_words(path: Path) -> list[list[str]]:
    """The replay inspector's words for each frame of ``path`` (index
    ``position - 1``), stepping from the first: what any other way to a
    frame must say too."""
    from cctv.viewer.replay.recording import load_recording

    replay = load_recording(path).replay()
    out = []
    while replay.position < len(replay):
        replay.step()
        out.append(replay.descriptions)
    return out


_LAZY = frozenset({"_open_calls", "tool", "_changes", "_routes"})
"""Kept lazily, not compared by :func:`state_graph`: the session's open calls
(pruned whenever ``activity`` is read), a call's canonical tool (built by
reducer.queries on first use), the change records of the entries being folded, and the
session's routes (made for each entry class on its first entry)."""


class FoldObjects:
    """The fold's objects (states, items, calls, hook runs…) that ``owner`` holds
    now, by id, to ask later which of them only the cyclic collector could free.

    Where a state must be freed by reference counting, :meth:`garbage` is
    empty. Only these objects are looked at: a bare ``gc.collect() == 0`` also
    counts what other tests left for the collector (CI once found an earlier
    test's sub-agent session there)."""

    def __init__(self, owner: object) -> None:
        self.ids: set[int] = set()
        self.add(owner)

    def add(self, owner: object) -> None:
        """Look at what ``owner`` holds now too."""
        seen: set[int] = set()
        todo = [owner]
        while todo:
            obj = todo.pop()
            if id(obj) in seen:
                continue
            seen.add(id(obj))
            if type(obj).__module__.startswith("cctv.reducer"):
                self.ids.add(id(obj))
            elif not isinstance(obj, (dict, list, tuple, set, frozenset)):
                continue
            todo.extend(r for r in gc.get_referents(obj) if not isinstance(r, type))

    def garbage(self) -> list[object]:
        """Those of the objects that a full collection finds unreachable."""
        gc.set_debug(gc.DEBUG_SAVEALL)
        try:
            gc.collect()
            return [o for o in gc.garbage if id(o) in self.ids]
        finally:
            gc.set_debug(0)
            gc.garbage.clear()


def state_graph(session: Session) -> list[Any]:
    """The whole state of ``session`` as plain tokens: every field, slot and
    entry (private ones too), and for each mutable object (a state object,
    list, dict or set) the number it got when first met, so two states
    compare equal only when their values are the same *and* the same places
    share one object (a call in ``calls`` is the call its card draws)."""
    import msgspec

    out: list[Any] = []
    numbers: dict[int, int] = {}
    keep: list[Any] = []  # walked objects stay alive, so their ids stay unique

    def walk(obj: Any) -> None:
        if obj is None or isinstance(obj, (str, int, float, bytes, bool)):
            out.append(obj)
            return
        if isinstance(obj, msgspec.Raw):
            out.append(("raw", bytes(obj)))
            return
        if type(obj) is tuple:  # immutable: its values only
            out.append("(")
            for value in obj:
                walk(value)
            out.append(")")
            return
        seen = numbers.get(id(obj))
        if seen is not None:
            out.append(("@", seen))
            return
        numbers[id(obj)] = len(numbers)
        keep.append(obj)
        out.append(("#", type(obj).__name__))
        if isinstance(obj, dict):
            for key, value in obj.items():
                walk(key)
                walk(value)
        elif isinstance(obj, list) or (isinstance(obj, tuple) and hasattr(obj, "_fields")):
            for value in obj:
                walk(value)
        elif isinstance(obj, (set, frozenset)):
            out.append(sorted(map(repr, obj)))
        else:
            if isinstance(obj, msgspec.Struct):
                names = [f for f in obj.__struct_fields__]
            else:
                names = sorted(vars(obj))
            for name in names:
                if name not in _LAZY:
                    out.append(name)
                    walk(getattr(obj, name))
        out.append(")")

    walk(session)
    out.append(session.activity)
    return out


def fold_until(path: str | Path, line_no: int) -> Session:
    """The session after the lines ``1..line_no`` of one file (no sub-agent files)."""
    feed = Feed()
    for batch in read_file_lines(ref_path(path)):
        batch = [ln for ln in batch if ln.line_no <= line_no]
        if batch:
            feed.feed(batch)
    return feed.session


@pytest.fixture(autouse=True)
def _disk_notes_of_this_test_only() -> None:
    """What happened to cctv's files on disk is told once per process
    (:mod:`viewer.storage`); each test starts as a new process would."""
    from cctv.viewer.storage import forget_notes

    forget_notes()


@pytest.fixture(autouse=True, scope="session")
def _price_table_read() -> None:
    """The price table read once before any test, as a viewer reads it behind
    its first screen: an estimate is drawn at once whatever test ran before
    (tests/test_pricing.py checks the "…" shown while it is being read)."""
    from cctv.reducer import pricing

    pricing.load()


@pytest.fixture(scope="session")
def reference() -> Path:
    return FIXTURES


@pytest.fixture(name="fold_file")
def _fold_file_fixture(reference: Path):
    return fold_file


@pytest.fixture(name="fold_until")
def _fold_until_fixture(reference: Path):
    return fold_until


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "recording" in metafunc.fixturenames:
        files = recordings()
        metafunc.parametrize("recording", files,
                             ids=[str(p.relative_to(FIXTURES)) for p in files])


async def wait_for(pilot: Any, condition: Callable[[], bool], timeout: float = 8.0) -> None:
    """Let the app run until ``condition()`` holds (fail after ``timeout`` s)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        if loop.time() > deadline:
            raise AssertionError("condition not met in time")
        await pilot.pause(0.05)


def screen_text(app: Any) -> str:
    """Every visible line of the screen's transcript view, as plain text."""
    from cctv.widgets.transcript import TranscriptView  # the reducer tests import no Textual

    view = app.screen.query_one(TranscriptView)
    return "\n".join(view.render_line(y).text for y in range(view.size.height))
