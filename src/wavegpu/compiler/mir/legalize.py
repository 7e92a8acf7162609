"""Legalisation before instruction selection: Python's integer `floordiv` and `floormod` become
truncating div/rem with the sign fix-up (round toward -inf).

The fix-up applies where the remainder is non-zero and its sign differs from the divisor's. A zero
divisor has no sign: there the truncating row's own answer stands, DESIGN section 3's (quotient
all ones, -1; remainder the dividend), as in the C++ and Rust kernels."""

from __future__ import annotations

from ..types import BOOL
from .edit import Builder, expand
from .ir import Const, Function, Inst, Operand


def _floor(fn: Function, i: Inst) -> tuple[list[Inst], Operand] | None:
    if i.op not in ("floordiv", "floormod") or i.dst is None:
        return None
    t = i.dst.type
    x, y = i.args
    b = Builder(fn, i)
    if isinstance(y, Const) and int(y.value) == 0:  # DESIGN's division by zero: no fix-up
        return b.out, b.op("div" if i.op == "floordiv" else "rem", [x, y], t)
    r = b.op("rem", [x, y], t)
    fix = b.op(
        "and",
        [
            b.op("cmp.ne", [r, Const(0, t)], BOOL),
            b.op("cmp.lt", [b.op("xor", [r, y], t), Const(0, t)], BOOL),
        ],
        BOOL,
    )
    if i.op == "floordiv" and not isinstance(y, Const):  # y may be 0: then r ^ y is x, no sign of y
        fix = b.op("and", [fix, b.op("cmp.ne", [y, Const(0, t)], BOOL)], BOOL)
    if i.op == "floordiv":
        q = b.op("div", [x, y], t)
        return b.out, b.op("sub", [q, b.op("select", [fix, Const(1, t), Const(0, t)], t)], t)
    return b.out, b.op("add", [r, b.op("select", [fix, y, Const(0, t)], t)], t)


def legalize(fn: Function) -> bool:
    return expand(fn, _floor)
