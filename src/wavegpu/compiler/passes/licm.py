"""Loop-invariant code motion: pure instructions whose operands come from outside a loop move to
a preheader (created when the header has several outside predecessors, or one that branches
elsewhere too).

Loops are visited innermost first, so a preheader created for an inner loop lies inside every
enclosing loop: it joins their block sets, so that what it defines counts as defined in them
(and may move further out), never as invariant."""

from __future__ import annotations

from ..mir.analysis import Loop, loops
from ..mir.edit import retarget
from ..mir.ir import Block, Br, Function, Phi, Value


def _preheader(fn: Function, lp: Loop) -> Block:
    preds = fn.preds()
    outside = [p for p in preds[lp.header] if p not in lp.blocks]
    if len(outside) == 1 and isinstance(outside[0].term, Br):
        return outside[0]
    ph = Block(f"{lp.header.name}.pre")
    ph.term = Br(lp.header)
    for p in outside:
        retarget(p, lp.header, ph)
    for phi in lp.header.phis:
        inc_out = [(b, v) for b, v in phi.incoming if b in outside]
        inc_in = [(b, v) for b, v in phi.incoming if b not in outside]
        if len({repr(v) for _, v in inc_out}) == 1:
            phi.incoming = [*inc_in, (ph, inc_out[0][1])]
        else:
            nv = fn.new_value(phi.dst.type)
            ph.phis.append(Phi(nv, inc_out))
            phi.incoming = [*inc_in, (ph, nv)]
    fn.blocks.insert(fn.blocks.index(lp.header), ph)
    return ph


def run(fn: Function) -> bool:
    changed = False
    for lp in sorted(loops(fn), key=lambda lp: -lp.depth):  # innermost first
        defined_in = {i.dst.id for b in lp.blocks for i in b.insts if i.dst is not None}
        defined_in |= {p.dst.id for b in lp.blocks for p in b.phis}
        hoist = []
        progress = True
        while progress:
            progress = False
            for b in [x for x in fn.blocks if x in lp.blocks]:
                for i in list(b.insts):
                    if i.dst is None or not i.pure or i.dst.id not in defined_in:
                        continue
                    if all(not isinstance(a, Value) or a.id not in defined_in for a in i.args):
                        b.insts.remove(i)
                        hoist.append(i)
                        defined_in.discard(i.dst.id)
                        progress = True
        if hoist:
            ph = _preheader(fn, lp)
            ph.insts.extend(hoist)
            outer = lp.parent
            while outer is not None:  # the preheader is inside every enclosing loop
                outer.blocks.add(ph)
                outer = outer.parent
            changed = True
    return changed
