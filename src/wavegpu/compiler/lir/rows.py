"""The rows LIR selection emits beyond `compiler/rowmap.py`'s, found by vocabulary, never by key.

Moves, predicate logic, memory accesses, atomics, wave operations and the structured-control
rows are asked of the table by what they do (`compiler.rowmap.find`); the keys are computed once, at
import, so a table edit that makes a question ambiguous fails here.
"""

from __future__ import annotations

from collections.abc import Hashable

from ...isa.types import DataType
from ...isa.vocabulary import AtomOp, Cmp, Nest, Op, ReduceOp, Scope, ShuffleMode, Variant
from ..rowmap import find, matches
from ..types import ScalarType

T = DataType

# moves by register class: "r" 32-bit register, "p" register pair, "q" predicate
MOVE = {cls: find(Op.MOV, dtype=t, sreg=False).key for cls, t in (("r", T.B32), ("p", T.B64), ("q", T.PRED))}
MOV_SREG = find(Op.MOV, sreg=True).key
SETP_EQ_U32 = find(Op.SETP, Cmp.EQ, dtype=T.U32).key
SETP_NE_U32 = find(Op.SETP, Cmp.NE, dtype=T.U32).key
NOT_PRED = find(Op.NOT, dtype=T.PRED).key
AND_PRED = find(Op.AND, dtype=T.PRED).key
OR_PRED = find(Op.OR, dtype=T.PRED).key
XOR_PRED = find(Op.XOR, dtype=T.PRED).key
NEG_S32 = find(Op.NEG, dtype=T.S32).key
SELP_B32 = find(Op.SELP, dtype=T.B32).key
SELP_B64 = find(Op.SELP, dtype=T.B64).key
CVT_F16_TO_F32 = find(Op.CVT, None, dtype=T.F16, dst=T.F32).key
CVT_F32_TO_F16 = find(Op.CVT, None, dtype=T.F32, dst=T.F16).key
BARRIER = find(Op.BARRIER).key
# the unsigned arithmetic of the register allocator's spill addressing
ADD_U32 = find(Op.ADD, dtype=T.U32).key
MUL_LO_U32 = find(Op.MUL_LO, dtype=T.U32).key
MAD_LO_U32 = find(Op.MAD_LO, dtype=T.U32).key

# structured control flow, by nesting role (the closers by the construct they close)
IF = find(nest=Nest.OPEN_IF, uniform=False).key
ELSE = find(nest=Nest.ELSE).key
ENDIF = find(Op.ENDIF, nest=Nest.CLOSE).key
LOOP = find(nest=Nest.OPEN_LOOP).key
ENDLOOP = find(Op.ENDLOOP, nest=Nest.CLOSE).key
BREAK = find(nest=Nest.BREAK).key
CONTINUE = find(nest=Nest.CONTINUE).key
RET = find(nest=Nest.RET).key

# the ISA type a MIR scalar type holds its value as
_VALUE = {"i32": T.S32, "u32": T.U32, "f32": T.F32, "f64": T.F64, "f16": T.F16}


def fence(scope: Scope) -> str:
    return find(Op.FENCE, scope).key


def _typed(op: Op, variant: Variant, t: ScalarType, **fields: Hashable) -> str:
    """The row of `op`/`variant` in t's own type if there is one, else its u32 row, else its b32
    row (atomic and wave adds are u32 rows for any type; and/or/xor/exch/cas are b32 rows)."""
    for dt in (_VALUE.get(t.name), T.U32, T.B32):
        if dt is not None:
            found = matches(op, variant, dtype=dt, **fields)
            if len(found) == 1:
                return found[0].key
    return find(op, variant, dtype=T.B32, **fields).key


def atomic(aop: AtomOp, space: str, t: ScalarType) -> str:
    """The atomic read-modify-write `aop` on a t in `space`."""
    return _typed(Op.ATOM, aop, t, space=space)


def reduce(rop: ReduceOp, t: ScalarType) -> str:
    """The wave reduction `rop` of a t."""
    return _typed(Op.REDUCE, rop, t)


def prefix(rop: ReduceOp, t: ScalarType) -> str:
    """The wave prefix `rop` of a t."""
    return _typed(Op.PREFIX, rop, t)


def shuffle(mode: ShuffleMode) -> str:
    return find(Op.SHUFFLE, mode).key


BROADCAST = find(Op.BROADCAST).key
BALLOT = find(Op.BALLOT).key
ANY_LANE = find(Op.ANY).key
ALL_LANES = find(Op.ALL).key


def load(space: str, width: int, signed: bool) -> str:
    """A load of `width` bytes: narrow ones extend (sign- or zero-), the others move bits."""
    if width < 4:
        return find(Op.LD, dtype=T.S32 if signed else T.U32, space=space, width=width).key
    return find(Op.LD, dtype=T.B64 if width == 8 else T.B32, space=space, width=width).key


def vector(cls: str, space: str, count: int) -> str:
    """A load or store (`cls`) of `count` consecutive 32-bit words: the .v2/.v4 rows."""
    return find(Op.LD if cls == "load" else Op.ST, dtype=T.B32, space=space, width=4 * count).key


def store(space: str, width: int) -> str:
    """A store of the low `width` bytes of a register (or of a pair, for 8)."""
    return find(Op.ST, dtype=T.B64 if width == 8 else T.B32, space=space, width=width).key


__all__ = ["MOVE", "atomic", "fence", "load", "prefix", "reduce", "shuffle", "store", "vector"]
