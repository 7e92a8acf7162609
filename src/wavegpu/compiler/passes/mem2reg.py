"""mem2reg: promote variable slots (setvar/getvar) to SSA values, with phis at iterated dominance
frontiers (minimal SSA; dead phis are left to DCE). A slot read before any write reads 0, as
registers start at zero."""

from __future__ import annotations

from ..mir.analysis import dominator_tree, frontiers, idoms
from ..mir.edit import replace_uses
from ..mir.ir import Block, Const, Function, Operand, Phi, Value


def run(fn: Function) -> bool:
    if not fn.vars:
        return False
    idom = idoms(fn.entry, lambda b: b.succs)
    df = frontiers(fn, idom)
    preds = fn.preds()
    children = dominator_tree(idom)  # the walk from the entry meets only reachable blocks
    phi_var: dict[int, str] = {}
    order = {b: k for k, b in enumerate(fn.blocks)}
    # the blocks that write each variable, in block order: one walk over the instructions, so the
    # pass is linear in variables plus instructions (a per-thread array in registers has a
    # variable per element, thousands of them: issue 24)
    writers: dict[str, list[Block]] = {var: [] for var in fn.vars}
    for b in fn.blocks:
        for i in b.insts:
            if i.op == "setvar" and i.var is not None:
                w = writers.setdefault(i.var, [])
                if not w or w[-1] is not b:
                    w.append(b)
    for var, t in fn.vars.items():
        defs = writers[var]
        defset = set(defs)
        work = list(reversed(defs))
        placed: set[Block] = set()
        while work:
            b = work.pop()
            for f in sorted(df.get(b, ()), key=order.__getitem__):  # deterministic phi numbering
                if f not in placed:
                    placed.add(f)
                    phi = Phi(fn.new_value(t), [])
                    f.phis.append(phi)
                    phi_var[phi.dst.id] = var
                    if f not in defset:
                        work.append(f)
    stacks: dict[str, list[Operand]] = {
        v: [Const(0.0 if t.is_float else (False if t.kind == "bool" else 0), t)] for v, t in fn.vars.items()
    }
    mapping: dict[Value, Operand] = {}

    def rename(b: Block) -> None:
        pushed: list[str] = []
        for phi in b.phis:
            var = phi_var.get(phi.dst.id)
            if var is not None:
                stacks[var].append(phi.dst)
                pushed.append(var)
        keep = []
        for i in b.insts:
            if i.op == "getvar":
                assert i.dst is not None and i.var is not None
                mapping[i.dst] = stacks[i.var][-1]
                continue
            if i.op == "setvar":
                assert i.var is not None
                a = i.args[0]
                stacks[i.var].append(mapping.get(a, a) if isinstance(a, Value) else a)
                pushed.append(i.var)
                continue
            keep.append(i)
        b.insts = keep
        for s in b.succs:
            for phi in s.phis:
                var = phi_var.get(phi.dst.id)
                if var is not None:
                    phi.incoming.append((b, stacks[var][-1]))
        for c in children[b]:
            rename(c)
        for var in pushed:
            stacks[var].pop()

    import sys

    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 10 * len(fn.blocks) + 1000))
    try:
        rename(fn.entry)
    finally:
        sys.setrecursionlimit(old)
    del preds
    replace_uses(fn, mapping)
    fn.vars = {}
    return True
