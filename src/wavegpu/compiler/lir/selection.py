"""LIR selection: each MIR instruction becomes ISA rows over virtual registers.

Value operations take their row from `compiler/rowmap.py` (`row_for`); the rest (moves, predicate
logic, memory, atomics, wave operations, barriers, fences) from `lir/rows.py`, by vocabulary.
Every other MIR operation goes to the handler of its family in MIR's op table (`mir/ops.py`:
`Family`, `_FAMILIES` here), which reads the op's typed suffix (space, element, `AtomOp`,
`ReduceOp`, `ShuffleMode`, `Scope`, special register) from its `OpSpec`.
"""

from __future__ import annotations

from collections.abc import Callable

from ...errors import CompileError, Diagnostic, Span
from ...isa.registers import SREG_BY_NAME
from ...isa.table import BY_KEY
from ..mir.ir import Const, Function, Inst, Operand, Value
from ..mir.ops import OPS, Family, OpSpec
from ..rowmap import row_for
from ..types import BOOL, F16, F32, F64, NARROW, U32, ScalarType, float_bits
from . import rows
from .ir import Address, Imm, LFunction, LInst, LOperand, Part, SpecialReg, VReg


class Selector:
    def __init__(self, fn: Function, offsets: bool = False):
        self.fn = fn
        self.offsets = offsets
        self.out: list[LInst] = []
        self.lf = LFunction(fn.name, self.out, [], 0, fn.local_bytes, fn.workgroup_size, fn.source_file)
        self.vals: dict[int, VReg] = {}
        self.vars: dict[str, VReg] = {name: self.lf.new(cls_of(t), name) for name, t in fn.vars.items()}
        self.span: Span | None = None
        self.vector_done: set[Inst] = set()  # members of merged accesses already emitted
        # integer adds of a constant: a local access through one reads [x+c] (see `address`)
        self.plus_const: dict[int, tuple[Value, int]] = {}
        for b in fn.blocks:
            for i in b.insts:
                if i.op == "add" and i.dst is not None and i.dst.type.name in ("i32", "u32"):
                    x, c = i.args
                    if isinstance(c, Value) and isinstance(x, Const):
                        x, c = c, x
                    if isinstance(x, Value) and isinstance(c, Const) and not isinstance(c.value, bool):
                        self.plus_const[i.dst.id] = (x, int(c.value) & 0xFFFFFFFF)
        self.folded_address = False  # an address took over an add: lower() drops the unread ones
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
        spec = OPS[op]  # the verifier let no other op through
        if spec.family is Family.GETVAR:
            assert d is not None and i.var is not None
            self.move(d, self.vars[i.var])
            return
        if spec.family is Family.SETVAR:
            assert i.var is not None
            self.put(self.vars[i.var], a[0])
            return
        # the operations without a single value row go to their family's handler
        handler = _FAMILIES.get(spec.family)
        if handler is not None:
            handler(self, spec, i)
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
        args32: list[Operand | _Reg] = []
        for x in a:
            if x.type is F16:
                r = self.lf.new("r")
                self.row(rows.CVT_F16_TO_F32, r, [x])
                args32.append(_Reg(r))
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

    def address(self, a: Operand, space: str | None = None) -> Address:
        """The memory operand of address `a`. A local access whose address is `x + c` (c a
        constant below 2^16) reads `[x+c]`: the same 32-bit sum (WAVE wraps addresses at 2^32),
        without the add when nothing else reads it (every backend folds such an offset into the
        access: AMDGCN's DS offset field, ptxas's). Global accesses keep their add: AMDGCN adds
        a global offset to a 64-bit address, where the 32-bit wrap would be lost."""
        if isinstance(a, Const):
            v = int(a.value) & 0xFFFFFFFF
            return Address(None, v - (1 << 32) if v >> 31 else v)
        if self.offsets and space == "local" and a.id in self.plus_const:
            x, c = self.plus_const[a.id]
            if c < 1 << 16:
                self.folded_address = True
                return Address(self.vreg(x), c)
        return Address(self.vreg(a), 0)

    def sreg(self, spec: OpSpec, i: Inst) -> None:
        assert i.dst is not None and spec.sreg is not None
        self.emit(rows.MOV_SREG, [self.vreg(i.dst), SpecialReg(SREG_BY_NAME[spec.sreg].id)])

    def check_vectors(self, insts: list[Inst]) -> None:
        """Undo the merged accesses of a block whose members no longer stand together in order
        (a pass after vectorize removed or moved one): they are selected one by one."""
        for k, i in enumerate(insts):
            group = i.vector
            if group is not None and i is group.insts[0] and not group.valid_in(insts, k):
                for m in group.insts:
                    m.vector = None
        for i in insts:
            group = i.vector
            if group is not None and not any(x is group.insts[0] for x in insts):
                i.vector = None

    def vector(self, spec: OpSpec, i: Inst) -> bool:
        """A member of a merged access (passes/vectorize.py): the first emits the .v2/.v4 row and
        the moves between its registers and the members' values; the others emit nothing. False
        for an access that is no (longer a) member: it is selected alone."""
        group = i.vector
        if group is None:
            return False
        members: list[Inst] = group.insts
        if i is not members[0]:
            return i in self.vector_done
        n = len(members)
        assert spec.space is not None
        w = self.lf.new(f"x{n}")
        addr = self.address(i.args[0], spec.space)
        key = rows.vector(spec.family.value, spec.space, n)
        if spec.family is Family.LOAD:
            self.emit(key, [w, addr], buffer=i.buffer)
            for k, m in enumerate(members):
                assert m.dst is not None
                self.emit(rows.MOVE["r"], [self.vreg(m.dst), Part(w, k)])
        else:
            for k, m in enumerate(members):
                v = m.args[1]
                self.emit(rows.MOVE["r"], [Part(w, k), imm(v) if isinstance(v, Const) else self.vreg(v)])
            self.emit(key, [addr, w], buffer=i.buffer)
        self.vector_done.update(members[1:])
        return True

    def load(self, spec: OpSpec, i: Inst) -> None:
        if self.vector(spec, i):
            return
        # the width comes from the array's element type: 8- and 16-bit elements name it in the op
        # (load.global.u8), the other accesses move their value's bits
        assert i.dst is not None and spec.space is not None
        t = i.dst.type
        if spec.elem is not None:
            width, signed = NARROW[spec.elem].size, NARROW[spec.elem].signed
        else:
            width, signed = (8 if t is F64 else 2 if t is F16 else 4), False
        load = rows.load(spec.space, width, signed)
        self.emit(load, [self.vreg(i.dst), self.address(i.args[0], spec.space)], buffer=i.buffer)

    def store(self, spec: OpSpec, i: Inst) -> None:
        if self.vector(spec, i):
            return
        assert spec.space is not None
        vt = i.args[1].type
        width = NARROW[spec.elem].size if spec.elem is not None else (8 if vt is F64 else 2 if vt is F16 else 4)
        addr = self.address(i.args[0], spec.space)
        self.emit(rows.store(spec.space, width), [addr, self.operand(i.args[1])], buffer=i.buffer)

    def atomic(self, spec: OpSpec, i: Inst) -> None:
        assert i.dst is not None and spec.atom is not None and spec.space is not None
        d, a = self.vreg(i.dst), i.args
        ops: list[LOperand] = [d, self.address(a[0])] + [self.operand(x) for x in a[1:]]
        self.emit(rows.atomic(spec.atom, spec.space, i.dst.type), ops, buffer=i.buffer)

    def fence(self, spec: OpSpec, i: Inst) -> None:
        assert spec.scope is not None
        self.emit(rows.fence(spec.scope), [])

    def barrier(self, spec: OpSpec, i: Inst) -> None:
        self.emit(rows.BARRIER, [])

    def wave(self, spec: OpSpec, i: Inst) -> None:
        """wave.reduce.OP, wave.prefix.OP, wave.shuffle.MODE, wave.broadcast, ballot, any, all."""
        assert i.dst is not None
        d, a = self.vreg(i.dst), i.args
        family = spec.family
        if family is Family.REDUCE:
            assert spec.reduce is not None
            self.emit(rows.reduce(spec.reduce, a[0].type), [d, self.operand(a[0])])
        elif family is Family.PREFIX:
            assert spec.reduce is not None
            self.emit(rows.prefix(spec.reduce, a[0].type), [d, self.operand(a[0])])
        elif family is Family.SHUFFLE:
            assert spec.shuffle is not None
            self.row(rows.shuffle(spec.shuffle), d, [a[0], a[1]])
        elif family is Family.BROADCAST:
            self.row(rows.BROADCAST, d, [a[0], a[1]])
        else:
            key = {Family.BALLOT: rows.BALLOT, Family.ANY: rows.ANY_LANE, Family.ALL: rows.ALL_LANES}[family]
            self.emit(key, [d, self.operand(a[0])])


# MIR operation family (mir/ops.py) -> its handler; VALUE ops take their row from select.row_for
_FAMILIES: dict[Family, Callable[[Selector, OpSpec, Inst], None]] = {
    Family.SREG: Selector.sreg,
    Family.LOAD: Selector.load,
    Family.STORE: Selector.store,
    Family.ATOMIC: Selector.atomic,
    Family.FENCE: Selector.fence,
    Family.BARRIER: Selector.barrier,
    **{f: Selector.wave for f in (Family.REDUCE, Family.PREFIX, Family.SHUFFLE, Family.BROADCAST)},
    **{f: Selector.wave for f in (Family.BALLOT, Family.ANY, Family.ALL)},
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
    if t.is_float:  # the constant rounded to its type (beyond f32's range: inf)
        return Imm(float_bits(float(c.value), t), 64 if t is F64 else 32)
    return Imm(int(c.value) & 0xFFFFFFFF)


__all__ = ["Selector", "cls_of", "imm"]
