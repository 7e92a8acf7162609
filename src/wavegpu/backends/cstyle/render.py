"""The C-style renderer: one lifted program to C-family source; dialects supply the spellings.

Registers are `uint r0..rN` (zero at start, DESIGN section 3), predicates `bool p0..p7`; pairs
combine two registers into a ulong. Every row renders with the emulator's semantics (division
by zero, shifts of 32 or more, canonical NaNs, PTX shuffle rules, fused fma), through the
helpers of the prelude, never C's default behaviour.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from ...codegen import canonical, instruction_liveness
from ...errors import WaveError
from ...isa.instruction import Imm, Instruction, Mem, Pair, Pred, Reg, SReg, Vec
from ...isa.registers import SRegId as SR
from ...isa.structure import operand_registers, successors
from ...isa.table import ROWS, InstrSpec
from ...isa.types import SUBREGS, DataType, Kind, Role
from ...isa.vocabulary import NEST_OF, AtomOp, Cmp, InstrClass, Nest, Op, ReduceOp, Scope, ShuffleMode, Space
from ...wbin.program import Kernel
from ..base import Rendered
from ..lift import MASK_USERS, If, MaskPlan, Node, Stmt, lift, mask_plan, preset_count

# Row key -> C expression over the sources {a} {b} {c} {e} (uint, ulong for pairs, bool for
# predicates). Helpers (wv_*) come from the prelude; F/U/D/UL reinterpret bits.
EXPR: dict[str, str] = {
    "mov.b32": "{a}",
    "mov.b64": "{a}",
    "mov.pred": "{a}",
    "mov.b32.sreg": "{a}",
    "add.s32": "({a} + {b})",
    "add.u32": "({a} + {b})",
    "sub.s32": "({a} - {b})",
    "sub.u32": "({a} - {b})",
    "mul.lo.s32": "({a} * {b})",
    "mul.lo.u32": "({a} * {b})",
    "mul.hi.s32": "(uint)(((long)(int){a} * (long)(int){b}) >> 32)",
    "mul.hi.u32": "(uint)(((ulong){a} * (ulong){b}) >> 32)",
    "mul.wide.s32": "(ulong)((long)(int){a} * (long)(int){b})",
    "mul.wide.u32": "((ulong){a} * (ulong){b})",
    "mad.lo.s32": "({a} * {b} + {c})",
    "mad.lo.u32": "({a} * {b} + {c})",
    "div.s32": "wv_div_s32({a}, {b})",
    "div.u32": "wv_div_u32({a}, {b})",
    "rem.s32": "wv_rem_s32({a}, {b})",
    "rem.u32": "wv_rem_u32({a}, {b})",
    "neg.s32": "(0u - {a})",
    "abs.s32": "wv_abs_s32({a})",
    "min.s32": "(uint)wv_min_i((int){a}, (int){b})",
    "max.s32": "(uint)wv_max_i((int){a}, (int){b})",
    "min.u32": "wv_min_u({a}, {b})",
    "max.u32": "wv_max_u({a}, {b})",
    "clamp.s32": "(uint)wv_min_i(wv_max_i((int){a}, (int){b}), (int){c})",
    "clamp.u32": "wv_min_u(wv_max_u({a}, {b}), {c})",
    "dp4a.s32.s32": "wv_dp4a_s({a}, {b}, {c})",
    "dp4a.u32.u32": "wv_dp4a_u({a}, {b}, {c})",
    "and.b32": "({a} & {b})",
    "or.b32": "({a} | {b})",
    "xor.b32": "({a} ^ {b})",
    "not.b32": "(~{a})",
    "and.pred": "({a} && {b})",
    "or.pred": "({a} || {b})",
    "xor.pred": "({a} != {b})",
    "not.pred": "(!{a})",
    "shl.b32": "wv_shl({a}, {b})",
    "shr.u32": "wv_shr_u({a}, {b})",
    "shr.s32": "wv_shr_s({a}, {b})",
    "popc.b32": "wv_popc({a})",
    "clz.b32": "wv_clz({a})",
    "brev.b32": "wv_brev({a})",
    "bfe.u32": "wv_bfe({a}, {b}, {c}, 0)",
    "bfe.s32": "wv_bfe({a}, {b}, {c}, 1)",
    "bfi.b32": "wv_bfi({a}, {b}, {c}, {e})",
    # f32
    "add.f32": "wv_c32(F({a}) + F({b}))",
    "sub.f32": "wv_c32(F({a}) - F({b}))",
    "mul.f32": "wv_c32(F({a}) * F({b}))",
    "fma.f32": "wv_c32(fma(F({a}), F({b}), F({c})))",
    "div.f32": "wv_c32((float)(DBL(F({a})) / DBL(F({b}))))",
    "sqrt.f32": "wv_c32((float)sqrt(DBL(F({a}))))",
    "rcp.f32": "wv_c32((float)(1.0 / DBL(F({a}))))",
    "rsqrt.f32": "wv_c32((float)(1.0 / sqrt(DBL(F({a})))))",
    "neg.f32": "({a} ^ 0x80000000u)",
    "abs.f32": "({a} & 0x7FFFFFFFu)",
    "min.f32": "wv_c32(wv_fmin(F({a}), F({b})))",
    "max.f32": "wv_c32(wv_fmax(F({a}), F({b})))",
    "sin.f32": "wv_c32((float)sin(DBL(F({a}))))",
    "cos.f32": "wv_c32((float)cos(DBL(F({a}))))",
    "exp2.f32": "wv_c32((float)exp2(DBL(F({a}))))",
    "log2.f32": "wv_c32((float)log2(DBL(F({a}))))",
    "fract.f32": "wv_fract({a})",
    "sat.f32": "wv_sat({a})",
    "clamp.f32": "wv_c32(wv_fmin(wv_fmax(F({a}), F({b})), F({c})))",
    # f64 on pairs
    "add.f64": "wv_c64(D({a}) + D({b}))",
    "sub.f64": "wv_c64(D({a}) - D({b}))",
    "mul.f64": "wv_c64(D({a}) * D({b}))",
    "div.f64": "wv_c64(D({a}) / D({b}))",
    "fma.f64": "wv_c64(fma(D({a}), D({b}), D({c})))",
    "sqrt.f64": "wv_c64(sqrt(D({a})))",
    "neg.f64": "({a} ^ 0x8000000000000000ul)",
    "abs.f64": "({a} & 0x7FFFFFFFFFFFFFFFul)",
    "min.f64": "wv_c64(wv_dmin(D({a}), D({b})))",
    "max.f64": "wv_c64(wv_dmax(D({a}), D({b})))",
    # f16 / bf16: exact products, sums rounded to odd in double, one final rounding
    "add.f16x2": "wv_h2(0, {a}, {b}, 0u)",
    "mul.f16x2": "wv_h2(1, {a}, {b}, 0u)",
    "fma.f16x2": "wv_h2(2, {a}, {b}, {c})",
    "add.f16": "wv_h1(0, {a}, {b}, 0u)",
    "sub.f16": "wv_h1(3, {a}, {b}, 0u)",
    "mul.f16": "wv_h1(1, {a}, {b}, 0u)",
    "fma.f16": "wv_h1(2, {a}, {b}, {c})",
    "add.bf16x2": "wv_b2(0, {a}, {b}, 0u)",
    "mul.bf16x2": "wv_b2(1, {a}, {b}, 0u)",
    "fma.bf16x2": "wv_b2(2, {a}, {b}, {c})",
    "add.bf16": "wv_b1(0, {a}, {b}, 0u)",
    "sub.bf16": "wv_b1(3, {a}, {b}, 0u)",
    "mul.bf16": "wv_b1(1, {a}, {b}, 0u)",
    "fma.bf16": "wv_b1(2, {a}, {b}, {c})",
    # conversions
    "cvt.f32.s32": "U(CVT_F_S({a}))",
    "cvt.f32.u32": "U(CVT_F_U({a}))",
    "cvt.s32.f32": "(uint)SAT_I_RTZ(F({a}))",
    "cvt.rni.s32.f32": "(uint)SAT_I_RTE(F({a}))",
    "cvt.rmi.s32.f32": "(uint)SAT_I_RTN(F({a}))",
    "cvt.rpi.s32.f32": "(uint)SAT_I_RTP(F({a}))",
    "cvt.u32.f32": "SAT_U_RTZ(F({a}))",
    "cvt.rni.u32.f32": "SAT_U_RTE(F({a}))",
    "cvt.rmi.u32.f32": "SAT_U_RTN(F({a}))",
    "cvt.rpi.u32.f32": "SAT_U_RTP(F({a}))",
    "cvt.f16.f32": "wv_d2h(DBL(F({a})))",
    "cvt.f32.f16": "wv_c32(wv_h2f({a}))",
    "cvt.f64.f32": "wv_c64(DBL(F({a})))",
    "cvt.f32.f64": "wv_c32((float)D({a}))",
    "cvt.f64.s32": "UL((double)(int){a})",
    "cvt.f64.u32": "UL((double){a})",
    "cvt.s32.f64": "(uint)SAT_I_RTZ_D(D({a}))",
    "cvt.u32.f64": "SAT_U_RTZ_D(D({a}))",
    "cvt.bf16.f32": "wv_d2b(DBL(F({a})))",
    "cvt.f32.bf16": "wv_c32(F(({a} & 0xFFFFu) << 16))",
    "cvt.rni.f32.f32": "wv_c32(rint(F({a})))",
    "cvt.rzi.f32.f32": "wv_c32(trunc(F({a})))",
    "cvt.rmi.f32.f32": "wv_c32(floor(F({a})))",
    "cvt.rpi.f32.f32": "wv_c32(ceil(F({a})))",
    "cvt.rz.f32.f64": "wv_c32(F32_RTZ(D({a})))",
    "cvt.rni.f64.f64": "wv_c64(rint(D({a})))",
    "cvt.rzi.f64.f64": "wv_c64(trunc(D({a})))",
    "cvt.rmi.f64.f64": "wv_c64(floor(D({a})))",
    "cvt.rpi.f64.f64": "wv_c64(ceil(D({a})))",
    # selects
    "selp.b32": "({c} ? {a} : {b})",
    "selp.b64": "({c} ? {a} : {b})",
    "slct.s32.f32": "(F({c}) >= 0.0f ? {a} : {b})",
    "slct.b32.s32": "((int){c} >= 0 ? {a} : {b})",
}


def alu_row(op: ReduceOp | AtomOp, dtype: DataType) -> str:
    """The key of the ALU row computing a reduction's or an atomic's operator on dtype (add.u32,
    min.f32, ...): the lane loops and the CAS-loop atomics combine as that row renders."""
    vop = Op[op.name]
    rows = [r for r in ROWS if r.op is vop and r.dtype is dtype and r.variant is None]
    assert len(rows) == 1, (op, dtype, [r.key for r in rows])
    return rows[0].key


def combine(exprs: dict[str, str], op: ReduceOp | AtomOp, dtype: DataType, a: str, b: str) -> str:
    """C for `a op b` on raw bits, as the ALU row of that operator renders it (exprs: the dialect's)."""
    return exprs[alu_row(op, dtype)].format(a=a, b=b)


_CMP = {Cmp.EQ: "==", Cmp.NE: "!=", Cmp.LT: "<", Cmp.LE: "<=", Cmp.GT: ">", Cmp.GE: ">="}
_FVIEW = {DataType.F32: "F", DataType.F64: "D"}
for _r in ROWS:
    if _r.op is not Op.SETP:
        continue
    _c = _r.variant
    assert isinstance(_c, Cmp) and _r.dtype is not None
    if not _r.dtype.is_float:
        _cast = "(int)" if _r.signed else ""
        EXPR[_r.key] = f"({_cast}{{a}} {_CMP[_c]} {_cast}{{b}})"
        continue
    _v = _FVIEW[_r.dtype]
    _nan = f"(isnan({_v}({{a}})) || isnan({_v}({{b}})))"
    if _c is Cmp.NUM:
        EXPR[_r.key] = f"(!isnan({_v}({{a}})) && !isnan({_v}({{b}})))"
    elif _c is Cmp.NAN:
        EXPR[_r.key] = _nan
    elif _c.unordered:
        EXPR[_r.key] = f"({_nan} || {_v}({{a}}) {_CMP[_c.ordered]} {_v}({{b}}))"
    else:
        EXPR[_r.key] = f"(!{_nan} && {_v}({{a}}) {_CMP[_c]} {_v}({{b}}))"


# the arguments of a bounds-checked kernel before its register presets (runtime/faults.py)
BOUND_ARGS = ("wv_glo", "wv_glast", "wv_clo", "wv_clast", "wv_err")


class Dialect:
    """Spellings of one C-family target. Subclasses override what differs."""

    name = "c"
    unsupported: dict[str, str] = {}
    # Canonicalise float results only where their bits are observed (codegen/canonical). A
    # dialect whose compiler may contract a * b + c across statements once no NaN select stands
    # between them keeps the check after every float row (False).
    nan_plan = True
    exprs: dict[str, str] = {}  # EXPR templates this dialect spells differently
    # .v2/.v4 accesses as one access through an aligned pointer to these types (their components
    # .x .y .z .w); empty: split into 32-bit accesses
    vector_types: dict[int, str] = {}

    def vector_part(self, var: str, i: int) -> str:
        """Component i of a vector of `vector_types` (an lvalue)."""
        return f"{var}.{'xyzw'[i]}"

    def prelude(self) -> str:
        raise NotImplementedError

    def kernel_open(self, k: Kernel, params: list[str], wave_width: int) -> str:
        raise NotImplementedError

    def kernel_close(self, k: Kernel, params: list[str], wave_width: int) -> str:
        """Source after the kernel's body (entry points that call it, for a body written as a function)."""
        return ""

    def sreg(self, sid: int, wave_width: int) -> str:
        raise NotImplementedError

    def load(self, space: str, ctype: str, addr: str) -> str:
        raise NotImplementedError

    def ptr(self, space: str, ctype: str, addr: str) -> str:
        raise NotImplementedError

    def atomic(self, space: str, op: AtomOp, ctype: str, addr: str, args: list[str]) -> str:
        """An atomic returning the old value; ctype is "int", "uint" or (f32 add) "float"."""
        raise NotImplementedError

    explicit_mask = False  # True: wave operations take WAVE's active set as a tracked mask (lift.MaskPlan)
    mask = "WV_ACTIVE()"  # the active set a wave operation reads (the renderer sets the tracked one)

    def ballot(self, mask: str, p: str) -> str:
        """The lanes of mask (all running this statement) where p holds; lanes that returned give 0."""
        return f"WV_BALLOT({mask}, {p})"

    def entry_mask(self) -> str:
        """WAVE's active set at the kernel's entry: the lanes of the wave that exist."""
        return "WV_ENTRY()"

    lane = "lane"  # the expression for %lane_id
    width_at_run_time = False  # True: the source reads W from the hardware (width()) rather than fixing it

    def width(self, wave_width: int) -> str:
        """The expression for W in the source."""
        return f"{wave_width}u"

    def shuffle(self, x: str, src: str) -> str:
        """x from lane src of the wave (src is always a valid lane index)."""
        raise NotImplementedError

    def reduce(self, spec: InstrSpec, x: str) -> str:
        """wave.reduce.<op>.<dtype>: the dialect's group_reduce on int or uint.

        f32 min/max reduce integers, never floats: the runtimes' float reductions are trees of
        the vector ISA's min/max (x86 `minps` returns its second operand when either is a NaN),
        so a NaN among the lanes was kept or dropped by its place in the tree, and -0 against +0
        by the order (Intel's CPU runtime on AVX2 gave 0x3F800001 for the minimum of 0x3F800000..7
        with one NaN). `wv_fkey` maps f32 bits to an int that orders as WAVE's min/max do (-0
        below +0, NaN to the operator's identity, INT_MAX for min and INT_MIN for max), and
        `wv_funkey` maps back (the identity to the canonical NaN: a wave of NaNs gives NaN).
        Integer min/max are exact in any order and tree shape, so the result does not depend
        on the sub-group width, the vectoriser or the ISA."""
        op = spec.variant
        assert isinstance(op, ReduceOp)
        if spec.dtype is DataType.F32:
            assert op in (ReduceOp.MIN, ReduceOp.MAX), spec.key
            nan = "(int)0x7FFFFFFF" if op is ReduceOp.MIN else "(int)0x80000000"
            return f"wv_funkey({self.group_reduce(op, 'int', f'wv_fkey({x}, {nan})')})"
        ct = "int" if spec.signed else "uint"
        return f"(uint){self.group_reduce(op, ct, f'({ct}){x}')}"

    def group_reduce(self, op: ReduceOp, ctype: str, x: str) -> str:
        """x (of C type ctype) combined by op (add min max and or xor) over the active lanes."""
        raise NotImplementedError

    def prefix_add(self, x: str) -> str:
        raise NotImplementedError

    def vote(self, op: Op, p: str) -> str:
        """Op.BALLOT (uint: the low 32 bits), Op.ANY, Op.ALL (bool) over the active lanes."""
        raise NotImplementedError

    def wave(self, spec: InstrSpec, args: list[str], wave_width: int) -> str:
        """A wave operation; the source-lane rules of DESIGN section 3 live here, once: shuffle and
        broadcast take the lane modulo W, and an xor/up/down source outside the wave reads the
        lane's own value (PTX's rule)."""
        lane, w, x = self.lane, self.width(wave_width), args[0]
        op, mode = spec.op, spec.variant
        if op is Op.REDUCE:
            return self.reduce(spec, x)
        if op is Op.PREFIX and mode is ReduceOp.ADD:
            return self.prefix_add(x)
        if op in (Op.SHUFFLE, Op.BROADCAST) and mode is ShuffleMode.IDX:
            return self.shuffle(x, f"({args[1]}) % {w}")
        if mode is ShuffleMode.XOR:
            return self.shuffle(x, f"(({lane} ^ ({args[1]})) < {w}) ? ({lane} ^ ({args[1]})) : {lane}")
        if mode is ShuffleMode.UP:
            return self.shuffle(x, f"(({args[1]}) <= {lane}) ? ({lane} - ({args[1]})) : {lane}")
        if mode is ShuffleMode.DOWN:
            return self.shuffle(x, f"(({args[1]}) < {w} - {lane}) ? ({lane} + ({args[1]})) : {lane}")
        if op in (Op.BALLOT, Op.ANY, Op.ALL):
            return self.vote(op, x)
        raise KeyError(spec.key)

    def barrier(self) -> str:
        raise NotImplementedError

    # True: before each barrier every register and predicate passes through a volatile copy, so
    # the optimiser cannot carry a value across the barrier in a form it then mistranslates
    # (Intel's CPU OpenCL runtime, which also runs SYCL here: docs/backends.md, "The OpenCL device")
    opaque_at_barrier = False

    def fence(self, scope: Scope) -> str:
        raise NotImplementedError

    def local_decl(self, nbytes: int) -> str:
        raise NotImplementedError

    def trap(self, why: str) -> str | None:
        """A statement that aborts the kernel (the emulator's trap), or None when the target has none."""
        return None

    checks_bounds = False  # True: every access is checked and a fault recorded (runtime/faults.py)


class GenericPointers(Dialect):
    """Dialects whose three memory spaces are plain byte pointers `mem`, `lmem`, `cmem` (CUDA,
    HIP, SYCL), with float atomic add through the prelude's CAS loop."""

    def _base(self, space: str) -> str:
        return {"global": "mem", "local": "lmem", "const": "cmem"}[space]

    def ptr(self, space: str, ctype: str, addr: str) -> str:
        q = "const " if space == "const" else ""
        return f"(({q}{ctype}*)({self._base(space)} + ({addr})))"

    def load(self, space: str, ctype: str, addr: str) -> str:
        return f"(*{self.ptr(space, ctype, addr)})"

    def atomic(self, space: str, op: AtomOp, ctype: str, addr: str, args: list[str]) -> str:
        if ctype == "float":
            fn = "wv_atomic_addf_g" if space == "global" else "wv_atomic_addf_l"
            return f"{fn}((uint*)({self._base(space)} + ({addr})), {args[0]})"
        return self.int_atomic(op, ctype, f"(({ctype}*)({self._base(space)} + ({addr})))", args)

    def int_atomic(self, op: AtomOp, ctype: str, p: str, args: list[str]) -> str:
        """An integer atomic on pointer p (already of type ctype*)."""
        raise NotImplementedError


class CRenderer:
    """The `Renderer` of every C-family target: the dialect supplies the spellings."""

    def __init__(self, dialect: Dialect):
        self.d = dialect
        self.exprs = {**EXPR, **dialect.exprs}
        self.nan = canonical.Plan.off()

    # -- operands
    def src(self, op: object, kind: Kind) -> str:
        if isinstance(op, Imm):
            return f"0x{op.bits:x}ul" if op.width == 64 else f"0x{op.bits:x}u"
        if isinstance(op, Reg):
            if op.sel == 0:
                return f"r{op.n}"
            _, off, width = SUBREGS[op.sel]
            return f"((r{op.n} >> {off}) & 0x{(1 << width) - 1:x}u)"
        if isinstance(op, Pair):
            return f"(((ulong)r{op.n + 1} << 32) | (ulong)r{op.n})"
        if isinstance(op, Pred):
            return f"p{op.n}"
        if isinstance(op, SReg):
            return self.d.sreg(op.id, self.w)
        raise TypeError(op)

    def assign(self, op: object, value: str) -> list[str]:
        if isinstance(op, Reg):
            if op.sel == 0:
                return [] if value == f"r{op.n}" else [f"r{op.n} = {value};"]  # a self-assignment warns
            _, off, width = SUBREGS[op.sel]
            mask = ((1 << width) - 1) << off
            return [
                f"r{op.n} = (r{op.n} & 0x{~mask & 0xFFFFFFFF:x}u) | ((({value}) & 0x{(1 << width) - 1:x}u) << {off});"
            ]
        if isinstance(op, Pair):
            return [f"{{ ulong t_ = {value}; r{op.n} = (uint)t_; r{op.n + 1} = (uint)(t_ >> 32); }}"]
        if isinstance(op, Pred):
            return [] if value == f"p{op.n}" else [f"p{op.n} = {value};"]  # a self-assignment warns
        raise TypeError(op)

    def addr(self, m: Mem) -> str:
        base = f"r{m.base}" if m.base is not None else "0u"
        off = m.offset & 0xFFFFFFFF
        return base if off == 0 else f"({base} + 0x{off:x}u)"

    # -- instructions
    def inst(self, inst: Instruction, mask: str | None = None, pc: int = -1) -> list[str]:
        self.pc = pc  # the NaN plan's index, and the pc a checked access records when it faults
        canon = [f"r{r} = wv_c32(F(r{r}));" for r in self.nan.at_use.get(pc, ())]  # observed here
        return canon + self.inst_body(inst, mask, pc)

    def inst_body(self, inst: Instruction, mask: str | None, pc: int) -> list[str]:
        spec = inst.spec
        if mask is not None and spec.op in MASK_USERS:
            return self.on_active(inst, mask)
        if mask is not None and spec.nest in (Nest.BREAK, Nest.CONTINUE):
            return self.leave_tracked(inst, mask)
        key = spec.key
        if key in self.d.unsupported:
            raise WaveError(f"{self.d.name}: {spec.name} is not supported: {self.d.unsupported[key]}")
        ops = inst.operands
        lines: list[str]
        if key in self.exprs:
            srcs = [self.src(o, s.kind) for o, s in zip(ops, spec.operands) if s.role is Role.SRC]
            names = dict(zip("abce", srcs))
            expr = self.exprs[key].format(**names)
            if self.nan.bare(pc, key):  # no bits of this result are observed before a plan's check
                for c, cast in (("wv_c32(", "U("), ("wv_c64(", "UL(")):
                    if expr.startswith(c):
                        expr = cast + expr[len(c) :]
            lines = self.assign(ops[spec.dests[0]], expr)
        elif spec.op in STATEMENTS:
            lines = STATEMENTS[spec.op](self, inst)
        else:
            raise WaveError(f"{self.d.name}: no rendering for {spec.name}")
        if inst.guard is not None:
            g = f"{'!' if inst.guard.negated else ''}p{inst.guard.pred}"
            return [f"if ({g}) {{"] + ["    " + x for x in lines] + ["}"]
        return lines

    def on_active(self, inst: Instruction, mask: str) -> list[str]:
        """A wave operation (or mma) in a tracked region: its active set is the ballot of the
        guard among the region's lanes (lanes that returned give 0), read by the dialect."""
        g = "true" if inst.guard is None else f"{'!' if inst.guard.negated else ''}p{inst.guard.pred}"
        self.d.mask = "wv_act"
        try:
            body = self.inst(replace(inst, guard=None))
        finally:
            self.d.mask = Dialect.mask
        if inst.guard is not None:
            body = [f"if ({g}) {{", *("    " + x for x in body), "}"]
        return ["{", f"    wv_mask wv_act = {self.d.ballot(mask, g)};", *("    " + x for x in body), "}"]

    def leave_tracked(self, inst: Instruction, mask: str) -> list[str]:
        """break/continue p of a tracked loop: the leaving lanes are dropped from the region's mask
        by a ballot every lane of the region takes, then flagged; they skip to the latch."""
        c = self.src(inst.operands[0], Kind.PRED)
        if inst.guard is not None:
            c = f"({c} && {'!' if inst.guard.negated else ''}p{inst.guard.pred})"
        flag = "wv_brk" if inst.spec.nest is Nest.BREAK else "wv_cnt"
        return [f"{mask} = {self.d.ballot(mask, f'!{c}')};", f"if ({c}) {flag} = true;"]

    def leave(self, inst: Instruction) -> list[str]:
        """break/continue p."""
        word = "break" if inst.spec.nest is Nest.BREAK else "continue"
        return [f"if ({self.src(inst.operands[0], Kind.PRED)}) {word};"]

    def fence(self, inst: Instruction) -> list[str]:
        scope = inst.spec.variant
        assert isinstance(scope, Scope)
        return [self.d.fence(scope)]

    def in_bounds(self, space: str, addr: str, width: int) -> str:
        """C for: `width` bytes at addr lie in the space's allowed bytes and are aligned."""
        if space == "local":
            n = self.k.local_memory
            lo, last = ("0u", f"{n - 1}u") if n else ("1u", "0u")
        else:
            lo, last = ("wv_glo", "wv_glast") if space == "global" else ("wv_clo", "wv_clast")
        return f"wv_in({addr}, {width}u, {lo}, {last})"

    def checked(self, inst: Instruction, render: Callable[[str], list[str]]) -> list[str]:
        """The access of a load, store or atomic (render(address) -> its statements), checked on
        dialects that cannot trap: `wv_ok` says the access is allowed; the thread's first fault
        is noted in private variables (WV_NOTE), reported once when it ends (WV_REPORT). A load,
        store or atomic happens only when allowed (a skipped load leaves its destination as it
        was). A faulting run's results are never used: the runtime reports the fault."""
        if not self.d.checks_bounds:
            return render(self.addr(self._mem(inst)))
        spec = inst.spec
        assert spec.space is not None
        a = self.addr(self._mem(inst))
        head = [f"bool wv_ok = {self.in_bounds(spec.space, a, spec.width)};", f"WV_NOTE(wv_ok, {a}, {self.pc}u);"]
        if spec.space is Space.LOCAL and not self.k.local_memory:  # nothing to access: every access faults
            return ["{", *("    " + x for x in head), "}"]
        body = ["if (wv_ok) {", *("    " + x for x in render(a)), "}"]
        return ["{", *("    " + x for x in head), *("    " + x for x in body), "}"]

    def _mem(self, inst: Instruction) -> Mem:
        assert inst.spec.mem_index is not None
        m = inst.operands[inst.spec.mem_index]
        assert isinstance(m, Mem)
        return m

    def ret(self) -> list[str]:
        """`ret`: a checked kernel reports its fault first."""
        return ["WV_REPORT();", "return;"] if self.d.checks_bounds else ["return;"]

    def memory(self, inst: Instruction) -> list[str]:
        return self.checked(inst, lambda a: self.access(inst, a))

    def access(self, inst: Instruction, a: str) -> list[str]:
        """The statements of a load or store at byte address a (a C expression)."""
        spec = inst.spec
        space = spec.space
        assert space is not None and spec.mem_index is not None
        vec = next((o.kind.vector_len for o in spec.operands if o.kind in (Kind.VEC2, Kind.VEC4)), 0)
        if spec.cls is InstrClass.LOAD:
            dst = inst.operands[0]
            if spec.width < 4:
                ct = {(1, False): "uchar", (1, True): "char", (2, False): "ushort", (2, True): "short"}
                v = self.d.load(space, ct[spec.width, spec.signed], a)
                return self.assign(dst, f"(uint)(int){v}" if spec.signed else f"(uint){v}")
            if not vec:
                return self.assign(dst, self.d.load(space, "uint" if spec.width == 4 else "ulong", a))
            n = vec
            assert isinstance(dst, Vec)
            vt = self.d.vector_types.get(n)
            if vt is not None:  # WAVE's vector accesses are naturally aligned (the emulator traps otherwise)
                out = [f"{{ const {vt} wv_v = {self.d.load(space, vt, a)};"]
                out += [f"  r{dst.n + i} = {self.d.vector_part('wv_v', i)};" for i in range(n)]
                return [*out, "}"]
            return [f"r{dst.n + i} = {self.d.load(space, 'uint', f'({a} + {4 * i}u)')};" for i in range(n)]
        val = inst.operands[1]
        if spec.width < 4:
            ct = "uchar" if spec.width == 1 else "ushort"
            return [f"*{self.d.ptr(space, ct, a)} = ({ct})({self.src(val, Kind.REG)});"]
        if not vec and spec.width == 4:
            return [f"*{self.d.ptr(space, 'uint', a)} = {self.src(val, Kind.REG)};"]
        if not vec:
            return [f"*{self.d.ptr(space, 'ulong', a)} = {self.src(val, Kind.PAIR)};"]
        n = vec
        vt = self.d.vector_types.get(n)
        if vt is not None:
            if isinstance(val, Imm):
                parts = [f"0x{(val.bits >> (32 * i)) & 0xFFFFFFFF:x}u" for i in range(n)]
            else:
                assert isinstance(val, Vec)
                parts = [f"r{val.n + i}" for i in range(n)]
            out = [f"{{ {vt} wv_v;"] + [f"  {self.d.vector_part('wv_v', i)} = {p};" for i, p in enumerate(parts)]
            return [*out, f"  *{self.d.ptr(space, vt, a)} = wv_v;", "}"]
        if isinstance(val, Imm):
            return [
                f"*{self.d.ptr(space, 'uint', f'({a} + {4 * i}u)')} = 0x{(val.bits >> (32 * i)) & 0xFFFFFFFF:x}u;"
                for i in range(n)
            ]
        assert isinstance(val, Vec)
        return [f"*{self.d.ptr(space, 'uint', f'({a} + {4 * i}u)')} = r{val.n + i};" for i in range(n)]

    def atomic(self, inst: Instruction) -> list[str]:
        spec = inst.spec
        space = spec.space
        assert space is not None and spec.mem_index is not None
        op = spec.variant
        assert isinstance(op, AtomOp)
        mi = spec.mem_index
        m = inst.operands[mi]
        assert isinstance(m, Mem)
        args = [self.src(o, Kind.REG) for o in inst.operands[mi + 1 :]]
        ctype = "float" if spec.dtype is DataType.F32 else "int" if spec.signed else "uint"

        def call(a: str) -> list[str]:
            c = self.d.atomic(space, op, ctype, a, args)
            return self.assign(inst.operands[0], f"(uint)({c})") if spec.op is Op.ATOM else [f"(void)({c});"]

        return self.checked(inst, call)

    def wave(self, inst: Instruction) -> list[str]:
        spec = inst.spec
        srcs = [self.src(o, s.kind) for o, s in zip(inst.operands, spec.operands) if s.role is Role.SRC]
        return self.assign(inst.operands[0], self.d.wave(spec, srcs, self.w))

    def mma(self, inst: Instruction) -> list[str]:
        """mma.m16n8k8.f32.f16 in the PTX fragment layout (DESIGN section 3) through shuffles: the
        lane holding D[g][2t+j] (g = lane / 4, t = lane % 4) reads row g of A from lanes 4g..4g+3
        and column 2t+j of B from lanes 4(2t+j)..4(2t+j)+3, and sums C then the eight exact
        products in k order in double, as the emulator does; one rounding to f32."""
        d, a, b, c = inst.operands
        assert isinstance(d, Vec) and isinstance(a, Vec) and isinstance(b, Vec) and isinstance(c, Vec)
        if self.w != 32 and not self.d.width_at_run_time:
            trap = self.d.trap(f"mma.m16n8k8 needs waves of 32 lanes, not {self.w}")
            if trap is None:
                raise WaveError(f"{self.d.name}: mma.m16n8k8 needs waves of 32 lanes (this translation: {self.w})")
            return [trap]
        sh = self.d.shuffle
        lane = self.d.lane
        acc = [f"mma_c{i}" for i in range(4)]
        out = ["{", f"    uint mma_g = ({lane}) >> 2, mma_t = ({lane}) & 3u;"]
        out += [f"    double {acc[i]} = DBL(F(r{c.n + i}));" for i in range(4)]
        out += [
            "    for (uint mma_k = 0u; mma_k < 4u; mma_k++) {",
            f"        uint mma_a0 = {sh(f'r{a.n}', 'mma_g * 4u + mma_k')};",
            f"        uint mma_a1 = {sh(f'r{a.n + 1}', 'mma_g * 4u + mma_k')};",
            f"        uint mma_b0 = {sh(f'r{b.n}', '(2u * mma_t) * 4u + mma_k')};",
            f"        uint mma_b1 = {sh(f'r{b.n}', '(2u * mma_t + 1u) * 4u + mma_k')};",
            "        for (uint mma_h = 0u; mma_h < 32u; mma_h += 16u) {",
            "            double x0 = wv_h2d(mma_a0 >> mma_h), x1 = wv_h2d(mma_a1 >> mma_h);",
            "            double y0 = wv_h2d(mma_b0 >> mma_h), y1 = wv_h2d(mma_b1 >> mma_h);",
            f"            {acc[0]} += x0 * y0; {acc[1]} += x0 * y1; {acc[2]} += x1 * y0; {acc[3]} += x1 * y1;",
            "        }",
            "    }",
        ]
        out += [f"    r{d.n + i} = wv_c32((float){acc[i]});" for i in range(4)]
        if self.d.width_at_run_time:  # the hardware's W decides: trap unless it is 32
            out = [
                f"if ({self.d.width(32)} != 32u) {{ {self.d.trap('mma.m16n8k8 needs waves of 32 lanes')} }} else",
                *out,
            ]
        return [*out, "}"]

    # -- structure
    def nodes(self, ns: list[Node], ind: str, out: list[str], mask: str | None = None) -> None:
        """The tree as nested C blocks; an explicit work stack (a node with its indentation and
        its region's mask variable, or a line) instead of recursion, so any nesting depth renders.

        Regions the MaskPlan tracks (dialects with `explicit_mask`) keep WAVE's active set in a
        `wv_mask` variable, as the PTX backend does: an `if` splits it by a ballot among the
        region's lanes; a lane that breaks or continues a tracked loop does not jump there at
        once (the lanes left behind could not learn it) but sets wv_brk/wv_cnt, is removed from
        the mask by a ballot all the region's lanes take, and skips the rest of each enclosing
        region to the loop's latch, where the loop's mask drops the lanes that broke. A lane
        that returns drops out of every later ballot by itself. Other regions are plain C."""
        work: list[tuple[Node | str, str, str | None]] = [
            *((s, i, m) for s, i, m in reversed(self.region(ns, ind, mask)))
        ]
        while work:
            n, ind, m = work.pop()
            if isinstance(n, str):
                out.append(ind + n)
            elif isinstance(n, Stmt):
                for line in self.inst(n.inst, m, n.pc):
                    out.append(ind + line)
            else:
                inner = ind + "    "
                tracked = m is not None and self.plan.tracks(n)
                seq: list[tuple[Node | str, str, str | None]]
                if isinstance(n, If):
                    mt = me = None
                    if tracked:
                        assert m is not None
                        mt = self.mask_var()
                        out.append(f"{ind}wv_mask {mt} = {self.d.ballot(m, f'p{n.pred}')};")
                        if n.other:
                            me = self.mask_var()
                            out.append(f"{ind}wv_mask {me} = {m} & ~{mt};")
                    out.append(f"{ind}if (p{n.pred}) {{")
                    seq = self.region(n.then, inner, mt)
                    if n.other:
                        seq += [("} else {", ind, None), *self.region(n.other, inner, me)]
                    seq.append(("}", ind, None))
                elif tracked:
                    assert m is not None
                    ml, mb = self.mask_var(), self.mask_var()
                    out += [f"{ind}wv_mask {ml} = {m};", f"{ind}for (;;) {{", f"{inner}wv_mask {mb} = {ml};"]
                    seq = self.region(n.body, inner, mb)
                    latch = [f"{ml} = {self.d.ballot(ml, '!wv_brk')};", "wv_cnt = false;", "if (wv_brk) break;"]
                    seq += [*((x, inner, None) for x in latch), ("}", ind, None), ("wv_brk = false;", ind, None)]
                else:
                    out.append(f"{ind}for (;;) {{")
                    seq = self.region(n.body, inner, None)
                    seq.append(("}", ind, None))
                work.extend(reversed(seq))

    def region(self, ns: list[Node], ind: str, mask: str | None) -> list[tuple[Node | str, str, str | None]]:
        """A region's children in order; in a tracked region, the rest after a child that may
        take lanes out of the loop is wrapped so that the lanes which left skip it."""
        steps: list[tuple[Node | str, str, str | None]] = []
        closers: list[str] = []
        for i, c in enumerate(ns):
            steps.append((c, ind, mask))
            if mask is None or not self.plan.leaves(c):
                continue
            if isinstance(c, If):  # the lanes that left inside it leave this region too
                steps.append((f"{mask} = {self.d.ballot(mask, '!wv_brk && !wv_cnt')};", ind, None))
            if i + 1 < len(ns):
                steps.append(("if (!wv_brk && !wv_cnt) {", ind, None))
                closers.append(ind)
                ind += "    "
        steps += [("}", c, None) for c in reversed(closers)]
        return steps

    def barrier(self, inst: Instruction) -> list[str]:
        if not self.d.opaque_at_barrier:
            return [self.d.barrier()]
        live = self.live_at.get(id(inst))  # the registers and predicates read after it
        regs = [i for i in range(self.nregs) if live is None or (live >> i) & 1]
        preds = [i for i in range(self.npreds) if live is None or (live >> (self.nregs + i)) & 1]
        copies = [f"volatile uint v{i}_ = r{i}; r{i} = v{i}_;" for i in regs]
        copies += [f"volatile bool q{i}_ = p{i}; p{i} = q{i}_;" for i in preds]
        return (["{ " + " ".join(copies) + " }"] if copies else []) + [self.d.barrier()]

    def live_after_barriers(self, k: Kernel) -> dict[int, int]:
        """id(barrier instruction) -> what some later instruction may read before writing it,
        registers as bits 0.. and predicates as bits nregs.. (a guarded write keeps the old value,
        so it reads too)."""
        if not self.d.opaque_at_barrier or not any(i.spec.op is Op.BARRIER for i in k.instructions):
            return {}
        defs, uses = [], []
        for inst in k.instructions:
            d = u = 0
            if inst.guard is not None:
                u |= 1 << (self.nregs + inst.guard.pred)
            for o, sp in zip(inst.operands, inst.spec.operands):
                bits = (
                    1 << (self.nregs + o.n) if isinstance(o, Pred) else sum(1 << r for r in set(operand_registers(o)))
                )
                if sp.role is Role.SRC or isinstance(o, Mem) or (isinstance(o, Reg) and o.sel):
                    u |= bits
                else:
                    d |= bits
            defs.append(0 if inst.guard is not None else d)
            uses.append(u)
        _, live_out = instruction_liveness(successors(k.instructions), defs, uses)
        return {id(inst): live_out[i] for i, inst in enumerate(k.instructions) if inst.spec.op is Op.BARRIER}

    def mask_var(self) -> str:
        self.masks += 1
        return f"wv_m{self.masks}"

    def render(self, k: Kernel, wave_width: int = 32, nargs: int | None = None) -> Rendered:
        """C source for kernel k. `nargs` register presets become kernel arguments (default: the
        kernel's parameters, or for a kernel declaring none the registers it reads before writing,
        lift.preset_count)."""
        self.w = wave_width
        self.k = k
        self.pc = -1
        for inst in k.instructions:
            if inst.spec.key in self.d.unsupported:
                raise WaveError(
                    f"{self.d.name}: kernel {k.name!r} uses {inst.spec.name}, which is not supported: "
                    f"{self.d.unsupported[inst.spec.key]}"
                )
            for o in inst.operands:
                if isinstance(o, SReg) and o.id == SR.CLOCK:
                    raise WaveError(
                        f"{self.d.name}: kernel {k.name!r} reads %clock, which has no {self.d.name} equivalent"
                    )
        tree = lift(k)
        self.nan = canonical.plan(k.instructions) if self.d.nan_plan else canonical.Plan.off()
        self.plan = mask_plan(tree) if self.d.explicit_mask else MaskPlan(False, frozenset(), frozenset())
        self.masks = 0
        params = [f"a{i}" for i in range(preset_count(k, tree) if nargs is None else nargs)]
        nregs = max(k.registers, len(params), 1)
        self.nregs, self.npreds = nregs, max(k.predicates, 1)
        self.live_at = self.live_after_barriers(k)
        body: list[str] = []
        body.append("    uint " + ", ".join(f"r{i} = 0u" for i in range(nregs)) + ";")
        body.append("    bool " + ", ".join(f"p{i} = false" for i in range(max(k.predicates, 1))) + ";")
        for i in range(len(params)):
            body.append(f"    r{i} = a{i};")
        if k.local_memory:
            body.append("    " + self.d.local_decl(k.local_memory))
        if self.d.checks_bounds:
            body.append("    uint wv_fa = 0u, wv_fpc = 0u;")
            body.append("    bool wv_bad = false;")
        root = None
        if self.plan.root:  # WAVE's active set at entry: the lanes of the wave that exist
            root = "wv_m0"
            body.append(f"    wv_mask wv_m0 = {self.d.entry_mask()};")
            body.append("    bool wv_brk = false, wv_cnt = false;")
        self.nodes(tree, "    ", body, root)
        head = self.d.kernel_open(k, params, wave_width)
        tail = self.d.kernel_close(k, params, wave_width)
        if self.d.checks_bounds and body[-1] != "    return;":
            body.append("    WV_REPORT();")
        src = self.d.prelude() + "\n" + head + "\n" + "\n".join(body) + "\n}\n" + tail
        return Rendered(src, k.name, wave_width)

    def render_module(self, kernels: Sequence[Kernel], wave_width: int = 32) -> str:
        """Every kernel in one source: the prelude once, then each kernel."""
        parts = [CRenderer(type(self.d)()).render(k, wave_width).source for k in kernels]
        prelude = type(self.d)().prelude()  # once: every kernel's source starts with it
        return prelude + "\n".join(p[len(prelude) :] for p in parts)

    def coverage(self) -> dict[str, str]:
        return coverage(self.d)


# Operation -> the CRenderer method writing its rows' statements (rows not rendered by EXPR).
STATEMENTS: dict[Op, Callable[[CRenderer, Instruction], list[str]]] = {
    Op.LD: CRenderer.memory,
    Op.ST: CRenderer.memory,
    Op.ATOM: CRenderer.atomic,
    Op.RED: CRenderer.atomic,
    **{o: CRenderer.wave for o in (Op.REDUCE, Op.BROADCAST, Op.SHUFFLE, Op.PREFIX, Op.BALLOT)},
    Op.ANY: CRenderer.wave,
    Op.ALL: CRenderer.wave,
    Op.BARRIER: CRenderer.barrier,
    Op.FENCE: CRenderer.fence,
    Op.MMA: CRenderer.mma,
    Op.NOP: lambda r, inst: [],
    Op.BREAK: CRenderer.leave,
    Op.CONTINUE: CRenderer.leave,
    Op.RET: lambda r, inst: r.ret(),
}
# Operations the tree walk renders (if/else/endif, loop/endloop): lift.py made them the tree.
TREE = frozenset(o for o, n in NEST_OF.items() if n in (Nest.OPEN_IF, Nest.ELSE, Nest.CLOSE, Nest.OPEN_LOOP))


def coverage(dialect: Dialect) -> dict[str, str]:
    """(row key -> how) for every row: 'expr', 'statement', or the reason it is unsupported."""
    out = {}
    for r in ROWS:
        if r.key in dialect.unsupported:
            out[r.key] = "unsupported: " + dialect.unsupported[r.key]
        elif r.key in EXPR or r.key in dialect.exprs:
            out[r.key] = "expr"
        elif r.op in STATEMENTS or r.op in TREE:
            out[r.key] = "statement"
        else:
            out[r.key] = "missing"
    return out
