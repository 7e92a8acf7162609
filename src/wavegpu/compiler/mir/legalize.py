"""Legalisation before instruction selection: Python's integer `floordiv` and `floormod` become
truncating div/rem with the sign fix-up (round toward -inf)."""

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
    r = b.op("rem", [x, y], t)
    fix = b.op(
        "and",
        [
            b.op("cmp.ne", [r, Const(0, t)], BOOL),
            b.op("cmp.lt", [b.op("xor", [r, y], t), Const(0, t)], BOOL),
        ],
        BOOL,
    )
    if i.op == "floordiv":
        q = b.op("div", [x, y], t)
        return b.out, b.op("sub", [q, b.op("select", [fix, Const(1, t), Const(0, t)], t)], t)
    return b.out, b.op("add", [r, b.op("select", [fix, y, Const(0, t)], t)], t)


def legalize(fn: Function) -> bool:
    return expand(fn, _floor)
