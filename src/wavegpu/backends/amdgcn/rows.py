"""Row selection: one WAVE instruction to AMDGCN instructions (scalar when its results are
uniform, vector otherwise), and the coverage table (`coverage()`: how every row is rendered or
why it is refused).

Semantics follow DESIGN section 3: shifts of 32 or more give 0 (sign fill for `shr.s32`),
division by the reciprocal sequence with the RISC-V rules for zero divisors and INT_MIN / -1,
float results with NaNs made canonical (f32 0x7FFFFFFF, f64 0x7FFFFFFFFFFFFFFF), correctly
rounded f32 division (`v_div_scale`/`v_div_fmas`/`v_div_fixup`) and square root (the hardware
estimate corrected by one ulp either way with fma residuals), saturating float-to-int
conversions (the hardware's `v_cvt_*` saturate and give 0 for NaN).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...isa import semantics as sem
from ...isa.instruction import Imm as WImm
from ...isa.instruction import Instruction, Mem, Pair, Pred, Reg, SReg, Vec
from ...isa.registers import SRegId as SR
from ...isa.table import ROWS, InstrSpec
from ...isa.types import DataType
from ...isa.vocabulary import AtomOp, Cmp, Op, ReduceOp, Rounding, Scope, ShuffleMode, Space, Unit
from .ir import EXEC, VCC, VR, Imm, Operand, Raw, Sub
from .isa import FAMILY, ds_atomic, global_atomic
from .operands import CMP_F, CMP_INT, Unsupported, inline32, is_s, is_v
from .peephole import GLOBAL_OFFSETS

if TYPE_CHECKING:
    from .select import Selector

T = DataType
NAN32 = 0x7FFFFFFF

# Rows refused, with the reason (everything else is selected below).
UNSUPPORTED: dict[str, str] = {
    "sin.f32": "v_sin_f32 takes turns and is only accurate after a full range reduction, not implemented",
    "cos.f32": "v_cos_f32 takes turns and is only accurate after a full range reduction, not implemented",
    "mma.m16n8k8.f32.f16": "the row has the PTX m16n8k8 fragment layout for W = 32; MFMA shapes are wave64",
}
for _r in ROWS:
    if _r.dtype in (T.BF16, T.BF16X2) and _r.op is Op.FMA:
        UNSUPPORTED[_r.key] = (
            "no bf16 fma instruction; through f32 or f64 the sum would be rounded twice (the emulator rounds once)"
        )

INT_OPS = {
    Op.ADD: ("s_add_u32", "v_add_u32"),
    Op.SUB: ("s_sub_u32", "v_sub_u32"),
    Op.MUL_LO: ("s_mul_i32", "v_mul_lo_u32"),
    Op.AND: ("s_and_b32", "v_and_b32"),
    Op.OR: ("s_or_b32", "v_or_b32"),
    Op.XOR: ("s_xor_b32", "v_xor_b32"),
}
MINMAX = {
    (Op.MIN, True): ("s_min_i32", "v_min_i32"),
    (Op.MIN, False): ("s_min_u32", "v_min_u32"),
    (Op.MAX, True): ("s_max_i32", "v_max_i32"),
    (Op.MAX, False): ("s_max_u32", "v_max_u32"),
}
F32_BIN = {Op.ADD: "v_add_f32", Op.SUB: "v_sub_f32", Op.MUL: "v_mul_f32"}
F64_BIN = {Op.ADD: "v_add_f64", Op.MUL: "v_mul_f64"}
ROUND_F32 = {
    Rounding.RNI: "v_rndne_f32",
    Rounding.RZI: "v_trunc_f32",
    Rounding.RMI: "v_floor_f32",
    Rounding.RPI: "v_ceil_f32",
}
ROUND_F64 = {
    Rounding.RNI: "v_rndne_f64",
    Rounding.RZI: "v_trunc_f64",
    Rounding.RMI: "v_floor_f64",
    Rounding.RPI: "v_ceil_f64",
}
APPROX = {Op.RCP: "v_rcp_f32", Op.RSQRT: "v_rsq_f32", Op.EXP2: "v_exp_f32", Op.LOG2: "v_log_f32"}
LOAD_GLOBAL = {
    (1, False): "ubyte",
    (1, True): "sbyte",
    (2, False): "ushort",
    (2, True): "sshort",
    (4, False): "dword",
    (8, False): "dwordx2",
    (16, False): "dwordx4",
}
STORE_GLOBAL = {1: "byte", 2: "short", 4: "dword", 8: "dwordx2", 16: "dwordx4"}
LOAD_DS = {
    (1, False): "ds_read_u8",
    (1, True): "ds_read_i8",
    (2, False): "ds_read_u16",
    (2, True): "ds_read_i16",
    (4, False): "ds_read_b32",
    (8, False): "ds_read_b64",
    (16, False): "ds_read_b128",
}
STORE_DS = {1: "ds_write_b8", 2: "ds_write_b16", 4: "ds_write_b32", 8: "ds_write_b64", 16: "ds_write_b128"}
SMEM_LOAD = {4: "s_load_dword", 8: "s_load_dwordx2", 16: "s_load_dwordx4"}


def coverage() -> dict[str, str]:
    """Row key -> how the row is rendered or 'unsupported: <why>': value rows (Unit.VALUE)
    are 'inline: ...' instruction sequences, the others 'statement: ...' (memory, control flow,
    synchronisation, wave operations)."""
    out = {}
    for r in ROWS:
        if r.key in UNSUPPORTED:
            out[r.key] = "unsupported: " + UNSUPPORTED[r.key]
        elif r.unit is Unit.VALUE:
            out[r.key] = "inline: " + HOW.get(r.op, "scalar or vector ALU instructions")
        else:
            out[r.key] = "statement: " + HOW.get(r.op, "control flow, synchronisation or memory")
    return out


HOW = {
    Op.DIV: "reciprocal sequence with RISC-V zero/overflow rules",
    Op.REM: "reciprocal sequence with RISC-V zero/overflow rules",
    Op.LD: "global_load/ds_read/s_load",
    Op.ST: "global_store/ds_write",
    Op.ATOM: "global_atomic/ds atomics (returning)",
    Op.RED: "global_atomic/ds atomics",
    Op.REDUCE: "DPP (quad_perm, row mirrors, row_bcast) over the wave, identity in inactive lanes",
    Op.PREFIX: "DPP scan (row_shr, row_bcast), identity in inactive lanes",
    Op.SHUFFLE: "ds_bpermute_b32 (ds_swizzle_b32 for xor with a constant below 32)",
    Op.SQRT: "correctly rounded: f32 estimate with one-ulp fma corrections; f64 LLVM's rsq/fma sequence",
    Op.RCP: "v_rcp_f32 (1 ulp) with denormal-range scaling",
    Op.RSQRT: "v_rsq_f32 (1 ulp) with denormal-range scaling",
    Op.EXP2: "v_exp_f32 (1 ulp) with denormal-range scaling",
    Op.LOG2: "v_log_f32 (1 ulp) with denormal-range scaling",
    Op.BROADCAST: "v_readlane_b32",
}


def _dt(inst: Instruction) -> DataType | None:
    return inst.spec.dtype


def select(s: Selector, inst: Instruction) -> None:
    spec = inst.spec
    if spec.key in UNSUPPORTED:
        raise Unsupported(f"kernel {s.k.name}, pc {s.pc}: {spec.name}: {UNSUPPORTED[spec.key]}")
    op = spec.op
    ops = inst.operands
    dt = _dt(inst)
    if op is Op.NOP:
        s.emit("s_nop", Imm(0), ndefs=0)
    elif op is Op.MOV:
        _mov(s, inst)
    elif op in (Op.LD,):
        _load(s, inst)
    elif op is Op.ST:
        _store(s, inst)
    elif op in (Op.ATOM, Op.RED):
        _atomic(s, inst)
    elif op is Op.BARRIER:
        s.emit("s_barrier", ndefs=0)
    elif op is Op.FENCE:
        _fence(s, inst.spec.variant)  # type: ignore[arg-type]
    elif op is Op.SETP:
        _setp(s, inst)
    elif op in (Op.SELP, Op.SLCT):
        _select(s, inst)
    elif op in (Op.BALLOT, Op.ANY, Op.ALL, Op.BROADCAST, Op.SHUFFLE, Op.REDUCE, Op.PREFIX):
        _wave(s, inst)
    elif dt is not None and ops and isinstance(ops[0], Pred):
        _predop(s, inst)
    elif op is Op.CVT:
        _cvt(s, inst)
    elif dt in (T.F16, T.F16X2, T.BF16, T.BF16X2):
        _f16(s, inst)
    elif dt is T.F32:
        _f32(s, inst)
    elif dt is T.F64:
        _f64(s, inst)
    else:
        _int(s, inst)


# ---- helpers ------------------------------------------------------------------------------------
def scalar_or_vector(s: Selector, dst: object, fn_s, fn_v) -> None:
    """Compute into WAVE register dst: fn_s(d) with scalar ops when dst is an SGPR, else fn_v(d)."""
    if s.dst_is_s(dst):
        s.write(dst, fn_s)
    else:
        s.write(dst, fn_v)


def vector_into(s: Selector, dst: object, fn_v) -> None:
    """A computation only the VALU has: into a VGPR, then (for an SGPR destination) read back."""

    def into_s(d: Operand) -> None:
        t = s.vtmp()
        fn_v(t)
        s.emit("v_readfirstlane_b32", d, t)

    scalar_or_vector(s, dst, into_s, fn_v)


def canon32(s: Selector, x: Operand) -> None:
    """NaN -> 0x7FFFFFFF in VGPR x."""
    s._valu("v_cmp_u_f32", None, [x, x])
    s._valu("v_cndmask_b32", x, [x, s.const_v(NAN32)])


def canon64(s: Selector, x: Operand) -> None:
    assert isinstance(x, VR | Sub)
    lo, hi = _half(x, 0), _half(x, 1)
    s._valu("v_cmp_u_f64", None, [x, x])
    s._valu("v_cndmask_b32", hi, [hi, s.const_v(NAN32)])
    s._valu("v_cndmask_b32", lo, [lo, Imm(-1)])


def _half(x: Operand, i: int) -> Operand:
    if isinstance(x, VR):
        return Sub(x, i)
    assert isinstance(x, Sub)
    return Sub(x.vr, x.i + i)


def vsrc(s: Selector, o: object) -> Operand:
    return s.src(o)


def _shift_v(s: Selector, op: Op, signed: bool, d: Operand, a: Operand, b: Operand) -> None:
    if isinstance(b, Imm):
        amt = b.value & 0xFFFFFFFF
        if amt > 31:
            if op is Op.SHR and signed:
                s._valu("v_ashrrev_i32", d, [Imm(31), a])
            else:
                s.emit("v_mov_b32", d, Imm(0))
            return
    if op is Op.SHR and signed:
        m = s.vtmp()
        s._valu("v_min_u32", m, [b, Imm(31)])
        s._valu("v_ashrrev_i32", d, [m, a])
        return
    mn = "v_lshlrev_b32" if op is Op.SHL else "v_lshrrev_b32"
    if isinstance(b, Imm):
        s._valu(mn, d, [b, a])
        return
    t = s.vtmp()
    s._valu(mn, t, [b, a])
    s._valu("v_cmp_gt_u32", None, [Imm(32), b])
    s._valu("v_cndmask_b32", d, [Imm(0), t])


def _shift_s(s: Selector, op: Op, signed: bool, d: Operand, a: Operand, b: Operand) -> None:
    if op is Op.SHR and signed:
        m = s.stmp()
        s.emit("s_min_u32", m, b, Imm(31))
        s.emit("s_ashr_i32", d, a, m)
        return
    mn = "s_lshl_b32" if op is Op.SHL else "s_lshr_b32"
    if isinstance(b, Imm):
        if (b.value & 0xFFFFFFFF) > 31:
            s.emit("s_mov_b32", d, Imm(0))
        else:
            s.emit(mn, d, a, b)
        return
    t = s.stmp()
    s.emit(mn, t, a, b)
    s.emit("s_cmp_lt_u32", b, Imm(32), ndefs=0)
    s.emit("s_cselect_b32", d, t, Imm(0))


def _udivmod_v(s: Selector, a: Operand, b: Operand) -> tuple[Operand, Operand]:
    """Unsigned a / b and a % b in VGPRs (b != 0; the caller fixes b == 0)."""
    f, r, z, q, t, rem = (s.vtmp() for _ in range(6))
    b = s.to_v(b)
    s._valu("v_cvt_f32_u32", f, [b])
    s._valu("v_rcp_iflag_f32", f, [f])
    s._valu("v_mul_f32", f, [Imm(0x4F7FFFFE), f])
    s._valu("v_cvt_u32_f32", r, [f])
    s._valu("v_sub_u32", z, [Imm(0), b])
    s._valu("v_mul_lo_u32", z, [z, r])
    s._valu("v_mul_hi_u32", z, [r, z])
    s._valu("v_add_u32", r, [r, z])
    s._valu("v_mul_hi_u32", q, [a, r])
    s._valu("v_mul_lo_u32", t, [q, b])
    s._valu("v_sub_u32", rem, [a, t])
    for _ in range(2):
        q1, r1 = s.vtmp(), s.vtmp()
        s._valu("v_add_u32", q1, [Imm(1), q])
        s._valu("v_sub_u32", r1, [rem, b])
        s._valu("v_cmp_ge_u32", None, [rem, b])
        s._valu("v_cndmask_b32", q, [q, q1])
        s._valu("v_cndmask_b32", rem, [rem, r1])
    return q, rem


def _divrem(s: Selector, d: Operand, a: Operand, b: Operand, signed: bool, want_rem: bool) -> None:
    a, b = s.to_v(a), s.to_v(b)
    if not signed:
        q, r = _udivmod_v(s, a, b)
        res = r if want_rem else q
        s._valu("v_cmp_eq_u32", None, [Imm(0), b])
        s._valu("v_cndmask_b32", d, [res, a if want_rem else s.to_v(Imm(-1))])
        return
    sa, sb, ua, ub = s.vtmp(), s.vtmp(), s.vtmp(), s.vtmp()
    s._valu("v_ashrrev_i32", sa, [Imm(31), a])
    s._valu("v_ashrrev_i32", sb, [Imm(31), b])
    s._valu("v_add_u32", ua, [a, sa])
    s._valu("v_xor_b32", ua, [ua, sa])  # |a| (INT_MIN stays 0x80000000, read unsigned)
    s._valu("v_add_u32", ub, [b, sb])
    s._valu("v_xor_b32", ub, [ub, sb])
    q, r = _udivmod_v(s, ua, ub)
    sg, res = s.vtmp(), s.vtmp()
    if want_rem:  # the remainder takes the dividend's sign
        s._valu("v_xor_b32", res, [r, sa])
        s._valu("v_sub_u32", res, [res, sa])
    else:
        s._valu("v_xor_b32", sg, [sa, sb])
        s._valu("v_xor_b32", res, [q, sg])
        s._valu("v_sub_u32", res, [res, sg])
    s._valu("v_cmp_eq_u32", None, [Imm(0), b])
    s._valu("v_cndmask_b32", d, [res, a if want_rem else s.to_v(Imm(-1))])


def _bfe_v(s: Selector, d: Operand, a: Operand, pos: Operand, ln: Operand, signed: bool) -> None:
    """PTX bfe: pos and len from 8 bits; fields past bit 31 clipped; sign from bit min(pos+len-1, 31)."""
    p, n, w, t, m = (s.vtmp() for _ in range(5))
    s._valu("v_and_b32", p, [Imm(0xFF), pos])
    s._valu("v_and_b32", n, [Imm(0xFF), ln])
    s._valu("v_min_u32", w, [p, s.to_v(Imm(32))])
    s._valu("v_sub_u32", w, [Imm(32), w])
    s._valu("v_min_u32", w, [w, n])  # width = min(len, 32 - min(pos, 32))
    _shift_v(s, Op.SHR, False, t, a, p)  # a >> pos (0 when pos >= 32)
    _shift_v(s, Op.SHL, False, m, s.to_v(Imm(-1)), w)
    s._valu("v_not_b32", m, [m])
    if not signed:
        s._valu("v_and_b32", d, [t, m])
        return
    msb, sb, fill = s.vtmp(), s.vtmp(), s.vtmp()
    s._valu("v_add_u32", msb, [p, n])
    s._valu("v_add_u32", msb, [Imm(-1), msb])
    s._valu("v_min_u32", msb, [msb, s.to_v(Imm(31))])
    s._valu("v_lshrrev_b32", sb, [msb, a])
    s._valu("v_and_b32", sb, [Imm(1), sb])
    s._valu("v_cmp_eq_u32", None, [Imm(0), n])
    s._valu("v_cndmask_b32", sb, [sb, s.to_v(Imm(0))])
    s._valu("v_sub_u32", fill, [Imm(0), sb])  # all ones when the sign bit is set
    s._valu("v_and_b32", t, [t, m])
    s._valu("v_not_b32", m, [m])
    s._valu("v_and_b32", fill, [fill, m])
    s._valu("v_or_b32", d, [t, fill])


def _bfi_v(s: Selector, d: Operand, a: Operand, pos: Operand, ln: Operand, e: Operand) -> None:
    p, n, w, m, ins = (s.vtmp() for _ in range(5))
    s._valu("v_and_b32", p, [Imm(0xFF), pos])
    s._valu("v_and_b32", n, [Imm(0xFF), ln])
    s._valu("v_min_u32", w, [p, s.to_v(Imm(32))])
    s._valu("v_sub_u32", w, [Imm(32), w])
    s._valu("v_min_u32", w, [w, n])
    _shift_v(s, Op.SHL, False, m, s.to_v(Imm(-1)), w)
    s._valu("v_not_b32", m, [m])
    _shift_v(s, Op.SHL, False, m, m, p)  # 0 when pos >= 32
    _shift_v(s, Op.SHL, False, ins, s.to_v(a), p)
    s._valu("v_bfi_b32", d, [m, ins, s.to_v(e)])


# ---- integer --------------------------------------------------------------------------------------
def _int(s: Selector, inst: Instruction) -> None:
    spec = inst.spec
    op, ops = spec.op, inst.operands
    signed = spec.signed
    if op is Op.MUL_WIDE:
        a, b = s.src(ops[1]), s.src(ops[2])
        dst = s.reg_range(ops[0].n, 2)  # type: ignore[attr-defined]
        # the high half goes to a temporary first: either half of the destination may be a source
        lo = _half(dst, 0)
        if is_s(dst):
            hi = s.stmp()
            s.emit("s_mul_hi_i32" if signed else "s_mul_hi_u32", hi, a, b)
            s.emit("s_mul_i32", lo, a, b)
            s.emit("s_mov_b32", _half(dst, 1), hi)
        else:
            hi = s.vtmp()
            s._valu("v_mul_hi_i32" if signed else "v_mul_hi_u32", hi, [a, b])
            s._valu("v_mul_lo_u32", lo, [a, b])
            s._valu("v_mov_b32", _half(dst, 1), [hi])
        return
    srcs = [s.src(o) for o in ops[1:]]
    dst = ops[0]
    if op in INT_OPS:
        sm, vm = INT_OPS[op]
        scalar_or_vector(s, dst, lambda d: s.emit(sm, d, *srcs), lambda d: s._valu(vm, d, srcs))
    elif op is Op.MUL_HI:
        scalar_or_vector(
            s,
            dst,
            lambda d: s.emit("s_mul_hi_i32" if signed else "s_mul_hi_u32", d, *srcs),
            lambda d: s._valu("v_mul_hi_i32" if signed else "v_mul_hi_u32", d, srcs),
        )
    elif op is Op.MAD_LO:

        def mad_s(d: Operand) -> None:
            t = s.stmp()
            s.emit("s_mul_i32", t, srcs[0], srcs[1])
            s.emit("s_add_u32", d, t, srcs[2])

        def mad_v(d: Operand) -> None:
            t = s.vtmp()
            s._valu("v_mul_lo_u32", t, srcs[:2])
            s._valu("v_add_u32", d, [t, srcs[2]])

        scalar_or_vector(s, dst, mad_s, mad_v)
    elif (op, signed) in MINMAX or op in (Op.MIN, Op.MAX):
        sm, vm = MINMAX[(op, signed)]
        scalar_or_vector(s, dst, lambda d: s.emit(sm, d, *srcs), lambda d: s._valu(vm, d, srcs))
    elif op is Op.CLAMP:
        lo = MINMAX[(Op.MAX, signed)]
        hi = MINMAX[(Op.MIN, signed)]

        def cl_s(d: Operand) -> None:  # (through a temporary: the bound may be d itself)
            t = s.stmp()
            s.emit(lo[0], t, srcs[0], srcs[1])
            s.emit(hi[0], d, t, srcs[2])

        def cl_v(d: Operand) -> None:
            t = s.vtmp()
            s._valu(lo[1], t, srcs[:2])
            s._valu(hi[1], d, [t, srcs[2]])

        scalar_or_vector(s, dst, cl_s, cl_v)
    elif op is Op.NEG:
        scalar_or_vector(
            s,
            dst,
            lambda d: s.emit("s_sub_u32", d, Imm(0), srcs[0]),
            lambda d: s._valu("v_sub_u32", d, [Imm(0), srcs[0]]),
        )
    elif op is Op.ABS:

        def abs_v(d: Operand) -> None:
            t = s.vtmp()
            s._valu("v_sub_u32", t, [Imm(0), srcs[0]])
            s._valu("v_max_i32", d, [srcs[0], t])

        scalar_or_vector(s, dst, lambda d: s.emit("s_abs_i32", d, srcs[0]), abs_v)
    elif op is Op.NOT:
        scalar_or_vector(s, dst, lambda d: s.emit("s_not_b32", d, srcs[0]), lambda d: s._valu("v_not_b32", d, srcs))
    elif op in (Op.SHL, Op.SHR):
        scalar_or_vector(
            s,
            dst,
            lambda d: _shift_s(s, op, signed, d, s.to_s(srcs[0]) if isinstance(srcs[0], Imm) else srcs[0], srcs[1]),
            lambda d: _shift_v(s, op, signed, d, srcs[0], srcs[1]),
        )
    elif op is Op.POPC:
        scalar_or_vector(
            s,
            dst,
            lambda d: s.emit("s_bcnt1_i32_b32", d, srcs[0]),
            lambda d: s._valu("v_bcnt_u32_b32", d, [srcs[0], Imm(0)]),
        )
    elif op is Op.CLZ:

        def clz_s(d: Operand) -> None:
            s.emit("s_flbit_i32_b32", d, srcs[0])
            s.emit("s_min_u32", d, d, Imm(32))

        def clz_v(d: Operand) -> None:
            s._valu("v_ffbh_u32", d, srcs)
            s._valu("v_min_u32", d, [d, s.to_v(Imm(32))])

        scalar_or_vector(s, dst, clz_s, clz_v)
    elif op is Op.BREV:
        scalar_or_vector(s, dst, lambda d: s.emit("s_brev_b32", d, srcs[0]), lambda d: s._valu("v_bfrev_b32", d, srcs))
    elif op in (Op.DIV, Op.REM):
        vector_into(s, dst, lambda d: _divrem(s, d, srcs[0], srcs[1], signed, op is Op.REM))
    elif op is Op.BFE:
        vector_into(s, dst, lambda d: _bfe_v(s, d, s.to_v(srcs[0]), s.to_v(srcs[1]), s.to_v(srcs[2]), signed))
    elif op is Op.BFI:
        vector_into(s, dst, lambda d: _bfi_v(s, d, srcs[0], s.to_v(srcs[1]), s.to_v(srcs[2]), srcs[3]))
    elif op is Op.DP4A:
        vector_into(s, dst, lambda d: s._valu("v_dot4_i32_i8" if signed else "v_dot4_u32_u8", d, srcs))
    else:
        raise Unsupported(f"kernel {s.k.name}, pc {s.pc}: {spec.name} is not selected")


# ---- moves ------------------------------------------------------------------------------------------
def _mov(s: Selector, inst: Instruction) -> None:
    d, a = inst.operands[0], inst.operands[1]
    if isinstance(d, Pred):
        _pred_write(s, d.n, lambda t: s.emit("s_mov_b64", t, s.pred(a.n)))  # type: ignore[union-attr]
        return
    if isinstance(d, Pair):
        dst = s.reg_range(d.n, 2)
        src = s.pair_src(a)
        for i in range(2):
            if is_s(dst):
                s.emit("s_mov_b32", _half(dst, i), _half(src, i))
            else:
                s._valu("v_mov_b32", _half(dst, i), [_half(src, i)])
        return
    if isinstance(a, SReg):
        val = s.sregs[SR(a.id)]
        scalar_or_vector(s, d, lambda t: s.emit("s_mov_b32", t, val), lambda t: s._valu("v_mov_b32", t, [val]))
        return
    v = s.src(a)
    scalar_or_vector(s, d, lambda t: s.emit("s_mov_b32", t, v), lambda t: s._valu("v_mov_b32", t, [v]))


# ---- predicates -------------------------------------------------------------------------------------
def _pred_write(s: Selector, n: int, fn) -> None:
    """Define predicate n by fn(t) (a 64-bit mask); under a partial EXEC only the active lanes'
    bits change (the others keep theirs)."""
    p = s.pred(n)
    if not s.div:
        fn(p)
        return
    t, keep = s.stmp(2), s.stmp(2)
    fn(t)
    s.emit("s_and_b64", t, t, EXEC)
    s.emit("s_andn2_b64", keep, p, EXEC)
    s.emit("s_or_b64", p, keep, t)


def _predop(s: Selector, inst: Instruction) -> None:
    op = inst.spec.op
    d = inst.operands[0]
    srcs = [s.pred(o.n) for o in inst.operands[1:]]  # type: ignore[union-attr]
    mn = {Op.AND: "s_and_b64", Op.OR: "s_or_b64", Op.XOR: "s_xor_b64", Op.NOT: "s_not_b64"}[op]
    _pred_write(s, d.n, lambda t: s.emit(mn, t, *srcs))  # type: ignore[union-attr]


def _setp(s: Selector, inst: Instruction) -> None:
    spec = inst.spec
    cmp = spec.variant
    assert isinstance(cmp, Cmp)
    d = inst.operands[0]
    assert isinstance(d, Pred)
    dt = spec.dtype
    uniform_dst = s.u.pred_uniform(d.n)
    if dt is T.F64:
        a, b = s.pair_src(inst.operands[1]), s.pair_src(inst.operands[2])
        mn = f"v_cmp_{CMP_F[cmp]}_f64"
    elif dt is T.F32:
        a, b = s.src(inst.operands[1]), s.src(inst.operands[2])
        mn = f"v_cmp_{CMP_F[cmp]}_f32"
    else:
        a, b = s.src(inst.operands[1]), s.src(inst.operands[2])
        ty = "i32" if spec.signed else "u32"
        if (uniform_dst and not isinstance(a, Imm)) or (uniform_dst and is_s(b)):
            scmp = {"ne": "lg"}.get(CMP_INT[cmp], CMP_INT[cmp])

            def sc(t: Operand) -> None:
                x = a if not isinstance(a, Imm) else s.to_s(a)
                s.emit(f"s_cmp_{scmp}_{ty}", x, b, ndefs=0)
                s.emit("s_cselect_b64", t, Imm(-1), Imm(0))

            _pred_write(s, d.n, sc)
            return
        mn = f"v_cmp_{CMP_INT[cmp]}_{ty}"

    def vc(t: Operand) -> None:
        _vcmp(s, mn, t, a, b)
        if uniform_dst:  # all ones or zero: the lanes agree (uniform operands)
            s.emit("s_and_b64", t, t, EXEC)
            s.emit("s_cmp_lg_u64", t, Imm(0), ndefs=0)
            s.emit("s_cselect_b64", t, Imm(-1), Imm(0))

    _pred_write(s, d.n, vc)


def _vcmp(s: Selector, mn: str, t: Operand, a: Operand, b: Operand) -> None:
    """v_cmp into an SGPR pair (VOP3 form: no literal, one SGPR)."""
    FAMILY.setdefault(mn, "VOPC")
    srcs = [a, b]
    for i, x in enumerate(srcs):
        if isinstance(x, Imm) and not _inl(x):
            srcs[i] = s.to_v(x)
    if sum(1 for x in srcs if is_s(x)) > 1 and srcs[0] != srcs[1]:
        srcs[1] = s.to_v(srcs[1])
    s.emit(mn + "_e64", t, *srcs)


def _inl(x: Imm) -> bool:
    return inline32(x.value)


def _select(s: Selector, inst: Instruction) -> None:
    spec = inst.spec
    d = inst.operands[0]
    if spec.op is Op.SELP:
        p = s.pred(inst.operands[3].n)  # type: ignore[attr-defined]
        uniform_p = s.u.pred_uniform(inst.operands[3].n)  # type: ignore[attr-defined]
        if isinstance(d, Pair):
            dst = s.reg_range(d.n, 2)
            a, b = s.pair_src(inst.operands[1]), s.pair_src(inst.operands[2])
            if is_s(dst):
                s.emit("s_cmp_lg_u64", p, Imm(0), ndefs=0)
                s.emit("s_cselect_b64", dst, a, b)
            else:
                for i in range(2):
                    _cndmask(s, _half(dst, i), _half(b, i), _half(a, i), p)
            return
        a, b = s.src(inst.operands[1]), s.src(inst.operands[2])
        if s.dst_is_s(d) and uniform_p:

            def sel_s(t: Operand) -> None:
                s.emit("s_cmp_lg_u64", p, Imm(0), ndefs=0)
                s.emit("s_cselect_b32", t, a, b)

            s.write(d, sel_s)
            return
        vector_into(s, d, lambda t: _cndmask(s, t, b, a, p))
        return
    a, b = s.src(inst.operands[1]), s.src(inst.operands[2])
    c = s.src(inst.operands[3])
    m = s.stmp(2)
    mn = "v_cmp_ge_f32" if spec.dtype is T.F32 or inst.spec.operands[3].dtype is T.F32 else "v_cmp_ge_i32"

    def sl(t: Operand) -> None:
        _vcmp(s, mn, m, c, Imm(0))
        _cndmask(s, t, b, a, m)

    vector_into(s, d, sl)


def _cndmask(s: Selector, d: Operand, f: Operand, t: Operand, mask: Operand) -> None:
    """d = mask ? t : f per lane (VOP3 form with the mask in an SGPR pair)."""
    f = f if is_v(f) or (isinstance(f, Imm) and _inl(f)) else s.to_v(f)
    t = t if is_v(t) or (isinstance(t, Imm) and _inl(t)) else s.to_v(t)
    s.emit("v_cndmask_b32_e64", d, f, t, mask)


# ---- floating point -------------------------------------------------------------------------------
def _f32(s: Selector, inst: Instruction) -> None:
    spec = inst.spec
    op = spec.op
    d = inst.operands[0]
    srcs = [s.src(o) for o in inst.operands[1:]]
    if op in (Op.NEG, Op.ABS):
        mn, k = ("xor_b32", 0x80000000) if op is Op.NEG else ("and_b32", NAN32)
        scalar_or_vector(
            s, d, lambda t: s.emit("s_" + mn, t, srcs[0], Imm(k)), lambda t: s._valu("v_" + mn, t, [Imm(k), srcs[0]])
        )
        return

    def body(t: Operand) -> None:
        if op in F32_BIN:
            s._valu(F32_BIN[op], t, srcs)
        elif op is Op.FMA:
            s._valu("v_fma_f32", t, srcs)
        elif op in APPROX:
            _approx(s, op, t, s.to_v(srcs[0]))
        elif op is Op.DIV:
            _fdiv32(s, t, srcs[0], srcs[1])
        elif op is Op.SQRT:
            _fsqrt32(s, t, srcs[0])
        elif op in (Op.MIN, Op.MAX):
            _fminmax(s, t, srcs[0], srcs[1], op is Op.MIN)
        elif op is Op.CLAMP:  # (through a temporary: the upper bound may be t itself)
            m = s.vtmp()
            _fminmax(s, m, srcs[0], srcs[1], False)
            _fminmax(s, t, m, srcs[2], True)
        elif op is Op.FRACT:
            s._valu("v_fract_f32", t, srcs)
        elif op is Op.SAT:  # NaN and x < 0 give +0, x > 1 gives 1, -0 stays (DESIGN section 3)
            x = s.to_v(srcs[0])
            lo, hi = s.stmp(2), s.stmp(2)
            _vcmp(s, "v_cmp_nge_f32", lo, x, Imm(0))
            _vcmp(s, "v_cmp_gt_f32", hi, x, Imm(0x3F800000))
            _cndmask(s, t, x, Imm(0), lo)
            _cndmask(s, t, t, Imm(0x3F800000), hi)
            return
        else:
            raise Unsupported(f"kernel {s.k.name}, pc {s.pc}: {spec.name} is not selected")
        if not s.nan.bare(s.pc, spec.key):  # codegen/canonical: canonical here, or where observed
            canon32(s, t)

    vector_into(s, d, body)


# (threshold test, input scale, result fix) per approximate op: the hardware's v_exp/v_log/v_rcp/
# v_rsq neither take nor give denormals, so inputs that would need them are scaled first
F_2_126 = 0x7E800000  # 2^126
F_2_M126 = 0x00800000  # 2^-126 (smallest normal)


def _approx(s: Selector, op: Op, t: Operand, x: Operand) -> None:
    c = s.stmp(2)
    y, r = s.vtmp(), s.vtmp()
    if op is Op.EXP2:  # x < -126: 2^(x+64) * 2^-64
        _vcmp(s, "v_cmp_gt_f32", c, s.to_v(Imm(0xC2FC0000)), x)  # -126.0 > x
        s._valu("v_add_f32", y, [Imm(0x42800000), x])
        _cndmask(s, y, x, y, c)
        s._valu("v_exp_f32", r, [y])
        s._valu("v_mul_f32", y, [Imm(0x1F800000), r])  # 2^-64
        _cndmask(s, t, r, y, c)
    elif op is Op.LOG2:  # denormal x: log2(x * 2^32) - 32
        _vcmp(s, "v_cmp_gt_f32", c, s.to_v(Imm(F_2_M126)), x)
        s._valu("v_mul_f32", y, [Imm(0x4F800000), x])
        _cndmask(s, y, x, y, c)
        s._valu("v_log_f32", r, [y])
        s._valu("v_add_f32", y, [Imm(0xC2000000), r])  # -32.0
        _cndmask(s, t, r, y, c)
    elif op is Op.RCP:
        # |x| >= 2^126 (a denormal result): rcp(x * 2^-32) * 2^-32; a denormal x (|x| < 2^-126,
        # whose reciprocal is finite above 2^-128): rcp(x * 2^32) * 2^32; the scale is a power of
        # two, so both products are exact (or overflow to inf where 1/x does)
        a, k = s.vtmp(), s.vtmp()
        s._valu("v_and_b32", a, [Imm(NAN32), x])
        _vcmp(s, "v_cmp_le_u32", c, s.to_v(Imm(F_2_126)), a)  # 2^126 <= |x| (as bits; NaN and inf too)
        _cndmask(s, k, Imm(0x3F800000), s.const_v(0x2F800000), c)  # 1.0 or 2^-32
        _vcmp(s, "v_cmp_gt_u32", c, s.to_v(Imm(F_2_M126)), a)  # |x| < 2^-126 (zeros too: inf either way)
        _cndmask(s, k, k, s.const_v(0x4F800000), c)  # 2^32
        s._valu("v_mul_f32", y, [k, x])
        s._valu("v_rcp_f32", r, [y])
        s._valu("v_mul_f32", t, [k, r])
    else:  # rsqrt of a denormal x: rsq(x * 2^24) * 2^12
        a = s.vtmp()
        s._valu("v_and_b32", a, [Imm(NAN32), x])
        _vcmp(s, "v_cmp_gt_u32", c, s.to_v(Imm(F_2_M126)), a)  # |x| < 2^-126 (zeros too: rsq(0) = inf either way)
        s._valu("v_mul_f32", y, [Imm(0x4B800000), x])  # 2^24
        _cndmask(s, y, x, y, c)
        s._valu("v_rsq_f32", r, [y])
        s._valu("v_mul_f32", y, [Imm(0x45800000), r])  # 2^12
        _cndmask(s, t, r, y, c)


def f32_key(s: Selector, x: Operand, is_min: bool) -> VR:
    """An unsigned integer ordered like the f32 x (-0 below +0); a NaN gets the key that loses
    (the largest for min, 0 for max), so integer min/max give minNum/maxNum exactly."""
    x = s.to_v(x)
    sgn, k = s.vtmp(), s.vtmp()
    s._valu("v_ashrrev_i32", sgn, [Imm(31), x])
    s._valu("v_or_b32", sgn, [Imm(0x80000000), sgn])
    s._valu("v_xor_b32", k, [x, sgn])  # x ^ 0x80000000 when positive, ~x when negative
    nan = s.stmp(2)
    _vcmp(s, "v_cmp_u_f32", nan, x, x)
    _cndmask(s, k, k, Imm(-1) if is_min else Imm(0), nan)
    return k


def f32_unkey(s: Selector, t: Operand, k: Operand) -> None:
    """The inverse of f32_key (a lost NaN key comes back as a NaN; canon32 makes it canonical)."""
    m = s.vtmp()
    s._valu("v_ashrrev_i32", m, [Imm(31), s.to_v(k)])
    s._valu("v_not_b32", m, [m])
    s._valu("v_or_b32", m, [Imm(0x80000000), m])
    s._valu("v_xor_b32", t, [k, m])


def _fminmax(s: Selector, t: Operand, a: Operand, b: Operand, is_min: bool) -> None:
    """minNum/maxNum with -0 below +0 (DESIGN section 3) through order-preserving integer keys:
    exact whatever the hardware's v_min_f32 does with signed zeros and signalling NaNs."""
    ka, kb = f32_key(s, a, is_min), f32_key(s, b, is_min)
    k = s.vtmp()
    s._valu("v_min_u32" if is_min else "v_max_u32", k, [ka, kb])
    f32_unkey(s, t, k)


def _fdiv32(s: Selector, d: Operand, a: Operand, b: Operand) -> None:
    a, b = s.to_v(a), s.to_v(b)
    den, num, r, e, q = (s.vtmp() for _ in range(5))
    junk = s.stmp(2)
    s.emit("v_div_scale_f32", den, junk, b, b, a, ndefs=2)
    s.emit("v_div_scale_f32", num, VCC, a, b, a, ndefs=2)
    s.emit("v_rcp_f32", r, den)
    s.emit("v_fma_f32", e, _neg(den), r, Imm(1.0 and 0x3F800000))
    s.emit("v_fma_f32", r, e, r, r)
    s.emit("v_mul_f32", q, num, r)
    s.emit("v_fma_f32", e, _neg(den), q, num)
    s.emit("v_fma_f32", q, e, r, q)
    s.emit("v_fma_f32", e, _neg(den), q, num)
    s.emit("v_div_fmas_f32", q, e, r, q, imp_uses=(VCC,))
    s.emit("v_div_fixup_f32", d, q, b, a)


def _fsqrt32(s: Selector, d: Operand, a: Operand) -> None:
    """Correctly rounded sqrt: scale tiny inputs by 2^32, take the estimate, step one ulp down or
    up when the fma residual says so, unscale by 2^-16; zeros and +inf pass through."""
    a = s.to_v(a)
    x, r, dn, up, rd, ru = (s.vtmp() for _ in range(6))
    small = s.stmp(2)
    _vcmp(s, "v_cmp_gt_f32", small, s.to_v(Imm(0x0F800000)), a)  # a < 2^-96
    big = s.to_v(Imm(0x4F800000))  # 2^32
    s.emit("v_mul_f32", x, big, a)
    _cndmask(s, x, a, x, small)
    s.emit("v_sqrt_f32", r, x)
    s._valu("v_add_u32", dn, [Imm(-1), r])
    s._valu("v_add_u32", up, [Imm(1), r])
    s.emit("v_fma_f32", rd, _neg(dn), r, x)
    s.emit("v_fma_f32", ru, _neg(up), r, x)
    m = s.stmp(2)
    _vcmp(s, "v_cmp_ge_f32", m, Imm(0), rd)  # residual <= 0: the estimate was too big
    _cndmask(s, r, r, dn, m)
    _vcmp(s, "v_cmp_lt_f32", m, Imm(0), ru)  # residual > 0: too small
    _cndmask(s, r, r, up, m)
    lo = s.to_v(Imm(0x37800000))  # 2^-16
    sc = s.vtmp()
    s.emit("v_mul_f32", sc, lo, r)
    _cndmask(s, r, r, sc, small)
    # v_cmp_class: +-0 (bits 5, 6) and +inf (bit 9) give the input back
    _vcmp(s, "v_cmp_class_f32", m, x, s.to_v(Imm(0x260)))
    _cndmask(s, d, r, x, m)


def _neg(o: Operand) -> Operand:
    from .ir import Neg

    return Neg(o)


def _f64(s: Selector, inst: Instruction) -> None:
    spec = inst.spec
    op = spec.op
    d = inst.operands[0]
    dst = s.reg_range(d.n, 2)  # type: ignore[attr-defined]
    srcs = [s.pair_src(o) for o in inst.operands[1:]]
    if op in (Op.NEG, Op.ABS):
        mn, k = ("xor_b32", 0x80000000) if op is Op.NEG else ("and_b32", NAN32)
        if is_s(dst):
            s.emit("s_mov_b32", _half(dst, 0), _half(srcs[0], 0))
            s.emit("s_" + mn, _half(dst, 1), _half(srcs[0], 1), Imm(k))
        else:
            s._valu("v_mov_b32", _half(dst, 0), [_half(srcs[0], 0)])
            s._valu("v_" + mn, _half(dst, 1), [Imm(k), _half(srcs[0], 1)])
        return
    t = dst if is_v(dst) else s.vtmp(2)
    if sum(1 for x in srcs if is_s(x)) > 1:
        srcs = [srcs[0]] + [_vpair(s, x) if is_s(x) else x for x in srcs[1:]]
    if op is Op.ADD:
        s.emit("v_add_f64", t, *srcs)
    elif op is Op.SUB:
        s.emit("v_add_f64", t, srcs[0], _neg(srcs[1]))
    elif op is Op.MUL:
        s.emit("v_mul_f64", t, *srcs)
    elif op is Op.FMA:
        s.emit("v_fma_f64", t, *srcs)
    elif op is Op.DIV:
        _fdiv64(s, t, srcs[0], srcs[1])
    elif op is Op.SQRT:
        _fsqrt64(s, t, srcs[0])
    elif op in (Op.MIN, Op.MAX):
        # quiet both (an sNaN would win), v_min/v_max, then two zeros: -0 below +0 exactly
        qa, qb = s.vtmp(2), s.vtmp(2)
        s.emit("v_max_f64", qa, srcs[0], srcs[0])
        s.emit("v_max_f64", qb, srcs[1], srcs[1])
        s.emit("v_min_f64" if op is Op.MIN else "v_max_f64", t, qa, qb)
        mag, hi, zero = s.vtmp(), s.vtmp(), s.stmp(2)
        s._valu("v_or_b32", mag, [Sub(qa, 1), Sub(qb, 1)])
        s._valu("v_and_b32", mag, [Imm(NAN32), mag])
        s._valu("v_or3_b32", mag, [mag, Sub(qa, 0), Sub(qb, 0)])
        _vcmp(s, "v_cmp_eq_u32", zero, Imm(0), mag)  # both +-0
        s._valu("v_or_b32" if op is Op.MIN else "v_and_b32", hi, [Sub(qa, 1), Sub(qb, 1)])
        _cndmask(s, _half(t, 1), _half(t, 1), hi, zero)
    else:
        raise Unsupported(f"kernel {s.k.name}, pc {s.pc}: {spec.name} is not selected")
    if not s.nan.bare(s.pc, spec.key):
        canon64(s, t)
    if t is not dst:
        for i in range(2):
            s.emit("v_readfirstlane_b32", _half(dst, i), _half(t, i))


def _fdiv64(s: Selector, d: Operand, a: Operand, b: Operand) -> None:
    """Correctly rounded f64 division: scale, two Newton steps on the reciprocal, one on the
    quotient, v_div_fmas (VCC from the numerator's scaling), v_div_fixup for the special cases."""
    a = a if is_v(a) else _vpair(s, a)
    b = b if is_v(b) else _vpair(s, b)
    den, num, r, e, q = (s.vtmp(2) for _ in range(5))
    junk = s.stmp(2)
    one = Raw("1.0")  # the inline constant: 1.0 as an f64 operand
    s.emit("v_div_scale_f64", den, junk, b, b, a, ndefs=2)
    s.emit("v_rcp_f64", r, den)
    s.emit("v_fma_f64", e, _neg(den), r, one)
    s.emit("v_fma_f64", r, r, e, r)
    s.emit("v_fma_f64", e, _neg(den), r, one)
    s.emit("v_fma_f64", r, r, e, r)
    s.emit("v_div_scale_f64", num, VCC, a, b, a, ndefs=2)
    s.emit("v_mul_f64", q, num, r)
    s.emit("v_fma_f64", e, _neg(den), q, num)
    s.emit("v_div_fmas_f64", q, e, r, q, imp_uses=(VCC,))
    s.emit("v_div_fixup_f64", d, q, b, a)


def _fsqrt64(s: Selector, d: Operand, x: Operand) -> None:
    """f64 square root as LLVM lowers llvm.sqrt.f64 (its IEEE, correctly rounded form): inputs
    below 2^-767 scaled by 2^256, v_rsq_f64, a Goldschmidt step for sqrt and 1/(2 sqrt), two
    fma-residual corrections, the result scaled back by 2^-128; +-0 and +inf pass through."""
    x = x if is_v(x) else _vpair(s, x)
    tiny = s.vtmp(2)
    s.emit("v_mov_b32", Sub(tiny, 0), Imm(0))
    s.emit("v_mov_b32", Sub(tiny, 1), Imm(0x10000000))  # 2^-767
    small, cls = s.stmp(2), s.stmp(2)
    _vcmp(s, "v_cmp_gt_f64", small, tiny, x)
    up, dn = s.vtmp(), s.vtmp()
    _cndmask(s, up, Imm(0), s.to_v(Imm(256)), small)
    _cndmask(s, dn, Imm(0), s.to_v(Imm(-128)), small)
    xs, y, g, h, r, e = (s.vtmp(2) for _ in range(6))
    half = Raw("0.5")
    s.emit("v_ldexp_f64", xs, x, up)
    s.emit("v_rsq_f64", y, xs)
    s.emit("v_mul_f64", g, xs, y)
    s.emit("v_mul_f64", h, y, half)
    s.emit("v_fma_f64", r, _neg(h), g, half)
    s.emit("v_fma_f64", g, g, r, g)
    s.emit("v_fma_f64", h, h, r, h)
    for _ in range(2):
        s.emit("v_fma_f64", e, _neg(g), g, xs)
        s.emit("v_fma_f64", g, e, h, g)
    s.emit("v_ldexp_f64", r, g, dn)
    _vcmp(s, "v_cmp_class_f64", cls, xs, s.to_v(Imm(0x260)))  # +-0, +inf
    _cndmask(s, _half(d, 0), Sub(r, 0), Sub(xs, 0), cls)
    _cndmask(s, _half(d, 1), Sub(r, 1), Sub(xs, 1), cls)


def _vpair(s: Selector, x: Operand) -> Operand:
    t = s.vtmp(2)
    s.emit("v_mov_b32", Sub(t, 0), _half(x, 0))
    s.emit("v_mov_b32", Sub(t, 1), _half(x, 1))
    return t


F16_OPS = {Op.ADD: "v_add_f16", Op.SUB: "v_sub_f16", Op.MUL: "v_mul_f16", Op.FMA: "v_fma_f16"}
PK_F16_OPS = {Op.ADD: "v_pk_add_f16", Op.MUL: "v_pk_mul_f16", Op.FMA: "v_pk_fma_f16"}
BF16_VIA_F32 = {Op.ADD: "v_add_f32", Op.SUB: "v_sub_f32", Op.MUL: "v_mul_f32"}


def _canon16(s: Selector, t: Operand, x: Operand) -> None:
    """t = the f16 in x's low half, NaN made 0x7FFF, high half zero."""
    s._valu("v_cmp_u_f16", None, [x, x])
    s._valu("v_cndmask_b32", t, [x, s.const_v(0x7FFF)])
    s._valu("v_and_b32", t, [Imm(0xFFFF), t])


def _bf16_round(s: Selector, t: Operand, f: Operand) -> None:
    """t = f32 f rounded to bf16 (nearest even) in the low half, NaN 0x7FFF, high half zero."""
    r = s.vtmp()
    s._valu("v_bfe_u32", r, [f, Imm(16), Imm(1)])
    s._valu("v_add3_u32", r, [f, r, s.const_v(0x7FFF)])
    s._valu("v_lshrrev_b32", r, [Imm(16), r])
    s._valu("v_cmp_u_f32", None, [f, f])
    s._valu("v_cndmask_b32", t, [r, s.const_v(0x7FFF)])


def _f16(s: Selector, inst: Instruction) -> None:
    """f16 natively (correctly rounded, denormals kept: mode 3), bf16 through f32: a bf16 sum,
    difference or product rounded to f32 and then to bf16 equals the one rounding (24 >= 2*8+2)."""
    spec = inst.spec
    op, dt = spec.op, spec.dtype
    d = inst.operands[0]
    srcs = [s.to_v(s.src(o)) for o in inst.operands[1:]]
    packed = dt in (T.F16X2, T.BF16X2)

    def lane_half(x: Operand, hi: bool) -> Operand:
        if not hi:
            return x
        h = s.vtmp()
        s._valu("v_lshrrev_b32", h, [Imm(16), x])
        return h

    def body(t: Operand) -> None:
        if dt in (T.F16, T.F16X2):
            if packed:
                r = s.vtmp()
                s.emit(PK_F16_OPS[op], r, *srcs)
                lo, hi = s.vtmp(), s.vtmp()
                _canon16(s, lo, r)
                _canon16(s, hi, lane_half(r, True))
                s._valu("v_lshl_or_b32", t, [hi, Imm(16), lo])
                return
            r = s.vtmp()
            s._valu(F16_OPS[op], r, srcs)
            _canon16(s, t, r)
            return
        halves = []
        for hi in (False, True) if packed else (False,):
            fs = []
            for x in srcs:
                f = s.vtmp()
                if hi:
                    s._valu("v_and_b32", f, [Imm(0xFFFF0000), x])
                else:
                    s._valu("v_lshlrev_b32", f, [Imm(16), x])
                fs.append(f)
            f32 = s.vtmp()
            s._valu(BF16_VIA_F32[op], f32, fs)
            h = s.vtmp()
            _bf16_round(s, h, f32)
            halves.append(h)
        if packed:
            s._valu("v_lshl_or_b32", t, [halves[1], Imm(16), halves[0]])
        else:
            s._valu("v_mov_b32", t, [halves[0]])

    vector_into(s, d, body)


# ---- conversions -----------------------------------------------------------------------------------
def _cvt(s: Selector, inst: Instruction) -> None:
    spec = inst.spec
    dto = spec.operands[0].dtype
    dfrom = spec.operands[1].dtype
    rnd = spec.variant
    d, a = inst.operands[0], inst.operands[1]
    if dfrom is T.F64 or dto is T.F64:
        src = s.pair_src(a) if dfrom is T.F64 else s.src(a)
        if dto is T.F64:
            dst = s.reg_range(d.n, 2)  # type: ignore[attr-defined]
            t = dst if is_v(dst) else s.vtmp(2)
            if dfrom is T.F64:
                s.emit(ROUND_F64[rnd], t, src)  # type: ignore[index]
                if not s.nan.bare(s.pc, spec.key):
                    canon64(s, t)
            else:
                mn = {T.F32: "v_cvt_f64_f32", T.S32: "v_cvt_f64_i32", T.U32: "v_cvt_f64_u32"}[dfrom]
                s.emit(mn, t, src)
                if dfrom is T.F32 and not s.nan.bare(s.pc, spec.key):
                    canon64(s, t)
            if t is not dst:
                for i in range(2):
                    s.emit("v_readfirstlane_b32", _half(dst, i), _half(t, i))
            return
        mn = {T.F32: "v_cvt_f32_f64", T.S32: "v_cvt_i32_f64", T.U32: "v_cvt_u32_f64"}[dto]

        def from64(t: Operand) -> None:
            if rnd is Rounding.RZ:  # MODE.FP_ROUND[1:0] (f32 results): 3 = toward zero, then back to 0
                s.emit("s_setreg_imm32_b32", Raw("hwreg(HW_REG_MODE, 0, 2)"), Imm(3), ndefs=0)
                s.emit(mn, t, src)
                s.emit("s_setreg_imm32_b32", Raw("hwreg(HW_REG_MODE, 0, 2)"), Imm(0), ndefs=0)
            else:
                s.emit(mn, t, src)
            if dto is T.F32 and not s.nan.bare(s.pc, spec.key):
                canon32(s, t)

        vector_into(s, d, from64)
        return

    def body(t: Operand) -> None:
        x = a_v
        if dto is T.F32 and dfrom is T.F32:
            s._valu(ROUND_F32[rnd], t, [x])  # type: ignore[index]
            if not s.nan.bare(s.pc, spec.key):
                canon32(s, t)
        elif dto is T.F32 and dfrom in (T.S32, T.U32):
            s._valu("v_cvt_f32_i32" if dfrom is T.S32 else "v_cvt_f32_u32", t, [x])
        elif dfrom is T.F32 and dto in (T.S32, T.U32):
            if rnd is not None:
                r = s.vtmp()
                s._valu(ROUND_F32[rnd], r, [x])
                x = r
            s._valu("v_cvt_i32_f32" if dto is T.S32 else "v_cvt_u32_f32", t, [x])
        elif dto is T.F16 and dfrom is T.F32:
            s._valu("v_cvt_f16_f32", t, [x])
            s._valu("v_and_b32", t, [Imm(0xFFFF), t])
            s._valu("v_cmp_u_f32", None, [x, x])
            s._valu("v_cndmask_b32", t, [t, s.const_v(0x7FFF)])
        elif dto is T.F32 and dfrom is T.F16:
            s._valu("v_cvt_f32_f16", t, [x])
            canon32(s, t)
        elif dto is T.BF16 and dfrom is T.F32:
            r = s.vtmp()
            s._valu("v_bfe_u32", r, [x, Imm(16), Imm(1)])
            s._valu("v_add3_u32", r, [x, r, s.to_v(Imm(0x7FFF))])
            s._valu("v_lshrrev_b32", t, [Imm(16), r])
            s._valu("v_cmp_u_f32", None, [x, x])
            s._valu("v_cndmask_b32", t, [t, s.const_v(0x7FFF)])
        elif dto is T.F32 and dfrom is T.BF16:
            s._valu("v_lshlrev_b32", t, [Imm(16), x])
            canon32(s, t)
        else:
            raise Unsupported(f"kernel {s.k.name}, pc {s.pc}: {spec.name} is not selected")

    a_v = s.src(a)
    vector_into(s, d, body)


# ---- memory ---------------------------------------------------------------------------------------
def _addr(s: Selector, m: Mem, lo: int, hi: int) -> tuple[Operand, int]:
    """A VGPR address and a folded immediate offset in [lo, hi]."""
    off = m.offset
    if m.base is None:
        return s.to_v(Imm(off & 0xFFFFFFFF)), 0
    base = s.reg(m.base)
    if lo <= off <= hi:
        return s.to_v(base), off
    t = s.vtmp()
    s._valu("v_add_u32", t, [Imm(off & 0xFFFFFFFF), base])
    return t, 0


def _dst_range(s: Selector, o: object) -> tuple[Operand, int]:
    if isinstance(o, Reg):
        return s.reg(o.n), 1
    if isinstance(o, Pair):
        return s.reg_range(o.n, 2), 2
    assert isinstance(o, Vec)
    return (s.reg_range(o.n, o.count) if o.count > 1 else s.reg(o.n)), o.count


def _load(s: Selector, inst: Instruction) -> None:
    spec = inst.spec
    d, m = inst.operands[0], inst.operands[1]
    assert isinstance(m, Mem)
    w = spec.width
    signed = spec.signed and w < 4
    if isinstance(d, Reg) and d.sel != 0:  # into a sub-register: load whole, then insert
        tmp = s.vtmp()
        _load_into(s, spec, tmp, 1, m, w, signed)
        vector_into(s, d, lambda t: s._valu("v_mov_b32", t, [tmp]))
        return
    dst, n = _dst_range(s, d)
    if spec.space is Space.CONST and w >= 4 and is_s(dst):
        # uniform address into SGPRs: scalar load from constant memory (read-only, so the scalar
        # cache cannot be stale)
        off = s.stmp()
        if m.base is None:
            s.emit("s_mov_b32", off, Imm(m.offset & 0xFFFFFFFF))
        else:
            s.emit("s_add_u32", off, s.reg(m.base), Imm(m.offset & 0xFFFFFFFF))
        q = s.stmp(n) if n > 1 else dst
        s.emit(SMEM_LOAD[w], q, s.cmem, off)
        if q is not dst:
            for i in range(n):
                s.emit("s_mov_b32", _half(dst, i), _half(q, i))
        return
    t = dst if is_v(dst) else s.vtmp(n)
    _load_into(s, spec, t, n, m, w, signed)
    if t is not dst:
        for i in range(n):
            s.emit("v_readfirstlane_b32", _half(dst, i) if n > 1 else dst, _half(t, i) if n > 1 else t)


def _load_into(s: Selector, spec: InstrSpec, t: Operand, n: int, m: Mem, w: int, signed: bool) -> None:
    if spec.space is Space.LOCAL:
        addr, off = _addr(s, m, 0, 65535)
        s.emit(LOAD_DS[(w, signed)], t, addr, mods=f"offset:{off}" if off else "")
    else:
        base = s.mem if spec.space is Space.GLOBAL else s.cmem
        addr, off = _addr(s, m, *GLOBAL_OFFSETS)
        s.emit(f"global_load_{LOAD_GLOBAL[(w, signed)]}", t, addr, base, mods=f"offset:{off}" if off else "")


def _data(s: Selector, o: object, n: int) -> Operand:
    """Store data in VGPRs: a register, pair or vector (copied when uniform)."""
    if isinstance(o, (Reg, WImm)):
        return s.to_v(s.src(o))
    if isinstance(o, Pair):
        r = s.reg_range(o.n, 2)
    elif isinstance(o, Vec):
        r = s.reg_range(o.n, o.count) if o.count > 1 else s.reg(o.n)
    else:
        raise AssertionError(o)
    if is_v(r):
        return r
    t = s.vtmp(n)
    for i in range(n):
        s.emit("v_mov_b32", Sub(t, i) if n > 1 else t, _half(r, i) if n > 1 else r)
    return t


def _store(s: Selector, inst: Instruction) -> None:
    spec = inst.spec
    m, v = inst.operands[0], inst.operands[1]
    assert isinstance(m, Mem)
    w = spec.width
    data = _data(s, v, max(1, w // 4))
    if spec.space is Space.LOCAL:
        addr, off = _addr(s, m, 0, 65535)
        s.emit(STORE_DS[w], addr, data, ndefs=0, mods=f"offset:{off}" if off else "")
    else:
        addr, off = _addr(s, m, *GLOBAL_OFFSETS)
        s.emit(f"global_store_{STORE_GLOBAL[w]}", addr, data, s.mem, ndefs=0, mods=f"offset:{off}" if off else "")


def _atomic(s: Selector, inst: Instruction) -> None:
    spec = inst.spec
    ret = spec.op is Op.ATOM
    ops = list(inst.operands)
    d = ops.pop(0) if ret else None
    m = ops[0]
    assert isinstance(m, Mem)
    vals = [s.to_v(s.src(o)) for o in ops[1:]]
    aop = spec.variant
    assert isinstance(aop, AtomOp)
    ty = spec.dtype
    assert ty is not None

    def body(t: Operand | None) -> None:
        if spec.space is Space.LOCAL:
            addr, off = _addr(s, m, 0, 65535)
            mods = f"offset:{off}" if off else ""
            mn = ds_atomic(aop, ty, returns=t is not None)  # DS cmpst: compare first, then the new value
            if "_rtn_" in mn:  # exchange returns the old value even when nothing reads it
                s.emit(mn, t if t is not None else s.vtmp(), addr, *vals, mods=mods)
            else:
                s.emit(mn, addr, *vals, ndefs=0, mods=mods)
            return
        addr, off = _addr(s, m, *GLOBAL_OFFSETS)
        mods = f"offset:{off}" if off else ""
        data: Operand = vals[0]
        if aop is AtomOp.CAS:  # global cmpswap data = {new, compare}
            pair = s.vtmp(2)
            s.emit("v_mov_b32", Sub(pair, 0), vals[1])
            s.emit("v_mov_b32", Sub(pair, 1), vals[0])
            data = pair
        if t is not None:
            s.emit(global_atomic(aop, ty), t, addr, data, s.mem, mods=(mods + " " + s.t.glc).strip())
        else:
            s.emit(global_atomic(aop, ty), addr, data, s.mem, ndefs=0, mods=mods)

    if d is None:
        body(None)
    else:
        vector_into(s, d, body)


def _fence(s: Selector, scope: Scope) -> None:
    from .ir import MI

    s.mis.append(MI("s_waitcnt", [], 0, "vmcnt(0) lgkmcnt(0)", comment=f"fence.{scope.value}"))
    if scope is Scope.DEVICE:
        for text in s.t.release("device") + s.t.acquire("device"):
            mn, _, mods = text.partition(" ")
            s.emit(mn, ndefs=0, mods=mods)
            if mn == "buffer_wbl2":
                s.mis.append(MI("s_waitcnt", [], 0, "vmcnt(0)"))


# ---- wave operations ------------------------------------------------------------------------------
def _lane(s: Selector) -> VR:
    t = s.vtmp()
    s.emit("v_mbcnt_lo_u32_b32", t, Imm(-1), Imm(0))
    s.emit("v_mbcnt_hi_u32_b32", t, Imm(-1), t)
    return t


def f32_key_of(bits: int, is_min: bool) -> int:
    """The key f32_key computes for the f32 constant `bits`."""
    if (bits & 0x7F800000) == 0x7F800000 and bits & 0x007FFFFF:  # a NaN: the key that loses
        return 0xFFFFFFFF if is_min else 0
    return bits ^ (0xFFFFFFFF if bits >> 31 else 0x80000000)


def identity(op: ReduceOp, t: DataType) -> int:
    """What inactive lanes hold in a wave reduction or prefix: the operator's identity
    (isa.semantics.REDUCTIONS), for f32 as its f32_key (min and max run on keys)."""
    bits = sem.REDUCTIONS[(op, t)].identity
    return f32_key_of(bits, op is ReduceOp.MIN) if t is T.F32 else bits


DPP_REDUCE = (
    ("quad_perm:[1,0,3,2]", "0xf"),
    ("quad_perm:[2,3,0,1]", "0xf"),
    ("row_half_mirror", "0xf"),
    ("row_mirror", "0xf"),
    ("row_bcast:15", "0xa"),
    ("row_bcast:31", "0xc"),
)
DPP_SCAN = (
    "row_shr:1 row_mask:0xf bank_mask:0xf bound_ctrl:1",
    "row_shr:2 row_mask:0xf bank_mask:0xf bound_ctrl:1",
    "row_shr:4 row_mask:0xf bank_mask:0xf bound_ctrl:1",
    "row_shr:8 row_mask:0xf bank_mask:0xf bound_ctrl:1",
    "row_bcast:15 row_mask:0xa bank_mask:0xf",
    "row_bcast:31 row_mask:0xc bank_mask:0xf",
)
RED_V = {
    (ReduceOp.ADD, T.U32): "v_add_u32",
    (ReduceOp.MIN, T.S32): "v_min_i32",
    (ReduceOp.MAX, T.S32): "v_max_i32",
    (ReduceOp.MIN, T.U32): "v_min_u32",
    (ReduceOp.MAX, T.U32): "v_max_u32",
    (ReduceOp.AND, T.B32): "v_and_b32",
    (ReduceOp.OR, T.B32): "v_or_b32",
    (ReduceOp.XOR, T.B32): "v_xor_b32",
    (ReduceOp.MIN, T.F32): "v_min_u32",  # on f32_key keys
    (ReduceOp.MAX, T.F32): "v_max_u32",
}


def swizzle_xor(k: int) -> str:
    """The ds_swizzle offset for lane ^ k (0 < k < 32) in the form the disassembler prints:
    SWAP for one bit, REVERSE for a low run of ones, else the BITMASK_PERM string (bits 4..0)."""
    if k & (k - 1) == 0:
        return f"swizzle(SWAP,{k})"
    if (k + 1) & k == 0:
        return f"swizzle(REVERSE,{k + 1})"
    return 'swizzle(BITMASK_PERM,"' + "".join("i" if k >> bit & 1 else "p" for bit in range(4, -1, -1)) + '")'


def _wave(s: Selector, inst: Instruction) -> None:
    spec = inst.spec
    op = spec.op
    d = inst.operands[0]
    if op in (Op.ANY, Op.ALL):
        p = s.pred(inst.operands[1].n)  # type: ignore[attr-defined]

        def vote(t: Operand) -> None:
            m = s.stmp(2)
            s.emit("s_and_b64", m, p, EXEC)
            if op is Op.ANY:
                s.emit("s_cmp_lg_u64", m, Imm(0), ndefs=0)
            else:
                s.emit("s_cmp_eq_u64", m, EXEC, ndefs=0)
            s.emit("s_cselect_b64", t, Imm(-1), Imm(0))

        _pred_write(s, d.n, vote)  # type: ignore[union-attr]
        return
    if op is Op.BALLOT:
        p = s.pred(inst.operands[1].n)  # type: ignore[attr-defined]
        m = s.stmp(2)
        s.emit("s_and_b64", m, p, EXEC)
        scalar_or_vector(
            s, d, lambda t: s.emit("s_mov_b32", t, Sub(m, 0)), lambda t: s._valu("v_mov_b32", t, [Sub(m, 0)])
        )
        return
    a = s.src(inst.operands[1])
    if op is Op.BROADCAST:
        b = s.src(inst.operands[2])

        def bc_s(t: Operand) -> None:
            if is_s(a) or isinstance(a, Imm):
                s.emit("s_mov_b32", t, a)
                return
            lane = s.stmp()
            if isinstance(b, Imm):
                lane = Imm(b.value & 63)  # type: ignore[assignment]
            else:
                s.emit("s_and_b32", lane, b, Imm(63))
            s.emit("v_readlane_b32", t, a, lane)

        def bc_v(t: Operand) -> None:
            if is_v(b):  # a source lane per lane (modulo W): ds_bpermute
                addr = s.vtmp()
                s._valu("v_and_b32", addr, [Imm(63), b])
                s._valu("v_lshlrev_b32", addr, [Imm(2), addr])
                s.emit("ds_bpermute_b32", t, addr, s.to_v(a))
                return
            u = s.stmp()
            bc_s(u)
            s._valu("v_mov_b32", t, [u])

        scalar_or_vector(s, d, bc_s, bc_v)
        return
    if op is Op.SHUFFLE:
        b = s.src(inst.operands[2])
        mode = spec.variant

        def shuf(t: Operand) -> None:
            av = s.to_v(a)
            if mode is ShuffleMode.XOR and isinstance(b, Imm) and (b.value & 0xFFFFFFFF) < 32:
                k = b.value & 0xFFFFFFFF  # lane ^ k stays in the lane's half: ds_swizzle
                if k == 0:
                    s._valu("v_mov_b32", t, [av])
                else:
                    s.emit("ds_swizzle_b32", t, av, mods=f"offset:{swizzle_xor(k)}")
                return
            if mode is ShuffleMode.XOR and isinstance(b, Imm) and (b.value & 0xFFFFFFFF) >= 64:
                s._valu("v_mov_b32", t, [av])  # past the wave: the lane's own value
                return
            lane = _lane(s)
            src = s.vtmp()
            if mode is ShuffleMode.IDX:
                s._valu("v_and_b32", src, [Imm(63), b])
                s._valu("v_lshlrev_b32", src, [Imm(2), src])
                s.emit("ds_bpermute_b32", t, src, av)
                return
            ok = s.stmp(2)
            if mode is ShuffleMode.XOR:
                s._valu("v_xor_b32", src, [b, lane])
            elif mode is ShuffleMode.UP:
                s._valu("v_sub_u32", src, [lane, b])
            else:
                bb = s.vtmp()  # lane + min(b, 64): past the wave when b is (no 32-bit wrap)
                s._valu("v_min_u32", bb, [Imm(64), s.to_v(b)])
                s._valu("v_add_u32", src, [bb, lane])
            _vcmp(s, "v_cmp_gt_u32", ok, Imm(64), s.to_v(src))
            addr = s.vtmp()
            s._valu("v_lshlrev_b32", addr, [Imm(2), src])
            got = s.vtmp()
            s.emit("ds_bpermute_b32", got, addr, av)
            _cndmask(s, t, av, got, ok)  # out of range: the lane's own value

        vector_into(s, d, shuf)
        return
    # reductions and the prefix sum over the whole wave, identity in inactive lanes
    rop = spec.variant
    assert isinstance(rop, ReduceOp)
    ty = spec.dtype if spec.dtype in (T.F32, T.S32, T.U32) else T.B32
    key = (rop, ty)
    save = s.stmp(2)
    outer = s.div
    s.emit("s_or_saveexec_b64", save, Imm(-1))
    s.div = False
    x = s.vtmp()
    ident = s.vtmp()
    s.emit("v_mov_b32", ident, Imm(identity(rop, ty)))
    av = s.to_v(a)
    if ty is T.F32:  # reduce order-preserving integer keys (exact minNum/maxNum, -0 below +0)
        av = f32_key(s, av, rop is ReduceOp.MIN)
    s.emit("v_cndmask_b32_e64", x, ident, av, save)
    if op is Op.REDUCE:
        # DPP: lanes combine with lane^1, lane^2 (quad_perm), the mirrored quad and half-row
        # (row_half_mirror, row_mirror): every lane holds its row's total; row_bcast:15 adds row 0
        # into row 1 and row 2 into row 3, row_bcast:31 lane 31 into rows 2 and 3: lane 63 has all
        for ctrl, rows_ in DPP_REDUCE:
            s.emit(RED_V[key] + "_dpp", x, x, x, mods=f"{ctrl} row_mask:{rows_} bank_mask:0xf")
        res = s.stmp()
        s.emit("v_readlane_b32", res, x, Imm(63))
        s.emit("s_mov_b64", EXEC, save)
        s.div = outer
        if ty is T.F32:
            r = s.vtmp()
            f32_unkey(s, r, res)
            canon32(s, r)
            vector_into(s, d, lambda t: s._valu("v_mov_b32", t, [r]))
            return
        scalar_or_vector(s, d, lambda t: s.emit("s_mov_b32", t, res), lambda t: s._valu("v_mov_b32", t, [res]))
        return
    # inclusive scan by DPP (Kogge-Stone inside each row of 16 lanes: row_shr 1, 2, 4, 8 with
    # bound_ctrl, so lanes shifted in from outside the row read 0, the identity; then row 0's
    # total into row 1 and row 2's into row 3 (row_bcast:15), lanes 0-31's into rows 2-3
    # (row_bcast:31)); the exclusive prefix is the inclusive one minus the lane's own value
    inc = s.vtmp()
    s.emit("v_mov_b32", inc, x)
    for ctrl in DPP_SCAN:
        s.emit("v_add_u32_dpp", inc, inc, inc, mods=ctrl)
    s.emit("s_mov_b64", EXEC, save)
    s.div = outer
    vector_into(s, d, lambda t: s._valu("v_sub_u32", t, [inc, x]))
