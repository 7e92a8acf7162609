"""The typed vocabulary of the table: every row's op, variant, nest role and signedness."""

from __future__ import annotations

import numpy as np

from wavegpu.isa import semantics as sem
from wavegpu.isa.table import ROWS
from wavegpu.isa.vocabulary import (
    FLOAT_CONDITIONS,
    INT_CONDITIONS,
    NEST_OF,
    AtomOp,
    Cmp,
    Nest,
    Op,
    ReduceOp,
    Rounding,
    Scope,
    ShuffleMode,
)

VARIANT_TYPE = {
    Op.REDUCE: ReduceOp,
    Op.PREFIX: ReduceOp,
    Op.ATOM: AtomOp,
    Op.RED: AtomOp,
    Op.SHUFFLE: ShuffleMode,
    Op.BROADCAST: ShuffleMode,
    Op.SETP: Cmp,
    Op.FENCE: Scope,
}


def test_every_operation_has_rows() -> None:
    assert {r.op for r in ROWS} == set(Op)


def test_op_is_the_stem_of_the_mnemonic() -> None:
    for r in ROWS:
        stem = r.op.value
        if r.space is not None:
            stem = f"{stem}.{r.space}"
        assert r.name == stem or r.name.startswith(stem + "."), r.key


def test_variants_are_typed_and_spelled_by_the_mnemonic() -> None:
    for r in ROWS:
        kind = VARIANT_TYPE.get(r.op)
        if kind is not None:
            assert isinstance(r.variant, kind), r.key
        elif r.op is Op.CVT:
            assert r.variant is None or isinstance(r.variant, Rounding), r.key
        else:
            assert r.variant is None, r.key
        if r.variant is not None and r.variant is not ShuffleMode.IDX:
            assert r.variant.value in r.name.split("."), r.key


def test_every_variant_value_is_used() -> None:
    used = {r.variant for r in ROWS}
    for kind in (AtomOp, ShuffleMode, Cmp, Scope, Rounding):
        assert set(kind) <= used, kind
    assert set(ReduceOp) <= used


def test_conditions() -> None:
    int_rows = [r.variant for r in ROWS if r.op is Op.SETP and r.opcode == 0x48]
    float_rows = [r.variant for r in ROWS if r.op is Op.SETP and r.opcode == 0x4A]
    assert tuple(int_rows) == INT_CONDITIONS
    assert tuple(float_rows) == FLOAT_CONDITIONS
    assert Cmp.LTU.unordered and Cmp.LTU.ordered is Cmp.LT and not Cmp.LT.unordered


def test_nest_roles() -> None:
    roles = {r.key: r.nest for r in ROWS if r.nest is not None}
    assert roles == {
        "if": Nest.OPEN_IF,
        "if.uniform": Nest.OPEN_IF,
        "else": Nest.ELSE,
        "endif": Nest.CLOSE,
        "loop": Nest.OPEN_LOOP,
        "endloop": Nest.CLOSE,
        "break": Nest.BREAK,
        "continue": Nest.CONTINUE,
        "ret": Nest.RET,
    }
    assert set(NEST_OF.values()) == set(Nest)
    assert all(r.control == (r.nest is not None) for r in ROWS)


def test_signedness() -> None:
    signed = {r.key for r in ROWS if r.signed}
    assert {"add.s32", "shr.s32", "atom.global.min.s32", "wave.reduce.max.s32", "ld.global.s8"} <= signed
    assert not {"add.u32", "shr.u32", "atom.global.min.u32", "ld.global.u8", "ld.global.b32"} & signed


def test_every_reduction_and_atomic_row_has_its_operator() -> None:
    for r in ROWS:
        if r.op in (Op.REDUCE, Op.PREFIX):
            assert sem.reduction_of(r).op is r.variant
        elif r.op in (Op.ATOM, Op.RED):
            assert sem.atomic_of(r).op is r.variant


def test_identities_are_identities() -> None:
    x = np.array([0, 1, 5, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0x3F800000, 0xBF800000, 0x80000000], dtype=np.uint32)
    for red in sem.REDUCTIONS.values():
        ident = np.full(x.shape, red.identity, dtype=np.uint32)
        want = sem.canon32(x.view(np.float32)) if red.dtype.is_float else x  # NaNs come out canonical
        assert np.array_equal(red.combine(ident, x), want), red
        assert np.array_equal(red.combine(x, ident), want), red
        assert np.array_equal(red.fold(np.stack([x, ident], axis=1)), want), red
