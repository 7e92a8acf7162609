"""MIR operation + types -> the ISA row that implements it (one table for folding and selection).

The rows are found by their typed vocabulary (op, principal type, destination type, variant),
never by spelling a mnemonic, so a row added to the table is selected without an edit here.
"""

from __future__ import annotations

from ..isa.table import ROWS, InstrSpec
from ..isa.types import DataType
from ..isa.vocabulary import Cmp, Op, Rounding, Variant
from .types import BOOL, F16, F32, F64, I32, U32, ScalarType

T = DataType

# (op, principal type, destination type, variant) -> row key; rows that differ only in memory
# space share an entry (the first), and selection here never asks for memory rows
_Index = tuple[Op, "DataType | None", "DataType | None", "Variant | None"]


def _index_key(r: InstrSpec) -> _Index:
    return (r.op, r.dtype, r.operands[0].dtype if r.operands else None, r.variant)


_INDEX: dict[_Index, str] = {}
for _r in ROWS:
    _INDEX.setdefault(_index_key(_r), _r.key)

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
}


def _row(op: Op, src: DataType | None, dst: DataType | None, variant: Variant | None = None) -> str | None:
    return _INDEX.get((op, src, dst, variant))


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
        raise AssertionError(f"select.py finds no row for: {missing}")


__all__ = ["F16", "F32", "F64", "I32", "U32", "check_rows", "row_for"]
