"""MIR operation + types -> the ISA row that implements it (one table for folding and selection),
and `find`, the row with given vocabulary fields, for the rows selection picks by hand.

The rows are found by their typed vocabulary (op, principal type, destination type, variant),
never by spelling a mnemonic, so a row added to the table is selected without an edit here.
"""

from __future__ import annotations

import enum
from collections.abc import Hashable
from functools import cache

from ..isa.table import ROWS, InstrSpec
from ..isa.types import DataType, Kind
from ..isa.vocabulary import Cmp, Nest, Op, Rounding, Variant
from .types import BOOL, F16, F32, F64, I32, U32, ScalarType

T = DataType


# ---- rows by vocabulary (row_for below, and lir/rows.py for the rows it picks by hand):
# `find(Op.SETP, Cmp.EQ, dtype=DataType.U32)` is the row `setp.eq.u32`. Every filter left out
# matches any row; a question that matches no row or several raises LookupError, so a table edit
# that makes a question ambiguous fails where the question is asked.
class _Any(enum.Enum):
    ANY = "any"


ANY = _Any.ANY
"""A filter left open: any value of the field matches."""


def _fits(
    r: InstrSpec,
    op: Op | _Any,
    variant: Variant | _Any | None,
    nest: Nest | _Any | None,
    dtype: DataType | _Any | None,
    dst: DataType | _Any | None,
    space: str | _Any | None,
    width: int | _Any,
    signed: bool | _Any,
    sreg: bool | _Any,
    uniform: bool | _Any,
) -> bool:
    return (
        (op is ANY or r.op is op)
        and (variant is ANY or r.variant is variant)
        and (nest is ANY or r.nest is nest)
        and (dtype is ANY or r.dtype is dtype)
        and (dst is ANY or (r.operands[0].dtype if r.operands else None) is dst)
        and (space is ANY or r.space == space)
        and (width is ANY or r.width == width)
        and (signed is ANY or r.signed is signed)
        and (sreg is ANY or any(o.kind is Kind.SREG for o in r.operands) is sreg)
        and (uniform is ANY or r.uniform is uniform)
    )


@cache
def matches(
    op: Op | _Any = ANY,
    variant: Variant | _Any | None = ANY,
    *,
    nest: Nest | _Any | None = ANY,
    dtype: DataType | _Any | None = ANY,
    dst: DataType | _Any | None = ANY,
    space: str | _Any | None = ANY,
    width: int | _Any = ANY,
    signed: bool | _Any = ANY,
    sreg: bool | _Any = ANY,
    uniform: bool | _Any = ANY,
) -> tuple[InstrSpec, ...]:
    """Every row with these fields, in table order. `dtype` is the row's principal type, `dst`
    its first operand's type, `sreg` whether it reads a special register."""
    return tuple(r for r in ROWS if _fits(r, op, variant, nest, dtype, dst, space, width, signed, sreg, uniform))


def find(op: Op | _Any = ANY, variant: Variant | _Any | None = ANY, **fields: Hashable) -> InstrSpec:
    """The one row with these fields (the keywords of `matches`); `LookupError` when none or
    several have them."""
    found = matches(op, variant, **fields)
    if len(found) != 1:
        asked = {k: v for k, v in dict(op=op, variant=variant, **fields).items() if v is not ANY}
        what = "no row" if not found else f"{len(found)} rows ({', '.join(r.key for r in found)})"
        raise LookupError(f"{what} with {asked}")
    return found[0]


# the ISA type a MIR scalar type is computed in: by value (add, min, cvt...) or as bits (and, shl)
_VALUE = {"i32": T.S32, "u32": T.U32, "f32": T.F32, "f64": T.F64, "f16": T.F16}
_BITS = {"i32": T.B32, "u32": T.B32, "bool": T.PRED}

# MIR op -> (ISA op for integers, ISA op for floats, operands as bits?, variant)
_ARITH: dict[str, tuple[Op | None, Op | None, bool, Variant | None]] = {
    "add": (Op.ADD, Op.ADD, False, None),
    "sub": (Op.SUB, Op.SUB, False, None),
    "mul": (Op.MUL_LO, Op.MUL, False, None),
    "div": (Op.DIV, Op.DIV, False, None),
    "rem": (Op.REM, None, False, None),
    "mulhi": (Op.MUL_HI, None, False, None),
    "mad": (Op.MAD_LO, None, False, None),
    "and": (Op.AND, None, True, None),
    "or": (Op.OR, None, True, None),
    "xor": (Op.XOR, None, True, None),
    "not": (Op.NOT, None, True, None),
    "shl": (Op.SHL, None, True, None),
    "shr": (Op.SHR, None, False, None),
    "neg": (Op.NEG, Op.NEG, False, None),
    "abs": (Op.ABS, Op.ABS, False, None),
    "min": (Op.MIN, Op.MIN, False, None),
    "max": (Op.MAX, Op.MAX, False, None),
    "fma": (None, Op.FMA, False, None),
    "sqrt": (None, Op.SQRT, False, None),
    "rsqrt": (None, Op.RSQRT, False, None),
    "sin": (None, Op.SIN, False, None),
    "cos": (None, Op.COS, False, None),
    "exp2": (None, Op.EXP2, False, None),
    "log2": (None, Op.LOG2, False, None),
    "floor": (None, Op.CVT, False, Rounding.RMI),
    "ceil": (None, Op.CVT, False, Rounding.RPI),
    "popc": (Op.POPC, None, True, None),
    "clz": (Op.CLZ, None, True, None),
}
_COUNTS = ("popc", "clz")  # b32 operand, u32 count: whatever the MIR type, the same bits


def _row(op: Op, src: DataType | None, dst: DataType | None, variant: Variant | None = None) -> str | None:
    # rows that differ only in memory space answer with the first (selection here never asks for
    # memory rows)
    found = matches(op, variant, dtype=src, dst=dst)
    return found[0].key if found else None


def _arith(op: str, t: ScalarType) -> str | None:
    int_op, float_op, bits, variant = _ARITH[op]
    isa_op = float_op if t.is_float else int_op
    dt = (_BITS if bits else _VALUE).get(t.name)
    if isa_op is None or dt is None:
        return None
    return _row(isa_op, dt, dt, variant)


def row_for(op: str, dst: ScalarType | None, args: list[ScalarType]) -> str | None:
    """The row key computing this value op, or None (no single row: handled by selection)."""
    t = args[0] if args else dst
    assert t is not None
    if op in _COUNTS:
        return _row(_ARITH[op][0], T.B32, T.U32) if t.is_int else None  # type: ignore[arg-type]
    if op in _ARITH:
        if op == "abs" and t is U32:
            return _row(Op.MOV, T.B32, T.B32)  # |x| of an unsigned value is x
        return _arith(op, t)
    if op.startswith("cmp."):
        if t is BOOL or t is F16:
            return None  # eq/ne on bools: xor.pred / not; no f16 compares
        cc = Cmp(op[4:])
        if t.is_float and cc is Cmp.NE:
            cc = Cmp.NEU  # Python: nan != nan is True
        return _row(Op.SETP, _VALUE[t.name], T.PRED, cc)
    if op == "cvt":
        assert dst is not None
        if {dst.name, t.name} == {"i32", "u32"}:
            return _row(Op.MOV, T.B32, T.B32)  # a reinterpretation
        if dst.name not in _VALUE or t.name not in _VALUE:
            return None
        return _row(Op.CVT, _VALUE[t.name], _VALUE[dst.name])
    if op == "select":
        assert dst is not None
        if dst is BOOL:
            return None
        return _row(Op.SELP, T.B64, T.B64) if dst is F64 else _row(Op.SELP, T.B32, T.B32)
    return None


def check_rows() -> None:
    """Every MIR operation above is implemented by some row (a test calls this)."""
    types = (I32, U32, F32, F64, F16, BOOL)
    missing = [op for op in _ARITH if not any(row_for(op, t, [t]) for t in types)]
    if missing:
        raise AssertionError(f"rowmap.py finds no row for: {missing}")


__all__ = ["ANY", "F16", "F32", "F64", "I32", "U32", "check_rows", "find", "matches", "row_for"]
