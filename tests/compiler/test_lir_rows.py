"""LIR selection's rows come from the table by vocabulary (compiler.rowmap.find, lir/rows.py)."""

from __future__ import annotations

import pytest

from wavegpu.compiler.lir import rows
from wavegpu.compiler.rowmap import find, matches
from wavegpu.compiler.types import F32, I32, U32
from wavegpu.isa.table import BY_KEY
from wavegpu.isa.types import DataType
from wavegpu.isa.vocabulary import AtomOp, Cmp, Nest, Op, ReduceOp, Scope, ShuffleMode


def test_find_answers_one_row_and_refuses_none_or_several() -> None:
    assert find(Op.SETP, Cmp.EQ, dtype=DataType.U32) is BY_KEY["setp.eq.u32"]
    assert find(Op.MOV, sreg=True) is BY_KEY["mov.b32.sreg"]
    assert len(matches(Op.ATOM, AtomOp.ADD, dtype=DataType.U32)) == 2  # global and local
    with pytest.raises(LookupError, match="2 rows"):
        find(Op.ATOM, AtomOp.ADD, dtype=DataType.U32)
    with pytest.raises(LookupError, match="no row"):
        find(Op.ATOM, AtomOp.ADD, dtype=DataType.F64)


def test_control_rows_have_their_nest_roles() -> None:
    roles = {
        rows.IF: Nest.OPEN_IF,
        rows.ELSE: Nest.ELSE,
        rows.ENDIF: Nest.CLOSE,
        rows.LOOP: Nest.OPEN_LOOP,
        rows.ENDLOOP: Nest.CLOSE,
        rows.BREAK: Nest.BREAK,
        rows.CONTINUE: Nest.CONTINUE,
        rows.RET: Nest.RET,
    }
    for key, nest in roles.items():
        assert BY_KEY[key].nest is nest and not BY_KEY[key].uniform
    assert BY_KEY[rows.ENDIF].op is Op.ENDIF and BY_KEY[rows.ENDLOOP].op is Op.ENDLOOP


def test_memory_rows_by_space_width_and_sign() -> None:
    for space in ("global", "local", "const"):
        for width, signed in ((1, False), (1, True), (2, False), (2, True), (4, False), (8, False)):
            spec = BY_KEY[rows.load(space, width, signed)]
            assert (spec.op, spec.space, spec.width, spec.signed) == (Op.LD, space, width, signed)
            assert spec.operands[0].kind.value in "RP"  # never a vector load
    for space in ("global", "local"):
        for width in (1, 2, 4, 8):
            spec = BY_KEY[rows.store(space, width)]
            assert (spec.op, spec.space, spec.width) == (Op.ST, space, width)
            assert spec.operands[1].kind.value in "RP"


def test_atomic_and_wave_rows_fall_back_to_u32_then_b32() -> None:
    def atom(aop: AtomOp, t: object) -> str:
        return rows.atomic(aop, "global", t)  # type: ignore[arg-type]

    assert atom(AtomOp.ADD, F32) == "atom.global.add.f32"
    assert atom(AtomOp.ADD, I32) == atom(AtomOp.ADD, U32) == "atom.global.add.u32"
    assert atom(AtomOp.MIN, I32) == "atom.global.min.s32"
    assert atom(AtomOp.MIN, U32) == "atom.global.min.u32"
    for aop in (AtomOp.AND, AtomOp.OR, AtomOp.XOR, AtomOp.EXCH, AtomOp.CAS):
        assert BY_KEY[atom(aop, I32)].dtype is DataType.B32
    assert rows.reduce(ReduceOp.ADD, I32) == rows.reduce(ReduceOp.ADD, F32) == "wave.reduce.add.u32"
    assert rows.reduce(ReduceOp.MAX, F32) == "wave.reduce.max.f32"
    assert rows.reduce(ReduceOp.OR, U32) == "wave.reduce.or.b32"
    assert rows.prefix(ReduceOp.ADD, I32) == "wave.prefix.add.u32"
    assert BY_KEY[rows.shuffle(ShuffleMode.IDX)].op is Op.SHUFFLE
    assert BY_KEY[rows.fence(Scope.DEVICE)].variant is Scope.DEVICE


def test_moves_by_register_class() -> None:
    for cls, t in (("r", DataType.B32), ("p", DataType.B64), ("q", DataType.PRED)):
        assert BY_KEY[rows.MOVE[cls]].op is Op.MOV and BY_KEY[rows.MOVE[cls]].dtype is t
    assert BY_KEY[rows.CVT_F16_TO_F32].operands[0].dtype is DataType.F32
