"""The typed vocabulary of the table: every row's op, variant, nest role and signedness."""

from __future__ import annotations

import numpy as np

from wavegpu.isa import semantics as sem
from wavegpu.isa.table import ROWS, VALUE_ROWS
from wavegpu.isa.types import Kind
from wavegpu.isa.vocabulary import (
    ATOMIC_OPS,
    FLOAT_CONDITIONS,
    INT_CONDITIONS,
    MEMORY_OPS,
    NEST_OF,
    UNIT_OF,
    VALUE_OPS,
    WAVE_OPS,
    AtomOp,
    Cmp,
    InstrClass,
    Nest,
    Op,
    ReduceOp,
    Rounding,
    Scope,
    ShuffleMode,
    Space,
    Unit,
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


def test_units_partition_the_operations() -> None:
    assert set(UNIT_OF) == set(Op)
    by_unit = {u: {o for o, v in UNIT_OF.items() if v is u} for u in Unit}
    assert by_unit[Unit.MEMORY] == MEMORY_OPS == {Op.LD, Op.ST}
    assert by_unit[Unit.ATOMIC] == ATOMIC_OPS == {Op.ATOM, Op.RED}
    assert by_unit[Unit.WAVE] == WAVE_OPS == {o for o in Op if o.value.startswith("wave.")}
    assert by_unit[Unit.CONTROL] == set(NEST_OF)
    assert by_unit[Unit.VALUE] == VALUE_OPS
    assert all(by_unit[u] for u in Unit), "a unit without operations"
    assert all(r.unit is UNIT_OF[r.op] for r in ROWS)
    assert all(r.control == (r.unit is Unit.CONTROL) for r in ROWS)


def test_value_rows_are_the_semantics_and_the_special_register_move() -> None:
    sreg_moves = {r.key for r in ROWS if r.op is Op.MOV and any(o.kind is Kind.SREG for o in r.operands)}
    assert sreg_moves == {"mov.b32.sreg"}
    assert set(sem.SEMANTICS) | sreg_moves == VALUE_ROWS
    assert not {r.key for r in ROWS if r.unit is not Unit.VALUE} & set(sem.SEMANTICS)


def test_memory_space_is_typed_and_spelled_by_the_mnemonic() -> None:
    for r in ROWS:
        if r.unit in (Unit.MEMORY, Unit.ATOMIC):
            assert isinstance(r.space, Space), r.key
            assert r.name.split(".")[1] == r.space.value, r.key
        else:
            assert r.space is None, r.key
    assert {r.space for r in ROWS} == {*Space, None}


def test_global_access_is_a_global_load_store_or_atomic() -> None:
    memory_classes = (InstrClass.LOAD, InstrClass.STORE, InstrClass.ATOMIC)
    for r in ROWS:
        assert r.is_global_access == (r.space is Space.GLOBAL and r.cls in memory_classes), r.key
        assert r.is_global_access == (r.name.split(".")[1:2] == ["global"]), r.key


def test_instruction_classes_are_typed_and_all_used() -> None:
    assert all(isinstance(r.cls, InstrClass) for r in ROWS)
    assert {r.cls for r in ROWS} == set(InstrClass)
