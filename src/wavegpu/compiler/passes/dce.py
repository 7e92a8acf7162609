"""Dead code elimination: keep what effects, terminators and kept values use; delete the rest."""

from __future__ import annotations

from ..mir.ir import CondBr, Function, Inst, Phi, Value


def run(fn: Function) -> bool:
    live: set[int] = set()
    work: list[Value] = []
    defs: dict[int, Inst | Phi] = {}
    for b in fn.blocks:
        for phi in b.phis:
            defs[phi.dst.id] = phi
        for i in b.insts:
            if i.dst is not None:
                defs[i.dst.id] = i

    def mark(v: object) -> None:
        if isinstance(v, Value) and v.id not in live:
            live.add(v.id)
            work.append(v)

    for b in fn.blocks:
        for i in b.insts:
            if i.has_effects:
                for a in i.args:
                    mark(a)
        if isinstance(b.term, CondBr):
            mark(b.term.cond)
    while work:
        v = work.pop()
        d = defs.get(v.id)
        if isinstance(d, Phi):
            for _, x in d.incoming:
                mark(x)
        elif isinstance(d, Inst):
            for a in d.args:
                mark(a)
    changed = False
    for b in fn.blocks:
        keep = [p for p in b.phis if p.dst.id in live]
        insts = [i for i in b.insts if i.has_effects or (i.dst is not None and i.dst.id in live)]
        if len(keep) != len(b.phis) or len(insts) != len(b.insts):
            changed = True
        b.phis, b.insts = keep, insts
    return changed
