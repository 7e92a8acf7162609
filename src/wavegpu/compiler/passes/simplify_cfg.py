"""CFG simplification: drop unreachable blocks, fold branches whose targets agree, bypass empty
forwarding blocks, merge a block into its only predecessor, and remove trivial phis."""

from __future__ import annotations

from ..mir.analysis import rpo
from ..mir.edit import replace_uses, retarget
from ..mir.ir import Br, CondBr, Function, Operand, Value


def run(fn: Function) -> bool:
    changed = False
    progress = True
    while progress:
        progress = False
        live = set(rpo(fn.entry, lambda b: b.succs))
        if len(live) != len(fn.blocks):
            fn.blocks = [b for b in fn.blocks if b in live]
            progress = True
        preds = fn.preds()
        for b in fn.blocks:
            for phi in b.phis:
                phi.incoming = [(p, v) for p, v in phi.incoming if p in preds[b]]
        # trivial phis
        mapping: dict[Value, Operand] = {}
        for b in fn.blocks:
            keep = []
            for phi in b.phis:
                vals = {repr(v) for _, v in phi.incoming if v is not phi.dst}
                others = [v for _, v in phi.incoming if v is not phi.dst]
                if len(vals) == 1:
                    mapping[phi.dst] = others[0]
                else:
                    keep.append(phi)
            b.phis = keep
        if mapping:
            replace_uses(fn, mapping)
            progress = True
        for b in fn.blocks:
            t = b.term
            if isinstance(t, CondBr) and t.then is t.other:
                b.term = Br(t.then)
                progress = True
        # bypass empty blocks: preds jump straight to the target (when phis allow it)
        preds = fn.preds()
        for b in fn.blocks:
            if b is fn.entry or b.insts or b.phis or not isinstance(b.term, Br):
                continue
            target = b.term.target
            if target is b:
                continue
            ps = preds[b]
            tp = preds[target]
            if target.phis and any(p in tp for p in ps):
                continue  # the phi would need two values from one predecessor
            for p in ps:
                retarget(p, b, target)
            for phi in target.phis:
                v = next(v for blk, v in phi.incoming if blk is b)  # the verifier: b is a predecessor
                phi.incoming = [(blk, x) for blk, x in phi.incoming if blk is not b] + [(p, v) for p in ps]
            if ps:
                progress = True
                break
        if progress:
            changed = True
            continue
        # merge a block into its only predecessor that jumps to it
        preds = fn.preds()
        for b in fn.blocks:
            ps = preds[b]
            if b is fn.entry or len(ps) != 1:
                continue
            p = ps[0]
            if p is b or not isinstance(p.term, Br) or p.term.target is not b:
                continue
            repl = {phi.dst: phi.incoming[0][1] for phi in b.phis}
            p.insts.extend(b.insts)
            p.term = b.term
            for s in b.succs:
                for phi in s.phis:
                    phi.incoming = [(p if blk is b else blk, v) for blk, v in phi.incoming]
            fn.blocks.remove(b)
            replace_uses(fn, repl)
            progress = True
            break
        changed |= progress
    return changed
