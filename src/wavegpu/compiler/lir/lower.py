"""MIR -> LIR: out of SSA, structured control flow rebuilt, instructions selected.

Out of SSA (Sreedhar's method I): each phi gets a fresh copy variable, written at the end of every
predecessor and read into the phi's value at the start of its block, so no copy is lost and no
swap can clobber. Structure: natural loops become loop/endloop; inside a region (a loop body, or
the function with its loops collapsed) a conditional branch becomes if/else/endif up to the
branch's immediate postdominator; edges to the loop header or its exit become continue/break.
"""

from __future__ import annotations

import struct
from collections.abc import Callable

from ...errors import CompileError, Diagnostic, Span
from ...isa.registers import SREG_BY_NAME
from ...isa.table import BY_KEY
from ...isa.types import Kind
from ...isa.vocabulary import AtomOp, ReduceOp, Scope, ShuffleMode
from ..mir.analysis import Loop, idoms, loops, rpo
from ..mir.ir import Block, Br, CondBr, Const, Function, Inst, Operand, Ret, Value
from ..select import row_for
from ..types import BOOL, F16, F32, F64, U32, ScalarType
from . import rows
from .ir import Address, Imm, LFunction, LInst, LOperand, SpecialReg, VReg

SINK = "<sink>"


class Selector:
    def __init__(self, fn: Function):
        self.fn = fn
        self.out: list[LInst] = []
        self.lf = LFunction(fn.name, self.out, [], 0, fn.local_bytes, fn.workgroup_size, fn.source_file)
        self.vals: dict[int, VReg] = {}
        self.vars: dict[str, VReg] = {name: self.lf.new(cls_of(t), name) for name, t in fn.vars.items()}
        self.phi_copy: dict[int, VReg] = {}
        self.span: Span | None = None
        # parameters arrive pinned in r0..r(k-1); the body uses copies that may move or spill
        for p in fn.params:
            pinned = self.lf.new("r", p.name)
            self.lf.params.append(pinned)
            self.out.append(LInst(rows.MOVE["r"], [self.vreg(p.value), pinned], None, None))

    # -- registers and operands
    def vreg(self, v: Value) -> VReg:
        r = self.vals.get(v.id)
        if r is None:
            r = self.vals[v.id] = self.lf.new(cls_of(v.type))
        return r

    def emit(
        self, key: str, ops: list[LOperand], guard: tuple[VReg, bool] | None = None, buffer: int | None = None
    ) -> None:
        self.out.append(LInst(key, ops, guard, self.span, buffer))

    def materialize(self, c: Const) -> VReg:
        if c.type is BOOL:
            t = self.lf.new("r")
            p = self.lf.new("q")
            self.emit(rows.MOVE["r"], [t, Imm(0)])
            self.emit(rows.SETP_EQ_U32 if c.value else rows.SETP_NE_U32, [p, t, Imm(0)])
            return p
        r = self.lf.new(cls_of(c.type))
        self.emit(rows.MOVE[cls_of(c.type)], [r, imm(c)])
        return r

    def true_pred(self) -> VReg:
        return self.materialize(Const(True, BOOL))

    def operand(self, o: Operand) -> VReg:
        return self.vreg(o) if isinstance(o, Value) else self.materialize(o)

    def row(
        self,
        key: str,
        dst: VReg | None,
        args: list[Operand],
        guard: tuple[VReg, bool] | None = None,
    ) -> None:
        """Emit row `key` with destination and sources, using at most one immediate."""
        spec = BY_KEY[key]
        ops: list[LOperand] = [] if dst is None else [dst]
        srcs = [s for s in spec.operands if s.role.value == "s"]
        used_imm = False
        for a, s in zip(args, srcs):
            if isinstance(a, Const) and s.accepts_immediate and not used_imm and a.type is not BOOL:
                ops.append(imm(a))
                used_imm = True
            else:
                ops.append(self.operand(a))
        self.emit(key, ops, guard)

    # -- instructions
    def inst(self, i: Inst) -> None:
        self.span = i.span
        op = i.op
        d = self.vreg(i.dst) if i.dst is not None else None
        t = i.dst.type if i.dst is not None else None
        a = i.args
        if op == "getvar":
            assert d is not None and i.var is not None
            self.move(d, self.vars[i.var])
            return
        if op == "setvar":
            assert i.var is not None
            self.put(self.vars[i.var], a[0])
            return
        # MIR operations "family.detail" without a single value row go to their family's handler
        family, _, detail = op.partition(".")
        handler = _FAMILIES.get(family)
        if handler is not None:
            handler(self, detail, i)
            return
        assert d is not None and t is not None
        argt = [x.type for x in a]
        if op == "select":
            if t is BOOL:
                c, x, y = (self.operand(v) for v in a)
                nc = self.lf.new("q")
                self.emit(rows.NOT_PRED, [nc, c])
                t1, t2 = self.lf.new("q"), self.lf.new("q")
                self.emit(rows.AND_PRED, [t1, c, x])
                self.emit(rows.AND_PRED, [t2, nc, y])
                self.emit(rows.OR_PRED, [d, t1, t2])
                return
            self.row(rows.SELP_B64 if t is F64 else rows.SELP_B32, d, [a[1], a[2], a[0]])
            return
        if op in ("cmp.eq", "cmp.ne") and argt[0] is BOOL:
            x, y = self.operand(a[0]), self.operand(a[1])
            if op == "cmp.ne":
                self.emit(rows.XOR_PRED, [d, x, y])
            else:
                tmp = self.lf.new("q")
                self.emit(rows.XOR_PRED, [tmp, x, y])
                self.emit(rows.NOT_PRED, [d, tmp])
            return
        if F16 in argt or t is F16:
            key = row_for(op, t, argt)
            if key is None and op != "cvt":
                self.via_f32(op, d, t, a)
                return
        if op == "cvt":
            self.convert(d, t, a[0])
            return
        if op == "abs" and t is U32:
            self.row(rows.MOVE["r"], d, [a[0]])
            return
        if op == "neg" and t is U32:
            self.row(rows.NEG_S32, d, [a[0]])
            return
        key = row_for(op, t, argt)
        if key is None:
            raise CompileError([Diagnostic(f"no instruction for {op} on {', '.join(x.name for x in argt)}", i.span)])
        self.row(key, d, list(a))

    def move(self, d: VReg, s: VReg) -> None:
        self.emit(rows.MOVE[d.cls], [d, s])

    def put(self, d: VReg, v: Operand) -> None:
        """d = v, for a constant (an immediate move) or a value in a register."""
        if not isinstance(v, Const):
            self.move(d, self.vreg(v))
        elif v.type is BOOL:
            self.move(d, self.materialize(v))
        else:
            self.emit(rows.MOVE[cls_of(v.type)], [d, imm(v)])

    def via_f32(self, op: str, d: VReg, t: ScalarType, a: list[Operand]) -> None:
        """f16 operations without an f16 row: compute in f32 and convert back."""
        args32: list[Operand] = []
        for x in a:
            if x.type is F16:
                r = self.lf.new("r")
                self.row(rows.CVT_F16_TO_F32, r, [x])
                args32.append(_Reg(r))  # type: ignore[arg-type]
            else:
                args32.append(x)
        key = row_for(op, F32 if t is F16 else t, [F32 if x.type is F16 else x.type for x in a])
        if key is None:
            raise CompileError([Diagnostic(f"no instruction for {op} on f16", self.span)])
        if t is F16:
            tmp = self.lf.new("r")
            self.emit(key, [tmp, *[self._op(x) for x in args32]])
            self.emit(rows.CVT_F32_TO_F16, [d, tmp])
        else:
            self.emit(key, [d, *[self._op(x) for x in args32]])

    def _op(self, x: Operand | _Reg) -> LOperand:
        if isinstance(x, _Reg):
            return x.r
        return self.operand(x)

    def convert(self, d: VReg, t: ScalarType, x: Operand) -> None:
        st = x.type
        key = row_for("cvt", t, [st])
        if key is not None:
            self.row(key, d, [x])
            return
        # two steps through f32 (f16 <-> integers or f64)
        mid = self.lf.new("r")
        k1 = row_for("cvt", F32, [st])
        k2 = row_for("cvt", t, [F32])
        if k1 is None or k2 is None:
            raise CompileError([Diagnostic(f"cannot convert {st.name} to {t.name}", self.span)])
        self.row(k1, mid, [x])
        self.emit(k2, [d, mid])

    def address(self, a: Operand) -> Address:
        if isinstance(a, Const):
            v = int(a.value) & 0xFFFFFFFF
            return Address(None, v - (1 << 32) if v >> 31 else v)
        return Address(self.vreg(a), 0)

    def sreg(self, name: str, i: Inst) -> None:
        assert i.dst is not None
        self.emit(rows.MOV_SREG, [self.vreg(i.dst), SpecialReg(SREG_BY_NAME["%" + name].id)])

    def load(self, what: str, i: Inst) -> None:
        # the width comes from the array's element type: 8- and 16-bit elements name it in the op
        # (load.global.u8), the other accesses move their value's bits
        space, *elem = what.split(".")
        assert i.dst is not None
        t = i.dst.type
        if elem:
            width, signed = _NARROW[elem[0]]
        else:
            width, signed = (8 if t is F64 else 2 if t is F16 else 4), False
        self.emit(rows.load(space, width, signed), [self.vreg(i.dst), self.address(i.args[0])], buffer=i.buffer)

    def store(self, what: str, i: Inst) -> None:
        space, *elem = what.split(".")
        vt = i.args[1].type
        width = _NARROW[elem[0]][0] if elem else (8 if vt is F64 else 2 if vt is F16 else 4)
        addr = self.address(i.args[0])
        self.emit(rows.store(space, width), [addr, self.operand(i.args[1])], buffer=i.buffer)

    def atomic(self, what: str, i: Inst) -> None:
        aop, space = what.split(".")
        assert i.dst is not None
        d, a = self.vreg(i.dst), i.args
        ops: list[LOperand] = [d, self.address(a[0])] + [self.operand(x) for x in a[1:]]
        self.emit(rows.atomic(AtomOp(aop), space, i.dst.type), ops, buffer=i.buffer)

    def fence(self, scope: str, i: Inst) -> None:
        self.emit(rows.fence(Scope(scope)), [])

    def barrier(self, _: str, i: Inst) -> None:
        self.emit(rows.BARRIER, [])

    def wave(self, what: str, i: Inst) -> None:
        """wave.reduce.OP, wave.prefix.OP, wave.shuffle.MODE, wave.broadcast, ballot, any, all."""
        assert i.dst is not None
        d, a = self.vreg(i.dst), i.args
        kind, _, detail = what.partition(".")
        if kind == "reduce":
            self.emit(rows.reduce(ReduceOp(detail), a[0].type), [d, self.operand(a[0])])
        elif kind == "prefix":
            self.emit(rows.prefix(ReduceOp(detail), a[0].type), [d, self.operand(a[0])])
        elif kind == "shuffle":
            self.row(rows.shuffle(ShuffleMode(detail)), d, [a[0], a[1]])
        elif kind == "broadcast":
            self.row(rows.BROADCAST, d, [a[0], a[1]])
        else:
            key = {"ballot": rows.BALLOT, "any": rows.ANY_LANE, "all": rows.ALL_LANES}[kind]
            self.emit(key, [d, self.operand(a[0])])


# a narrow array element in a MIR memory op (load.global.u8): (bytes, signed)
_NARROW = {"u8": (1, False), "i8": (1, True), "u16": (2, False), "i16": (2, True)}
# MIR operation family (the op's name up to its first dot) -> its handler, given the rest
_FAMILIES: dict[str, Callable[[Selector, str, Inst], None]] = {
    "sreg": Selector.sreg,
    "load": Selector.load,
    "store": Selector.store,
    "atomic": Selector.atomic,
    "wave": Selector.wave,
    "fence": Selector.fence,
    "barrier": Selector.barrier,
}


class _Reg:
    """An already-selected register standing in for an operand."""

    def __init__(self, r: VReg):
        self.r = r
        self.type = F32


def cls_of(t: ScalarType) -> str:
    return "q" if t is BOOL else ("p" if t is F64 else "r")


def imm(c: Const) -> Imm:
    t = c.type
    if t is F32:
        return Imm(struct.unpack("<I", struct.pack("<f", float(c.value)))[0])
    if t is F64:
        return Imm(struct.unpack("<Q", struct.pack("<d", float(c.value)))[0], 64)
    if t is F16:
        import numpy as np

        return Imm(int(np.asarray(float(c.value), np.float16).view(np.uint16)))
    return Imm(int(c.value) & 0xFFFFFFFF)


# ---- structure ---------------------------------------------------------------------------------
class Structurizer:
    def __init__(self, fn: Function, sel: Selector):
        self.fn = fn
        self.sel = sel
        self.idom = idoms(fn.entry, lambda b: b.succs)
        self.loops = loops(fn, self.idom)
        self.extend_break_paths()
        self.loop_of: dict[Block, Loop] = {}
        for lp in sorted(self.loops, key=lambda lp: -len(lp.blocks)):
            for b in lp.blocks:
                self.loop_of[b] = lp  # innermost wins (sorted outermost first)
        self.headers = {lp.header: lp for lp in self.loops}
        self.pdom_cache: dict[int, dict[object, object]] = {}
        self.emitted: set[Block] = set()

    def extend_break_paths(self) -> None:
        """Give each loop the blocks of its break paths (reached only from inside the loop on the way
        to its follow block), so that the follow is the loop's one exit."""
        preds = self.fn.preds()
        for lp in sorted(self.loops, key=lambda lp: -lp.depth):
            outside = {s for b in lp.blocks for s in b.succs if s not in lp.blocks}
            if len(outside) <= 1:
                continue
            hs = [s for s in lp.header.succs if s not in lp.blocks]
            follow = hs[0] if hs else max(outside, key=lambda e: len(preds.get(e, [])))
            work = [e for e in outside if e is not follow]
            while work:
                e = work.pop()
                if e in lp.blocks or e is follow or not all(p in lp.blocks for p in preds.get(e, [])):
                    continue
                anc: Loop | None = lp
                while anc is not None:
                    anc.blocks.add(e)
                    anc = anc.parent
                work.extend(e.succs)
            for x in self.loops:
                x.exits = {s for b in x.blocks for s in b.succs if s not in x.blocks}

    # -- region postdominators
    def region_blocks(self, region: Loop | None) -> set[Block]:
        return set(self.fn.blocks) if region is None else region.blocks

    def node(self, b: Block, region: Loop | None) -> object:
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

    def graph(self, region: Loop | None) -> tuple[dict[object, list[object]], dict[object, int]]:
        """The region's collapsed graph (nested loops as single nodes) and reverse postorder."""
        key = id(region)
        if key not in self.pdom_cache:
            entry = self.fn.entry if region is None else region.header
            succ: dict[object, list[object]] = {}
            work: list[object] = [entry]
            while work:
                n = work.pop()
                if n in succ or n == SINK:
                    continue
                outs = list(n.exits) if isinstance(n, Loop) else n.succs  # type: ignore[attr-defined]
                succ[n] = [SINK if (region is not None and o is region.header) else self.node(o, region) for o in outs]
                work.extend(succ[n])
            order = rpo(entry, lambda n: [s for s in succ.get(n, []) if s != SINK])  # type: ignore[arg-type]
            self.pdom_cache[key] = (succ, {n: i for i, n in enumerate(order)})  # type: ignore[assignment]
        return self.pdom_cache[key]  # type: ignore[return-value]

    def merge(self, b: Block, x: Block, y: Block, region: Loop | None) -> Block | None:
        """Where the arms of the branch at b meet again: the first node in reverse postorder that
        both reach (arms that end in return, break or continue reach none)."""
        succ, order = self.graph(region)

        def reach(start: Block) -> set[object]:
            n0 = self.node(start, region)
            seen: set[object] = set()
            work = [n0]
            while work:
                n = work.pop()
                if n == SINK or n in seen or n not in succ:
                    continue
                seen.add(n)
                work.extend(succ[n])
            return seen

        common = reach(x) & reach(y)
        common.discard(self.node(b, region))
        if not common:
            return None
        m = min(common, key=lambda n: order.get(n, 1 << 30))
        return m.header if isinstance(m, Loop) else m  # type: ignore[return-value]

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

    def seq(self, b: Block | None, region: Loop | None, stop: Block | None, tail: bool) -> None:
        sel = self.sel
        while b is not None and b is not stop:
            if region is not None and b is region.header and b in self.emitted:
                if not tail:  # the arms met again at the loop's start: the next iteration
                    self.jump("cont", None)
                return
            lp = self.headers.get(b)
            if lp is not None and lp is not region:
                sel.emit(rows.LOOP, [])
                self.seq(b, lp, None, True)
                sel.emit(rows.ENDLOOP, [])
                exits = [e for e in lp.exits]
                if len(exits) > 1:
                    raise CompileError([Diagnostic(f"loop at {b.name} has several exits")])
                b = exits[0] if exits else None
                continue
            if b in self.emitted:
                raise CompileError([Diagnostic(f"internal error: block {b.name} reached twice while structuring")])
            self.emitted.add(b)
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
            m = self.merge(b, x, y, region)
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
        sel = self.sel
        for phi in b.phis:
            cp = sel.phi_copy.setdefault(phi.dst.id, sel.lf.new(cls_of(phi.dst.type)))
            sel.move(sel.vreg(phi.dst), cp)
        for i in b.insts:
            sel.inst(i)
        for s in b.succs:
            for phi in s.phis:
                cp = sel.phi_copy.setdefault(phi.dst.id, sel.lf.new(cls_of(phi.dst.type)))
                sel.put(cp, next(v for blk, v in phi.incoming if blk is b))


def lower(fn: Function) -> LFunction:
    sel = Selector(fn)
    Structurizer(fn, sel).run()
    _check_operand_kinds(sel.lf)
    return sel.lf


def _check_operand_kinds(lf: LFunction) -> None:
    for i in lf.insts:
        spec = i.spec
        if len(i.operands) != len(spec.operands):
            raise CompileError([Diagnostic(f"internal error: {spec.key} got {len(i.operands)} operands", i.span)])
        for o, s in zip(i.operands, spec.operands):
            want = {Kind.REG: "r", Kind.PAIR: "p", Kind.PRED: "q"}.get(s.kind)
            if isinstance(o, VReg) and want is not None and o.cls != want:
                raise CompileError(
                    [
                        Diagnostic(
                            f"internal error: {spec.key} operand class {o.cls}, expected {want}",
                            i.span,
                        )
                    ]
                )


__all__ = ["U32", "lower"]
