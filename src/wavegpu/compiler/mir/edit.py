"""MIR editing helpers shared by the passes: use replacement, constant conversion."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..types import ScalarType, float_bits
from .ir import Block, Br, CondBr, Const, Function, Inst, Operand, Value


class Builder:
    """New instructions that stand where `at` stood, with its source span (in `out`)."""

    def __init__(self, fn: Function, at: Inst):
        self.fn, self.at = fn, at
        self.out: list[Inst] = []

    def op(self, name: str, args: list[Operand], t: ScalarType) -> Value:
        v = self.fn.new_value(t)
        self.out.append(Inst(name, v, args, None, self.at.span))
        return v


def expand(fn: Function, rewrite: Callable[[Function, Inst], tuple[list[Inst], Operand] | None]) -> bool:
    """Each instruction for which rewrite gives (instructions, result) is replaced by those
    instructions, and its destination's uses read result. True when anything changed."""
    changed = False
    mapping: dict[Value, Operand] = {}
    for blk in fn.blocks:
        out: list[Inst] = []
        for i in blk.insts:
            i.args = [mapping.get(x, x) if isinstance(x, Value) else x for x in i.args]
            r = rewrite(fn, i)
            if r is None:
                out.append(i)
                continue
            new, result = r
            out.extend(new)
            if result is not i.dst:
                assert i.dst is not None
                mapping[i.dst] = result
            changed = True
        blk.insts = out
    replace_uses(fn, mapping)
    return changed


def retarget(b: Block, old: Block, new: Block) -> None:
    """Every edge from b to old goes to new instead."""
    t = b.term
    if isinstance(t, Br) and t.target is old:
        t.target = new
    elif isinstance(t, CondBr):
        if t.then is old:
            t.then = new
        if t.other is old:
            t.other = new


def replace_uses(fn: Function, mapping: dict[Value, Operand]) -> None:
    """Replace every use of the mapped values (following chains of replacements)."""
    if not mapping:
        return

    def res(o: Operand) -> Operand:
        seen = 0
        while isinstance(o, Value) and o in mapping and seen < 10_000:
            o = mapping[o]
            seen += 1
        return o

    for b in fn.blocks:
        for phi in b.phis:
            phi.incoming = [(blk, res(v)) for blk, v in phi.incoming]
        for i in b.insts:
            i.args = [res(a) for a in i.args]
        if isinstance(b.term, CondBr):
            b.term.cond = res(b.term.cond)


def use_counts(fn: Function) -> dict[Value, int]:
    out: dict[Value, int] = {}
    for b in fn.blocks:
        for phi in b.phis:
            for _, v in phi.incoming:
                if isinstance(v, Value):
                    out[v] = out.get(v, 0) + 1
        for i in b.insts:
            for a in i.args:
                if isinstance(a, Value):
                    out[a] = out.get(a, 0) + 1
        if isinstance(b.term, CondBr) and isinstance(b.term.cond, Value):
            out[b.term.cond] = out.get(b.term.cond, 0) + 1
    return out


def const_bits(c: Const) -> np.ndarray:
    """A constant's raw register bits (uint32, or uint64 for f64, bool for bool)."""
    t, v = c.type, c.value
    if t.kind == "bool":
        return np.asarray(bool(v))
    if t.is_float:  # rounded to the type (a value beyond f32's range is inf), f64 in 64 bits
        return np.asarray(float_bits(float(v), t), dtype=np.uint64 if t.name == "f64" else np.uint32)
    return np.asarray(int(v) & 0xFFFFFFFF, dtype=np.uint32)


def const_from_bits(bits: np.ndarray, t: ScalarType) -> Const:
    b = np.asarray(bits)
    if t.kind == "bool":
        return Const(bool(b), t)
    if t.name == "f32":
        return Const(float(np.asarray(int(b) & 0xFFFFFFFF, np.uint32).view(np.float32)), t)
    if t.name == "f64":
        return Const(float(np.asarray(int(b), np.uint64).view(np.float64)), t)
    if t.name == "f16":
        return Const(float(np.asarray(int(b) & 0xFFFF, np.uint16).view(np.float16)), t)
    x = int(b) & 0xFFFFFFFF
    if t.name == "i32" and x >> 31:
        x -= 1 << 32
    return Const(x, t)
