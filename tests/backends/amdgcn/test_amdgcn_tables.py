"""Tables the AMDGCN backend shares with the ISA and its simulator: the wave reductions'
inactive-lane values come from isa.semantics.REDUCTIONS (for f32 min/max as the key, rows.f32_key,
of the identity, which loses against every lane's key); the atomic instructions are listed once
(isa.ATOMICS), for the selector, the assembler checks and the simulator."""

from __future__ import annotations

import math
import struct

from hypothesis import given
from hypothesis import strategies as st

from wavegpu.backends.amdgcn import isa, rows
from wavegpu.isa import semantics as sem
from wavegpu.isa.table import ROWS
from wavegpu.isa.types import DataType
from wavegpu.isa.vocabulary import AtomOp, ReduceOp, Unit
from wavegpu.runtime.amdgcn_sim import execute

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


def test_every_atomic_row_has_its_instructions() -> None:
    assert {(r.variant, r.dtype) for r in ROWS if r.unit is Unit.ATOMIC} == set(isa.ATOMICS)


def test_the_simulator_runs_exactly_the_atomics_the_backend_emits() -> None:
    ds = {m for m in isa.EMITTED if isa.FAMILY[m] == "DS" and m in execute.H and execute.H[m] is execute._ds_atomic}
    flat = {m for m in isa.EMITTED if m.startswith("global_atomic_")}
    assert ds == isa.DS_ATOMICS
    assert flat == isa.GLOBAL_ATOMICS
    assert all(execute.H[m] is execute._global_atomic for m in flat)


def test_atomic_spellings() -> None:
    assert isa.ds_atomic(AtomOp.MIN, DataType.S32, returns=True) == "ds_min_rtn_i32"
    assert isa.ds_atomic(AtomOp.CAS, DataType.B32, returns=False) == "ds_cmpst_b32"
    assert isa.ds_atomic(AtomOp.EXCH, DataType.B32, returns=False) == "ds_wrxchg_rtn_b32"
    assert isa.global_atomic(AtomOp.MAX, DataType.U32) == "global_atomic_umax"
    assert isa.global_atomic(AtomOp.ADD, DataType.F32) == "global_atomic_add_f32"
