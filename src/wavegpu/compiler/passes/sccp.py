"""Sparse conditional constant propagation (Wegman-Zadeck): constants through SSA values and
executable edges; constant branches become jumps and unreachable blocks disappear.

Folding uses the ISA's own value semantics (isa.semantics), so it agrees with the emulator.
"""

from __future__ import annotations

import numpy as np

from ...isa.semantics import SEMANTICS
from ..mir.analysis import rpo
from ..mir.edit import const_bits, const_from_bits, replace_uses
from ..mir.ir import Block, Br, CondBr, Const, Function, Inst, Operand, Phi, Ret, Value
from ..rowmap import row_for

TOP = object()
BOTTOM = object()


def fold(i: Inst, args: list[Const]) -> Const | None:
    """The constant result of a pure instruction on constant operands, if the ISA defines it."""
    if i.dst is None or not i.pure:
        return None
    t = i.dst.type
    op = i.op
    if op == "select":
        return args[1] if args[0].value else args[2]
    if op in ("cmp.eq", "cmp.ne") and args[0].type.kind == "bool":
        eq = bool(args[0].value) == bool(args[1].value)
        return Const(eq if op == "cmp.eq" else not eq, t)
    if op in ("floordiv", "floormod"):
        x, y = int(args[0].value), int(args[1].value)
        if y == 0 or (x == -(2**31) and y == -1):
            return None  # left to the run-time sequence and its division-by-zero rules
        return Const(x // y if op == "floordiv" else x % y, t)
    if op == "neg" and t.name == "u32":
        return Const((-int(args[0].value)) & 0xFFFFFFFF, t)
    key = row_for(op, t, [a.type for a in args])
    if key is None or key not in SEMANTICS:
        return None
    try:
        with np.errstate(all="ignore"):  # inf * 0, overflow, sqrt(-1): the defined result, silently
            bits = SEMANTICS[key](*[const_bits(a) for a in args])
    except (ValueError, TypeError, OverflowError, ZeroDivisionError):
        return None
    return const_from_bits(bits, t)


def run(fn: Function) -> bool:
    value: dict[int, object] = {}
    executable: set[tuple[Block, Block]] = set()
    reached: set[Block] = set()
    users: dict[int, list[tuple[Block, Inst | Phi | None]]] = {}
    for b in fn.blocks:
        for phi in b.phis:
            for _, v in phi.incoming:
                if isinstance(v, Value):
                    users.setdefault(v.id, []).append((b, phi))
        for i in b.insts:
            for a in i.args:
                if isinstance(a, Value):
                    users.setdefault(a.id, []).append((b, i))
        if isinstance(b.term, CondBr) and isinstance(b.term.cond, Value):
            users.setdefault(b.term.cond.id, []).append((b, None))
    for p in fn.params:
        value[p.value.id] = BOTTOM

    def get(o: Operand) -> object:
        if isinstance(o, Const):
            return o
        return value.get(o.id, TOP)

    def meet(a: object, b: object) -> object:
        if a is TOP:
            return b
        if b is TOP:
            return a
        if a is BOTTOM or b is BOTTOM:
            return BOTTOM
        assert isinstance(a, Const) and isinstance(b, Const)
        return a if (a.value == b.value and repr(a.value) == repr(b.value)) else BOTTOM

    flow: list[tuple[Block | None, Block]] = [(None, fn.entry)]
    ssa: list[tuple[Block, Inst | Phi | None]] = []

    def set_value(v: Value, new: object) -> None:
        old = value.get(v.id, TOP)
        if old is not new and not (
            isinstance(old, Const) and isinstance(new, Const) and old == new and repr(old.value) == repr(new.value)
        ):
            value[v.id] = new
            ssa.extend(users.get(v.id, []))

    def visit_phi(b: Block, phi: Phi) -> None:
        acc: object = TOP
        for blk, v in phi.incoming:
            if (blk, b) in executable:
                acc = meet(acc, get(v))
        set_value(phi.dst, acc)

    def visit_inst(i: Inst) -> None:
        if i.dst is None:
            return
        if not i.pure:
            set_value(i.dst, BOTTOM)
            return
        vals = [get(a) for a in i.args]
        if any(v is BOTTOM for v in vals):
            set_value(i.dst, BOTTOM)
        elif any(v is TOP for v in vals):
            return
        else:
            consts = [v for v in vals if isinstance(v, Const)]  # neither TOP nor BOTTOM: constants
            r = fold(i, consts)
            set_value(i.dst, r if r is not None else BOTTOM)

    def visit_term(b: Block) -> None:
        t = b.term
        if isinstance(t, Br):
            flow.append((b, t.target))
        elif isinstance(t, CondBr):
            c = get(t.cond)
            if c is TOP:
                return
            if isinstance(c, Const):
                flow.append((b, t.then if c.value else t.other))
            else:
                flow.append((b, t.then))
                flow.append((b, t.other))

    while flow or ssa:
        while flow:
            src, dst = flow.pop()
            if src is not None:
                if (src, dst) in executable:
                    continue
                executable.add((src, dst))
            for phi in dst.phis:
                visit_phi(dst, phi)
            if dst not in reached:
                reached.add(dst)
                for i in dst.insts:
                    visit_inst(i)
                visit_term(dst)
        while ssa:
            b, x = ssa.pop()
            if b not in reached:
                continue
            if isinstance(x, Phi):
                visit_phi(b, x)
            elif isinstance(x, Inst):
                visit_inst(x)
            else:
                visit_term(b)
    # rewrite
    changed = False
    mapping: dict[Value, Operand] = {}
    for b in fn.blocks:
        for phi in b.phis:
            v = value.get(phi.dst.id)
            if isinstance(v, Const):
                mapping[phi.dst] = v
        for i in b.insts:
            c = value.get(i.dst.id) if i.dst is not None else None
            if i.dst is not None and isinstance(c, Const):
                mapping[i.dst] = c
    if mapping:
        changed = True
        replace_uses(fn, mapping)
        for b in fn.blocks:
            b.phis = [p for p in b.phis if p.dst not in mapping]
            b.insts = [i for i in b.insts if i.dst is None or i.dst not in mapping or not i.pure]
    for b in fn.blocks:
        t = b.term
        if isinstance(t, CondBr) and isinstance(t.cond, Const):
            b.term = Br(t.then if t.cond.value else t.other)
            changed = True
    live = set(rpo(fn.entry, lambda b: b.succs))
    if len(live) != len(fn.blocks):
        changed = True
        fn.blocks = [b for b in fn.blocks if b in live]
    for b in fn.blocks:
        for phi in b.phis:
            preds = fn.preds()[b]
            phi.incoming = [(blk, v) for blk, v in phi.incoming if blk in preds]
    return changed


__all__ = ["Ret", "fold", "run"]
