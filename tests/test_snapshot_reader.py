"""A packed checkpoint read back a piece at a time gives exactly its bytes."""

from __future__ import annotations

import pickle
import random
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reducer.fold.snapshot import Inflating

_RNG = random.Random(7)
# ~1.5 MB that compresses about as a snapshot does (words, numbers, some noise)
_DATA = b"".join(
    b"%d:%s;" % (i, bytes(_RNG.choice(b"abcdefgh \n") for _ in range(_RNG.randint(0, 40))))
    for i in range(60_000)) + _RNG.randbytes(200_000)
_PACKED = zlib.compress(_DATA, 6)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["read", "readinto", "readline"]),
                          st.integers(0, 300_000)), min_size=1, max_size=60))
def test_any_mix_of_reads_gives_the_bytes_in_order(reads: list[tuple[str, int]]) -> None:
    assert len(_PACKED) > 4 * (1 << 16)  # many pieces of input, and of output
    reader = Inflating(_PACKED)
    got: list[bytes] = []
    for how, size in reads:
        if how == "read":
            got.append(reader.read(size))
        elif how == "readinto":
            buffer = bytearray(size)
            n = reader.readinto(memoryview(buffer))
            got.append(bytes(buffer[:n]))
        else:
            got.append(reader.readline())
    got.append(reader.read())
    assert b"".join(got) == _DATA
    assert reader.read(10) == b""


def test_an_unpickler_reads_a_big_state_back_and_stops_when_cancelled() -> None:
    state = {"items": [(i, f"text {i}", [i] * 3) for i in range(100_000)]}
    packed = zlib.compress(pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL), 6)
    assert pickle.Unpickler(Inflating(packed)).load() == state
    reads = 0

    def cancelled() -> bool:
        nonlocal reads
        reads += 1
        return reads > 3

    with pytest.raises(EOFError):
        pickle.Unpickler(Inflating(packed, cancelled)).load()


def test_the_inflating_thread_ends_however_the_reader_stops() -> None:
    import sys

    from reducer.fold.snapshot import quick_handover

    interval = sys.getswitchinterval()
    whole = Inflating(_PACKED)
    assert whole.read() == _DATA  # read to the end
    early = Inflating(_PACKED)
    assert early.read(10) == _DATA[:10]
    early.close()  # stopped half-way, its queue full
    broken = Inflating(b"not a zlib stream" * 100)
    with pytest.raises(zlib.error), quick_handover():
        assert sys.getswitchinterval() < interval
        broken.read()
    for reader in (whole, early, broken):
        reader._thread.join(timeout=5)
        assert not reader._thread.is_alive()
    assert sys.getswitchinterval() == interval


def test_a_reader_dropped_unclosed_stops_its_thread() -> None:
    import gc

    reader = Inflating(zlib.compress(_DATA * 8, 1))  # 12 MB: more than it may hold ready
    assert reader.read(10)
    thread = reader._thread
    del reader
    gc.collect()
    thread.join(timeout=5)
    assert not thread.is_alive()
