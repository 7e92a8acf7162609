"""The MIR verifier: SSA form, dominance of uses, terminators, phi shape, types."""

from __future__ import annotations

from ...errors import CompileError, Diagnostic
from ..types import NARROW
from .analysis import dominates, idoms
from .ir import Block, CondBr, Function, Inst, Value


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
            _check_narrow(errs, b, ins)
            if ins.buffer is not None:
                parts = ins.op.split(".")
                if parts[-1] in NARROW:
                    parts.pop()
                if not ins.op.startswith(("load.global", "store.global", "atomic.")) or parts[-1] != "global":
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


def _check_narrow(errs: list[str], b: Block, ins: Inst) -> None:
    """An access to an 8- or 16-bit element (`load.global.u8`) reads and writes i32 or u32 values."""
    parts = ins.op.split(".")
    if parts[-1] not in NARROW:
        return
    elem = NARROW[parts[-1]]
    if parts[0] not in ("load", "store") or len(parts) != 3 or parts[1] not in ("global", "local"):
        errs.append(f"{b.name}: {ins.op}: only loads and stores take an element type")
        return
    if parts[0] == "load":
        if ins.dst is None or ins.dst.type is not elem.value_type:
            errs.append(f"{b.name}: {ins.op} yields {elem.value_type.name}")
    elif len(ins.args) != 2 or ins.args[1].type is not elem.value_type:
        errs.append(f"{b.name}: {ins.op} stores an {elem.value_type.name} value")


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
