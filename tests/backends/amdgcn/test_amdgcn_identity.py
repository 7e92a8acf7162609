"""The AMDGCN wave reductions' inactive-lane values come from isa.semantics.REDUCTIONS: for f32
min/max as the key (rows.f32_key) of the identity, which loses against every lane's key."""

from __future__ import annotations

import math
import struct

from hypothesis import given
from hypothesis import strategies as st

from wavegpu.backends.amdgcn import rows
from wavegpu.isa import semantics as sem
from wavegpu.isa.types import DataType
from wavegpu.isa.vocabulary import ReduceOp

F32_BITS = st.integers(0, 0xFFFFFFFF)


def _value(bits: int) -> float:
    return struct.unpack("<f", struct.pack("<I", bits))[0]


@given(F32_BITS, F32_BITS)
def test_keys_order_like_the_floats(a: int, b: int) -> None:
    x, y = _value(a), _value(b)
    for is_min in (True, False):
        ka, kb = rows.f32_key_of(a, is_min), rows.f32_key_of(b, is_min)
        assert 0 <= ka <= 0xFFFFFFFF
        if math.isnan(x) or math.isnan(y):
            continue
        if x < y or (x == y == 0 and math.copysign(1, x) < math.copysign(1, y)):
            assert ka < kb
        elif a == b:
            assert ka == kb


@given(F32_BITS)
def test_the_identity_key_loses_against_every_lane(a: int) -> None:
    for op, pick in ((ReduceOp.MIN, min), (ReduceOp.MAX, max)):
        ident = rows.identity(op, DataType.F32)
        key = rows.f32_key_of(a, op is ReduceOp.MIN)
        assert pick(ident, key) == key


def test_identities_are_the_semantics_ones() -> None:
    assert rows.identity(ReduceOp.MIN, DataType.F32) == 0xFFFFFFFF
    assert rows.identity(ReduceOp.MAX, DataType.F32) == 0
    for (op, t), red in sem.REDUCTIONS.items():
        if t is not DataType.F32:
            assert rows.identity(op, t) == red.identity
