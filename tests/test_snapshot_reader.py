"""A packed checkpoint read back (as an unpickler reads it) gives exactly its bytes."""

from __future__ import annotations

import pickle
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zstandard

from cctv.reducer.replay.snapshot import Inflating, pack, unpack

_RNG = random.Random(7)
# ~1.5 MB that compresses about as a snapshot does (words, numbers, some noise)
_DATA = b"".join(
    b"%d:%s;" % (i, bytes(_RNG.choice(b"abcdefgh \n") for _ in range(_RNG.randint(0, 40))))
    for i in range(60_000)) + _RNG.randbytes(200_000)
_PACKED = pack(_DATA)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["read", "readinto", "readline"]),
                          st.integers(0, 300_000)), min_size=1, max_size=60))
def test_any_mix_of_reads_gives_the_bytes_in_order(reads: list[tuple[str, int]]) -> None:
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
    packed = pack(pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL))
    assert pickle.Unpickler(Inflating(packed)).load() == state
    reads = 0

    def cancelled() -> bool:
        nonlocal reads
        reads += 1
        return reads > 3

    with pytest.raises(EOFError):
        pickle.Unpickler(Inflating(packed, cancelled)).load()


def test_a_damaged_or_cut_snapshot_says_so() -> None:
    assert unpack(_PACKED) == _DATA
    for damaged in (b"not a zstandard frame" * 100, _PACKED[:len(_PACKED) // 2]):
        with pytest.raises(zstandard.ZstdError):
            Inflating(damaged)
