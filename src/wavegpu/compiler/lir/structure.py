"""Structurisation: the MIR control-flow graph rebuilt as structured LIR control flow.

Natural loops become loop/endloop; inside a region (a loop body, or the function with its loops
collapsed) a conditional branch becomes if/else/endif up to where its arms meet again; edges to
the loop header or its exit become continue/break. Blocks' bodies are selected in that order.
"""

from __future__ import annotations

from ...errors import CompileError, Diagnostic
from ..mir.analysis import Loop, idoms, loops, rpo
from ..mir.ir import Block, Br, CondBr, Function, Ret
from . import rows
from .ir import VReg
from .selection import Selector
from .ssa import PhiCopies

SINK = "<sink>"
# a node of a region's collapsed graph: a block, a nested loop, or SINK (leaving the region)
Node = Block | Loop | str


class Structurizer:
    def __init__(self, fn: Function, sel: Selector, phis: PhiCopies):
        self.fn = fn
        self.sel = sel
        self.phis = phis
        self.idom = idoms(fn.entry, lambda b: b.succs)
        self.loops = loops(fn, self.idom)
        self.extend_break_paths()
        self.loop_of: dict[Block, Loop] = {}
        for lp in sorted(self.loops, key=lambda lp: -len(lp.blocks)):
            for b in lp.blocks:
                self.loop_of[b] = lp  # innermost wins (sorted outermost first)
        self.headers = {lp.header: lp for lp in self.loops}
        self.pdom_cache: dict[int, tuple[dict[Node, list[Node]], dict[Node, int]]] = {}

    def extend_break_paths(self) -> None:
        """Give each loop the blocks of its break paths (reached only from inside the loop on the way
        to its follow block), so that the follow is the loop's one exit. A loop on a break path
        (entered only from it) moves inside the loop whose break path it is, whole."""
        preds = self.fn.preds()
        headers = {lp.header: lp for lp in self.loops}
        for lp in sorted(self.loops, key=lambda lp: -lp.depth):
            outside = {s for b in lp.blocks for s in b.succs if s not in lp.blocks}
            if len(outside) <= 1:
                continue
            hs = [s for s in lp.header.succs if s not in lp.blocks]
            follow = hs[0] if hs else max(outside, key=lambda e: len(preds.get(e, [])))
            work = [e for e in outside if e is not follow]
            while work:
                e = work.pop()
                if e in lp.blocks or e is follow:
                    continue
                inner = headers.get(e)
                part = inner.blocks if inner is not None else {e}
                if not all(p in lp.blocks or p in part for p in preds.get(e, [])):
                    continue
                if inner is not None:  # it was a sibling of lp or of one of lp's loops: now inside lp
                    if inner.parent is not None:
                        inner.parent.children.remove(inner)
                    inner.parent = lp
                    lp.children.append(inner)
                anc: Loop | None = lp
                while anc is not None:
                    anc.blocks.update(part)
                    anc = anc.parent
                work.extend(inner.exits if inner is not None else e.succs)
            for x in self.loops:
                x.exits = {s for b in x.blocks for s in b.succs if s not in x.blocks}

    # -- region postdominators
    def region_blocks(self, region: Loop | None) -> set[Block]:
        return set(self.fn.blocks) if region is None else region.blocks

    def node(self, b: Block, region: Loop | None) -> Node:
        """b as a node of region's collapsed graph: a block, a direct nested loop, or SINK."""
        blocks = self.region_blocks(region)
        if b not in blocks or (region is not None and b is region.header):
            return SINK
        lp = self.loop_of.get(b)
        while lp is not None and lp.parent is not region:
            lp = lp.parent
        if lp is not None and lp is not region:
            return lp
        return b

    def graph(self, region: Loop | None) -> tuple[dict[Node, list[Node]], dict[Node, int]]:
        """The region's collapsed graph (nested loops as single nodes) and reverse postorder."""
        key = id(region)
        if key not in self.pdom_cache:
            entry = self.fn.entry if region is None else region.header
            succ: dict[Node, list[Node]] = {}
            work: list[Node] = [entry]
            while work:
                n = work.pop()
                if n in succ or isinstance(n, str):
                    continue
                outs = list(n.exits) if isinstance(n, Loop) else n.succs
                succ[n] = [SINK if (region is not None and o is region.header) else self.node(o, region) for o in outs]
                work.extend(succ[n])
            order = rpo(entry, lambda n: [s for s in succ.get(n, []) if s != SINK])
            self.pdom_cache[key] = (succ, {n: i for i, n in enumerate(order)})
        return self.pdom_cache[key]

    def merge(self, b: Block, x: Block, y: Block, region: Loop | None, stop: Block | None) -> Block | None:
        """Where the arms of the branch at b meet again: the first node in reverse postorder that
        both reach (arms that end in return, break or continue reach none), and not past `stop`,
        the end of the construct the branch is in, where an arm reaches it."""
        succ, order = self.graph(region)

        def reach(start: Block) -> set[Node]:
            return reach_node(self.node(start, region))

        def reach_node(n0: Node) -> set[Node]:
            seen: set[Node] = set()
            work = [n0]
            while work:
                n = work.pop()
                if n == SINK or n in seen or n not in succ:
                    continue
                seen.add(n)
                work.extend(succ[n])
            return seen

        rx, ry = reach(x), reach(y)
        common = rx & ry
        common.discard(self.node(b, region))
        if stop is not None:
            # an arm that reaches the enclosing construct's end stops there; when the arms meet
            # only after it (one arm jumps past it: a break out of nested ifs in a loop that runs
            # once, a continue of an unrolled copy), the construct's end is where they meet, and
            # the arm that jumped past it ends in a return, break or continue of its own
            s = self.node(stop, region)
            if s in rx or s in ry:
                common = {n for n in common if n == s or s in reach_node(n)}
        if not common:
            return None
        m = min(common, key=lambda n: order.get(n, 1 << 30))
        assert not isinstance(m, str), "SINK is never reached"
        return m.header if isinstance(m, Loop) else m

    # -- emission
    def run(self) -> None:
        self.seq(self.fn.entry, None, None, True)

    def forward(self, b: Block) -> Block:
        """Skip empty blocks that only jump on (so `if c: break` becomes `break c`)."""
        seen = 0
        while (
            not b.insts
            and not b.phis
            and isinstance(b.term, Br)
            and b not in self.headers
            and not b.term.target.phis
            and seen < 100
        ):
            b = b.term.target
            seen += 1
        return b

    def kind(self, b: Block, region: Loop | None) -> str:
        if region is not None:
            if b is region.header:
                return "cont"
            if b not in region.blocks:
                return "brk"
        return "norm"

    def jump(self, what: str, pred: VReg | None) -> None:
        self.sel.emit(rows.BREAK if what == "brk" else rows.CONTINUE, [pred or self.sel.true_pred()])

    def seq(self, b: Block | None, region: Loop | None, stop: Block | None, tail: bool, entry: bool = False) -> None:
        """Emit from b until `stop` (the end of the enclosing construct) or a return, break or
        continue; `entry`: b is the header of `region`, its body starts here. A block after the
        end of the construct, reached by an arm that jumped past it, is emitted again on that
        arm's path (which then ends in a return, break or continue of its own)."""
        sel = self.sel
        while b is not None and b is not stop:
            if region is not None and b is region.header and not entry:
                if not tail:  # the arms met again at the loop's start: the next iteration
                    self.jump("cont", None)
                return
            entry = False
            lp = self.headers.get(b)
            if lp is not None and lp is not region:
                sel.emit(rows.LOOP, [])
                self.seq(b, lp, None, True, entry=True)
                sel.emit(rows.ENDLOOP, [])
                exits = [e for e in lp.exits]
                if len(exits) > 1:
                    raise CompileError([Diagnostic(f"loop at {b.name} has several exits")])
                b = exits[0] if exits else None
                continue
            self.block_body(b)
            t = b.term
            if isinstance(t, Ret) or t is None:
                sel.emit(rows.RET, [])
                return
            if isinstance(t, Br):
                target = self.forward(t.target) if not t.target.phis else t.target
                if target is stop:
                    return
                k = self.kind(target, region)
                if k == "cont":
                    if not tail:
                        self.jump("cont", None)
                    return
                if k == "brk":
                    self.jump("brk", None)
                    return
                b = target
                continue
            assert isinstance(t, CondBr)
            c = sel.operand(t.cond)
            x = self.forward(t.then) if not t.then.phis else t.then
            y = self.forward(t.other) if not t.other.phis else t.other
            kx, ky = self.kind(x, region), self.kind(y, region)
            if kx != "norm" or ky != "norm":
                if kx != "norm":
                    self.jump(kx, c)
                if ky != "norm":
                    nc = sel.lf.new("q")
                    sel.emit(rows.NOT_PRED, [nc, c])
                    self.jump(ky, nc)
                if kx != "norm" and ky != "norm":
                    return
                b = y if kx != "norm" else x
                continue
            m = self.merge(b, x, y, region, stop)
            if m is not None:
                m = self.forward(m) if not m.phis else m
            inner = m if m is not None else stop
            if x is m:
                nc = sel.lf.new("q")
                sel.emit(rows.NOT_PRED, [nc, c])
                sel.emit(rows.IF, [nc])
                self.seq(y, region, inner, False)
                sel.emit(rows.ENDIF, [])
            else:
                sel.emit(rows.IF, [c])
                self.seq(x, region, inner, False)
                if y is not m and y is not inner:
                    sel.emit(rows.ELSE, [])
                    self.seq(y, region, inner, False)
                sel.emit(rows.ENDIF, [])
            b = m

    def block_body(self, b: Block) -> None:
        self.phis.enter(b)
        self.sel.check_vectors(b.insts)
        for i in b.insts:
            self.sel.inst(i)
        self.phis.leave(b)


__all__ = ["Structurizer"]
