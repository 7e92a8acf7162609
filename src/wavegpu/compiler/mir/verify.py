"""The MIR verifier: SSA form, dominance of uses, terminators, phi shape, and every instruction
against MIR's op table (`mir/ops.py`: known op, operand count, operand and result types)."""

from __future__ import annotations

from ...errors import CompileError, Diagnostic
from .analysis import dominates, idoms
from .ir import Block, CondBr, Function, Inst, Value
from .ops import LOAD_STORE_ATOMIC, OPS, check


def verify(fn: Function, stage: str = "") -> None:
    errs: list[str] = []
    idom = idoms(fn.entry, lambda b: b.succs)
    preds = fn.preds()
    defined: dict[int, tuple[Block, int]] = {}
    for p in fn.params:
        defined[p.value.id] = (fn.entry, -1)
    names = set()
    for b in fn.blocks:
        if b.name in names:
            errs.append(f"block {b.name} defined twice")
        names.add(b.name)
        if b.term is None:
            errs.append(f"{b.name} has no terminator")
        for s in b.succs:
            if s not in fn.blocks:
                errs.append(f"{b.name} branches to a block outside the function")
        for i, phi in enumerate(b.phis):
            if phi.dst.id in defined:
                errs.append(f"%{phi.dst.id} defined twice")
            defined[phi.dst.id] = (b, -2)
            inc = [blk for blk, _ in phi.incoming]
            if b in idom and sorted(map(id, inc)) != sorted(map(id, [p for p in preds.get(b, []) if p in idom])):
                errs.append(
                    f"phi %{phi.dst.id} in {b.name}: incoming blocks {[x.name for x in inc]} are not the "
                    f"predecessors {[p.name for p in preds.get(b, [])]}"
                )
            del i
        for j, ins in enumerate(b.insts):
            if ins.dst is not None:
                if ins.dst.id in defined:
                    errs.append(f"%{ins.dst.id} defined twice")
                defined[ins.dst.id] = (b, j)
            if ins.op in ("getvar", "setvar") and ins.var not in fn.vars:
                errs.append(f"{b.name}: unknown variable {ins.var}")
            if ins.dst is not None and ins.dst.type.narrow:
                errs.append(f"%{ins.dst.id} is {ins.dst.type.name}, an array element type only")
            _check_op(errs, fn, b, ins)
            if ins.buffer is not None:
                spec = OPS.get(ins.op)
                if spec is None or spec.sig not in LOAD_STORE_ATOMIC or spec.space != "global":
                    errs.append(f"{b.name}: {ins.op} names a buffer but is no global access")
                elif not 0 <= ins.buffer < len(fn.params) or fn.params[ins.buffer].kind != "buffer":
                    errs.append(f"{b.name}: {ins.op} names parameter {ins.buffer}, which is no buffer")
    for b in fn.blocks:
        if b not in idom:
            continue
        for j, ins in enumerate(b.insts):
            for a in ins.args:
                if isinstance(a, Value):
                    _check_use(errs, idom, defined, a, b, j, f"{b.name}: {ins.op}")
        t = b.term
        if isinstance(t, CondBr):
            if isinstance(t.cond, Value):
                _check_use(errs, idom, defined, t.cond, b, len(b.insts), f"{b.name}: condbr")
            if t.cond.type.name != "bool":
                errs.append(f"{b.name}: condbr on {t.cond.type.name}, not bool")
        for phi in b.phis:
            for blk, v in phi.incoming:
                if isinstance(v, Value) and blk in idom:
                    _check_use(
                        errs,
                        idom,
                        defined,
                        v,
                        blk,
                        len(blk.insts),
                        f"{b.name}: phi from {blk.name}",
                    )
                if v.type != phi.dst.type:
                    errs.append(f"phi %{phi.dst.id}: incoming {v} is {v.type.name}, not {phi.dst.type.name}")
    if errs:
        head = f"MIR verification failed{' after ' + stage if stage else ''} in @{fn.name}"
        raise CompileError([Diagnostic(f"{head}: {e}") for e in errs])


def _check_op(errs: list[str], fn: Function, b: Block, ins: Inst) -> None:
    """The op is in MIR's table and its operand count and types fit its signature."""
    spec = OPS.get(ins.op)
    if spec is None:
        errs.append(f"{b.name}: unknown operation {ins.op!r}")
        return
    var = fn.vars.get(ins.var) if ins.var is not None else None
    dst = ins.dst.type.name if ins.dst is not None else None
    problem = check(spec, dst, [a.type.name for a in ins.args], var.name if var is not None else None)
    if problem is not None:
        errs.append(f"{b.name}: {ins.op} {problem}")


def _check_use(
    errs: list[str],
    idom: dict[Block, Block | None],
    defined: dict[int, tuple[Block, int]],
    v: Value,
    b: Block,
    pos: int,
    where: str,
) -> None:
    d = defined.get(v.id)
    if d is None:
        errs.append(f"{where}: %{v.id} is never defined")
        return
    db, dpos = d
    if db is b:
        if dpos >= pos:
            errs.append(f"{where}: %{v.id} is used before its definition")
    elif not dominates(idom, db, b):
        errs.append(f"{where}: the definition of %{v.id} in {db.name} does not dominate this use")
