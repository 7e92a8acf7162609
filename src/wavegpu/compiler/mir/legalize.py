"""Legalisation before instruction selection: Python's integer `floordiv` and `floormod` become
truncating div/rem with the sign fix-up (round toward -inf)."""

from __future__ import annotations

from ..types import BOOL
from .edit import replace_uses
from .ir import Const, Function, Inst, Operand, Value


def legalize(fn: Function) -> bool:
    changed = False
    mapping: dict[Value, Operand] = {}
    for b in fn.blocks:
        out: list[Inst] = []
        for i in b.insts:
            i.args = [mapping.get(a, a) if isinstance(a, Value) else a for a in i.args]
            if i.op not in ("floordiv", "floormod") or i.dst is None:
                out.append(i)
                continue
            t = i.dst.type
            x, y = i.args

            def op(name: str, args: list[Operand], ty: object = t, out: list[Inst] = out, at: Inst = i) -> Value:
                v = fn.new_value(ty)  # type: ignore[arg-type]
                out.append(Inst(name, v, args, None, at.span))
                return v

            r = op("rem", [x, y])
            fix = op(
                "and",
                [
                    op("cmp.ne", [r, Const(0, t)], BOOL),
                    op("cmp.lt", [op("xor", [r, y]), Const(0, t)], BOOL),
                ],
                BOOL,
            )
            if i.op == "floordiv":
                q = op("div", [x, y])
                res = op("sub", [q, op("select", [fix, Const(1, t), Const(0, t)])])
            else:
                res = op("add", [r, op("select", [fix, y, Const(0, t)])])
            mapping[i.dst] = res
            changed = True
        b.insts = out
    replace_uses(fn, mapping)
    return changed
