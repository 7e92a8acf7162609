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
from .ir import Imm, VReg
from .selection import Selector
from .ssa import PhiCopies

SINK = "<sink>"
# a node of a region's collapsed graph: a block, a nested loop, or SINK (leaving the region)
Node = Block | Loop | str


def reach(succ: dict[Node, list[Node]], n0: Node) -> set[Node]:
    """The nodes of a collapsed graph reachable from n0 (n0 included; SINK and nodes outside the
    graph are not)."""
    seen: set[Node] = set()
    work = [n0]
    while work:
        n = work.pop()
        if n == SINK or n in seen or n not in succ:
            continue
        seen.add(n)
        work.extend(succ[n])
    return seen


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
        self.reach_cache: dict[tuple[int, Node], set[Node]] = {}
        # jumps past the end of the construct they are in, not yet at their target: (target, the
        # predicate set on the lanes that jumped); the code up to the target is guarded by it
        self.pending: list[tuple[Block, VReg]] = []

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

        rx, ry = reach(succ, self.node(x, region)), reach(succ, self.node(y, region))
        common = rx & ry
        common.discard(self.node(b, region))
        if stop is not None:
            # an arm that reaches the enclosing construct's end stops there; when the arms meet
            # only after it (one arm jumps past it: a break out of nested ifs in a loop that runs
            # once, a continue of an unrolled copy), the construct's end is where they meet, and
            # the arm that jumped past it ends in a return, break or continue of its own
            s = self.node(stop, region)
            if s in rx or s in ry:
                common = {n for n in common if n == s or s in reach(succ, n)}
        if not common:
            return None
        m = min(common, key=lambda n: order.get(n, 1 << 30))
        assert not isinstance(m, str), "SINK is never reached"
        return m.header if isinstance(m, Loop) else m

    def reachable(self, a: Block, region: Loop | None) -> set[Node]:
        """The nodes of region's collapsed graph reachable from a's node (a's included)."""
        succ, _ = self.graph(region)
        n0 = self.node(a, region)
        key = (id(region), n0)
        if key not in self.reach_cache:
            self.reach_cache[key] = reach(succ, n0)
        return self.reach_cache[key]

    def past(self, b: Block, stop: Block | None, region: Loop | None) -> bool:
        """Whether b comes after `stop` (reached from it): a jump from inside the construct that
        ends at stop to b skips the rest of the construct."""
        return stop is not None and b is not stop and self.node(b, region) in self.reachable(stop, region)

    def flag(self, value: bool, pred: VReg, at: int | None = None) -> None:
        """pred = value on the active lanes, emitted at the end or inserted at position `at`."""
        out = self.sel.out
        n = len(out)
        t = self.sel.lf.new("r")
        self.sel.emit(rows.MOVE["r"], [t, Imm(0)])
        self.sel.emit(rows.SETP_EQ_U32 if value else rows.SETP_NE_U32, [pred, t, Imm(0)])
        if at is not None:
            new = out[n:]
            del out[n:]
            out[at:at] = new

    def guarded(
        self, b: Block | None, region: Loop | None, stop: Block | None, tail: bool, mark: int, pos: int
    ) -> Block | None:
        """After a construct (begun at output position `pos`) from which lanes jumped past its
        end (self.pending[mark:]): the code from b on runs only on the lanes that did not jump,
        until a jump's target, where its lanes join again. Returns where to go on (None: this
        sequence is done, the jumps' targets lie after its end `stop`)."""
        while len(self.pending) > mark and b is not None:
            here = [(t, f) for t, f in self.pending[mark:] if t is b]
            if here:  # the lanes that jumped to b join again here; their flag is false before the construct
                for t, f in here:
                    self.pending.remove((t, f))
                    self.flag(False, f, pos)
                continue
            if b is stop:
                return b
            # the next target met on the way (first in reverse postorder), or none before stop
            _, order = self.graph(region)
            ahead = [t for t, _ in self.pending[mark:] if self.node(t, region) in self.reachable(b, region)]
            until = min(ahead, key=lambda t: order.get(self.node(t, region), 1 << 30)) if ahead else None
            if until is not None and stop is not None and self.past(until, stop, region):
                until = None  # past this sequence's end: the caller guards on
            for _, f in list(self.pending[mark:]):
                nf = self.sel.lf.new("q")
                self.sel.emit(rows.NOT_PRED, [nf, f])
                self.sel.emit(rows.IF, [nf])
            depth = len(self.pending) - mark
            self.seq(b, region, until if until is not None else stop, tail if until is None else False)
            for _ in range(depth):
                self.sel.emit(rows.ENDIF, [])
            if until is None:
                return None
            b = until
        return b

    # -- emission
    def run(self) -> None:
        self.seq(self.fn.entry, None, None, True)
        if self.pending:
            where = ", ".join(t.name for t, _ in self.pending)
            raise CompileError([Diagnostic(f"internal error: jumps to {where} never joined while structuring")])

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
        continue; `entry`: b is the header of `region`, its body starts here."""
        sel = self.sel
        while b is not None and b is not stop:
            if region is not None and b is region.header and not entry:
                if not tail:  # the arms met again at the loop's start: the next iteration
                    self.jump("cont", None)
                return
            entry = False
            if self.kind(b, region) == "brk":
                # the arms of a branch met on the way out of the loop: their merge, an empty
                # block that only jumps on (forward), led past the loop's follow to a block of an
                # enclosing loop (its latch, its header); that block is emitted there, not here
                self.jump("brk", None)
                return
            if self.past(b, stop, region):
                # a jump past the end of the construct (a break out of nested ifs in a loop that
                # runs once, an unrolled copy's continue): its lanes are flagged, and the code
                # between the construct's end and b is guarded against them (guarded)
                f = sel.lf.new("q")
                self.flag(True, f)
                self.pending.append((b, f))
                return
            lp = self.headers.get(b)
            if lp is not None and lp is not region:
                sel.emit(rows.LOOP, [])
                self.seq(b, lp, None, True, entry=True)
                sel.emit(rows.ENDLOOP, [])
                exits = [e for e in lp.exits]
                if len(exits) > 1:
                    raise CompileError([Diagnostic(f"loop at {b.name} has several exits")])
                b = exits[0] if exits else None
                if b is not None and self.kind(b, region) == "brk":  # it left the enclosing loop too
                    self.jump("brk", None)
                    return
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
            mark, pos = len(self.pending), len(sel.out)
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
            if len(self.pending) > mark:
                b = self.guarded(b, region, stop, tail, mark, pos)

    def block_body(self, b: Block) -> None:
        self.phis.enter(b)
        self.sel.check_vectors(b.insts)
        for i in b.insts:
            self.sel.inst(i)
        self.phis.leave(b)


__all__ = ["Structurizer"]
