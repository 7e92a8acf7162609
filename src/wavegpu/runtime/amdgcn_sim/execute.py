"""Executing one instruction of the emitted subset on a wave (dispatch by mnemonic)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ...backends.amdgcn.ir import Imm, Label, Phys, Raw
from ...backends.amdgcn.isa import DS_ATOMICS, EMITTED, GLOBAL_ATOMICS
from .machine import Memory, Pending, W, Wave
from .parse import AmdgcnSimError, Inst
from .semantics import (
    F32,
    F64,
    I32,
    U32,
    U64,
    _approx32,
    as_f32,
    as_f64,
    bits32,
    bits64,
    bits_to_mask,
    cmp_class,
    cvt_int,
    div_fixup,
    div_fmas,
    div_scale,
    err,
    f16_round,
    f16_val,
    fma_f32,
    fma_f64,
    fract32,
    ftz32,
    lane_bits,
    mbcnt,
    minmax,
    popcount,
    rz_f32,
    s32,
    s64,
    set_s32,
    set_s64,
    set_v32,
    set_v64,
    v32,
    v64,
)

LANES = np.arange(W)
M32 = 0xFFFFFFFF
M64 = (1 << 64) - 1


# The hardware's approximate instructions (the MI200/MI300 ISA documents state 1 ulp for each):
# modelled correctly rounded, or, in the test mode `Ulp`, off by up to one ulp
APPROX_F32 = frozenset({"v_rcp_f32", "v_rcp_iflag_f32", "v_rsq_f32", "v_sqrt_f32", "v_exp_f32", "v_log_f32"})
APPROX_F64 = frozenset({"v_rcp_f64", "v_rsq_f64"})


class Ulp:
    """A test mode for the approximate instructions: "1 ulp accuracy" (an error below one ulp of
    the exact result) allows either float next to the exact value, so each result is the one
    below it ("down"), the one above it ("up"), or per lane at random one of those two or the
    nearest ("random", seeded). Zeros, infinities and NaNs stay as modelled (the documents give
    them exactly); f32 results that become denormal are flushed, as the hardware gives none."""

    MODES = ("down", "up", "random")

    def __init__(self, mode: str, seed: int = 0) -> None:
        if mode not in self.MODES:
            raise AmdgcnSimError(f"approx mode {mode!r} is not one of {', '.join(self.MODES)}")
        self.mode = mode
        self.rng = np.random.default_rng(seed)

    def steps(self) -> np.ndarray:
        if self.mode == "random":
            return self.rng.integers(-1, 2, size=W)
        return np.full(W, -1 if self.mode == "down" else 1)

    def choose(self, r: np.ndarray, above: np.ndarray, below: np.ndarray) -> np.ndarray:
        """r: the nearest result; above/below: r is above/below the exact value."""
        k = self.steps()
        with np.errstate(all="ignore"):
            lo = np.where(above, np.nextafter(r, -np.inf), r)
            hi = np.where(below, np.nextafter(r, np.inf), r)
        out = np.where(k < 0, lo, np.where(k > 0, hi, r))
        return np.where(np.isfinite(r) & (r != 0), out, r).astype(r.dtype)

    def f32(self, b: str, x: np.ndarray, r: np.ndarray) -> np.ndarray:
        """x: the f32 input, r: the modelled (nearest) f32 result of instruction b. The exact
        value is compared in f64, which never rounds onto an f32 value for these functions."""
        xs = x if b == "v_sqrt_f32" else ftz32(x)
        with np.errstate(all="ignore"):
            e = EXACT32[b](xs.astype(F64))
            out = self.choose(r, r.astype(F64) > e, r.astype(F64) < e)
        return out if b == "v_sqrt_f32" else ftz32(out)

    def f64(self, b: str, x: np.ndarray, r: np.ndarray) -> np.ndarray:
        """The same for v_rcp_f64 / v_rsq_f64, compared exactly (rationals): r > 1/x when
        (r*x - 1)/x > 0, r > 1/sqrt(x) (x > 0, r > 0) when r*r*x > 1."""
        from fractions import Fraction

        above = np.zeros(W, bool)
        below = np.zeros(W, bool)
        for i in range(W):
            xi, ri = float(x[i]), float(r[i])
            if not (np.isfinite(xi) and np.isfinite(ri)) or xi == 0 or ri == 0:
                continue
            fx, fr = Fraction(xi), Fraction(ri)
            if b == "v_rcp_f64":
                d = (fr * fx - 1) / fx
            elif xi > 0 and ri > 0:
                d = fr * fr * fx - 1
            else:
                continue
            above[i], below[i] = d > 0, d < 0
        return self.choose(r, above, below)


EXACT32: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "v_rcp_f32": lambda x: 1.0 / x,
    "v_rcp_iflag_f32": lambda x: 1.0 / x,
    "v_rsq_f32": lambda x: 1.0 / np.sqrt(x),
    "v_sqrt_f32": np.sqrt,
    "v_exp_f32": np.exp2,
    "v_log_f32": np.log2,
}


class Ctx:
    """What a wave's instructions reach besides its registers: memory, LDS, the target, and the
    model of the approximate instructions (None: correctly rounded; a `Ulp`: off by one ulp)."""

    def __init__(self, mem: Memory, lds: np.ndarray, approx: Ulp | None = None) -> None:
        self.mem = mem
        self.lds = lds
        self.approx = approx


Handler = Callable[[Wave, Inst, Ctx], "int | None"]
H: dict[str, Handler] = {}


def _need(w: Wave, inst: Inst, n: int) -> None:
    if len(inst.ops) != n:
        raise err(w, inst, f"{inst.op} takes {n} operands in the emitted subset, not {len(inst.ops)}")


def _check_mode(w: Wave, inst: Inst) -> None:
    if w.mode_round:
        raise err(w, inst, f"{inst.op} under a non-default MODE rounding ({w.mode_round}) is not modelled")


# ---- VALU, 32-bit integer -----------------------------------------------------------------
def _sh(b: np.ndarray) -> np.ndarray:
    return b & U32(31)


INT2: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "v_add_u32": lambda a, b: a + b,
    "v_sub_u32": lambda a, b: a - b,
    "v_and_b32": lambda a, b: a & b,
    "v_or_b32": lambda a, b: a | b,
    "v_xor_b32": lambda a, b: a ^ b,
    "v_min_i32": lambda a, b: np.minimum(a.view(I32), b.view(I32)).view(U32),
    "v_max_i32": lambda a, b: np.maximum(a.view(I32), b.view(I32)).view(U32),
    "v_min_u32": np.minimum,
    "v_max_u32": np.maximum,
    "v_lshlrev_b32": lambda a, b: b << _sh(a),
    "v_lshrrev_b32": lambda a, b: b >> _sh(a),
    "v_ashrrev_i32": lambda a, b: (b.view(I32) >> _sh(a).astype(I32)).view(U32),
    "v_mul_lo_u32": lambda a, b: (a.astype(U64) * b.astype(U64)).astype(U32),
    "v_mul_hi_u32": lambda a, b: ((a.astype(U64) * b.astype(U64)) >> U64(32)).astype(U32),
    "v_mul_hi_i32": lambda a, b: ((a.view(I32).astype(np.int64) * b.view(I32).astype(np.int64)) >> np.int64(32)).astype(
        U32
    ),
    "v_bcnt_u32_b32": lambda a, b: popcount(a).astype(U32) + b,
}
INT1: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "v_mov_b32": lambda a: a,
    "v_not_b32": lambda a: ~a,
    "v_bfrev_b32": lambda a: np.array([int(f"{int(x):032b}"[::-1], 2) for x in a], dtype=U32),
    "v_ffbh_u32": lambda a: np.array([31 - int(x).bit_length() + 1 if x else M32 for x in a], dtype=np.int64).astype(
        U32
    ),
}


def _bfe(a: np.ndarray, off: np.ndarray, wid: np.ndarray) -> np.ndarray:
    o, n = (off & U32(31)).astype(U64), (wid & U32(31)).astype(U64)
    return ((a.astype(U64) >> o) & ((U64(1) << n) - U64(1))).astype(U32)


def _dot4(a: np.ndarray, b: np.ndarray, c: np.ndarray, signed: bool) -> np.ndarray:
    acc = c.view(I32).astype(np.int64) if signed else c.astype(np.int64)
    for i in range(4):
        x = ((a >> U32(8 * i)) & U32(0xFF)).astype(np.int64)
        y = ((b >> U32(8 * i)) & U32(0xFF)).astype(np.int64)
        if signed:
            x, y = np.where(x > 127, x - 256, x), np.where(y > 127, y - 256, y)
        acc = acc + x * y
    return (acc & M32).astype(U32)


INT3: dict[str, Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]] = {
    "v_bfe_u32": _bfe,
    "v_bfi_b32": lambda m, a, b: (m & a) | (~m & b),
    "v_add3_u32": lambda a, b, c: a + b + c,
    "v_or3_b32": lambda a, b, c: a | b | c,
    "v_lshl_add_u32": lambda a, b, c: (a << _sh(b)) + c,
    "v_lshl_or_b32": lambda a, b, c: (a << _sh(b)) | c,
    "v_mad_u32_u24": lambda a, b, c: (
        (a & U32(0xFFFFFF)).astype(U64) * (b & U32(0xFFFFFF)).astype(U64) + c.astype(U64)
    ).astype(U32),
    "v_dot4_i32_i8": lambda a, b, c: _dot4(a, b, c, True),
    "v_dot4_u32_u8": lambda a, b, c: _dot4(a, b, c, False),
}


def _int_valu(w: Wave, inst: Inst, ctx: Ctx) -> None:
    b = inst.base
    with np.errstate(all="ignore"):
        if b in INT1:
            _need(w, inst, 2)
            r = INT1[b](v32(w, inst, inst.ops[1]))
        elif b in INT2:
            _need(w, inst, 3)
            r = INT2[b](v32(w, inst, inst.ops[1]), v32(w, inst, inst.ops[2]))
        else:
            _need(w, inst, 4)
            r = INT3[b](*(v32(w, inst, o) for o in inst.ops[1:]))
    set_v32(w, inst, inst.ops[0], np.asarray(r).astype(U32))


for _m in (*INT1, *INT2, *INT3):
    H[_m] = _int_valu


# ---- VALU, f32 --------------------------------------------------------------------------------
F32_2: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "v_add_f32": lambda a, b: a + b,
    "v_sub_f32": lambda a, b: a - b,
    "v_mul_f32": lambda a, b: a * b,
    "v_min_f32": lambda a, b: minmax(a, b, True, False),
    "v_max_f32": lambda a, b: minmax(a, b, False, False),
}
F32_1: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "v_rcp_f32": _approx32(lambda x: 1.0 / x),
    "v_rcp_iflag_f32": _approx32(lambda x: 1.0 / x),
    "v_rsq_f32": _approx32(lambda x: 1.0 / np.sqrt(x)),
    "v_exp_f32": _approx32(np.exp2),
    "v_log_f32": _approx32(np.log2),
    "v_sqrt_f32": np.sqrt,
    "v_fract_f32": fract32,
    "v_rndne_f32": np.rint,
    "v_trunc_f32": np.trunc,
    "v_floor_f32": np.floor,
    "v_ceil_f32": np.ceil,
}


def _f32_valu(w: Wave, inst: Inst, ctx: Ctx) -> None:
    b = inst.base
    _check_mode(w, inst)
    with np.errstate(all="ignore"):
        if b in F32_1:
            _need(w, inst, 2)
            r = F32_1[b](as_f32(v32(w, inst, inst.ops[1])))
        elif b in F32_2:
            _need(w, inst, 3)
            r = F32_2[b](as_f32(v32(w, inst, inst.ops[1])), as_f32(v32(w, inst, inst.ops[2])))
        elif b == "v_fma_f32":
            _need(w, inst, 4)
            r = fma_f32(*(as_f32(v32(w, inst, o)) for o in inst.ops[1:]))
        else:
            raise err(w, inst, f"{b} is not modelled")
    r = np.asarray(r, dtype=F32)
    if ctx.approx is not None and b in APPROX_F32:
        r = ctx.approx.f32(b, as_f32(v32(w, inst, inst.ops[1])), r)
    if inst.mods.get("clamp"):
        r = np.where(np.isnan(r), F32(0), np.clip(r, F32(0), F32(1))).astype(F32)
    set_v32(w, inst, inst.ops[0], bits32(r))


for _m in (*F32_1, *F32_2, "v_fma_f32"):
    H[_m] = _f32_valu


# ---- VALU, f64 ---------------------------------------------------------------------------------
def _f64_valu(w: Wave, inst: Inst, ctx: Ctx) -> None:
    b = inst.base
    _check_mode(w, inst)
    srcs = [as_f64(v64(w, inst, o)) for o in inst.ops[1:]]
    with np.errstate(all="ignore"):
        if b == "v_add_f64":
            r = srcs[0] + srcs[1]
        elif b == "v_mul_f64":
            r = srcs[0] * srcs[1]
        elif b == "v_fma_f64":
            r = fma_f64(*srcs)
        elif b in ("v_min_f64", "v_max_f64"):
            r = minmax(srcs[0], srcs[1], b == "v_min_f64", True)
        elif b == "v_rcp_f64":
            r = 1.0 / srcs[0]
        elif b == "v_rsq_f64":
            r = 1.0 / np.sqrt(srcs[0])
        elif b in ("v_rndne_f64", "v_trunc_f64", "v_floor_f64", "v_ceil_f64"):
            r = {"v_rndne_f64": np.rint, "v_trunc_f64": np.trunc, "v_floor_f64": np.floor, "v_ceil_f64": np.ceil}[b](
                srcs[0]
            )
        else:
            raise err(w, inst, f"{b} is not modelled")
    if ctx.approx is not None and b in APPROX_F64:
        r = ctx.approx.f64(b, srcs[0], np.asarray(r, dtype=F64))
    set_v64(w, inst, inst.ops[0], bits64(r))


for _m in (
    "v_add_f64",
    "v_mul_f64",
    "v_fma_f64",
    "v_min_f64",
    "v_max_f64",
    "v_rcp_f64",
    "v_rsq_f64",
    "v_rndne_f64",
    "v_trunc_f64",
    "v_floor_f64",
    "v_ceil_f64",
):
    H[_m] = _f64_valu


def _ldexp64(w: Wave, inst: Inst, ctx: Ctx) -> None:
    _need(w, inst, 3)
    x = as_f64(v64(w, inst, inst.ops[1]))
    e = v32(w, inst, inst.ops[2]).view(I32).astype(np.int64)
    with np.errstate(all="ignore"):
        r = np.ldexp(x, np.clip(e, -2200, 2200))
    set_v64(w, inst, inst.ops[0], bits64(r))


H["v_ldexp_f64"] = _ldexp64


# ---- conversions -------------------------------------------------------------------------------
def _cvt(w: Wave, inst: Inst, ctx: Ctx) -> None:
    _need(w, inst, 2)
    b = inst.base
    d, s = inst.ops
    with np.errstate(all="ignore"):
        if b == "v_cvt_f32_f64":
            x = as_f64(v64(w, inst, s))
            if w.mode_round == 3:
                r = rz_f32(x)
            elif w.mode_round == 0:
                r = x.astype(F32)
            else:
                raise err(w, inst, f"MODE rounding {w.mode_round} is not modelled")
            set_v32(w, inst, d, bits32(r))
            return
        _check_mode(w, inst)
        if b in ("v_cvt_i32_f64", "v_cvt_u32_f64"):
            set_v32(w, inst, d, cvt_int(as_f64(v64(w, inst, s)), b == "v_cvt_i32_f64"))
        elif b == "v_cvt_f64_f32":
            set_v64(w, inst, d, bits64(as_f32(v32(w, inst, s)).astype(F64)))
        elif b == "v_cvt_f64_i32":
            set_v64(w, inst, d, bits64(v32(w, inst, s).view(I32).astype(F64)))
        elif b == "v_cvt_f64_u32":
            set_v64(w, inst, d, bits64(v32(w, inst, s).astype(F64)))
        elif b == "v_cvt_f32_u32":
            set_v32(w, inst, d, bits32(v32(w, inst, s).astype(F32)))
        elif b == "v_cvt_f32_i32":
            set_v32(w, inst, d, bits32(v32(w, inst, s).view(I32).astype(F32)))
        elif b in ("v_cvt_u32_f32", "v_cvt_i32_f32"):
            set_v32(w, inst, d, cvt_int(as_f32(v32(w, inst, s)), b == "v_cvt_i32_f32"))
        elif b == "v_cvt_f16_f32":
            set_v32(w, inst, d, f16_round(as_f32(v32(w, inst, s)).astype(F64)))
        elif b == "v_cvt_f32_f16":
            set_v32(w, inst, d, bits32(f16_val(v32(w, inst, s, 16)).astype(F32)))
        else:
            raise err(w, inst, f"{b} is not modelled")


for _m in (
    "v_cvt_f32_f64",
    "v_cvt_i32_f64",
    "v_cvt_u32_f64",
    "v_cvt_f64_f32",
    "v_cvt_f64_i32",
    "v_cvt_f64_u32",
    "v_cvt_f32_u32",
    "v_cvt_f32_i32",
    "v_cvt_u32_f32",
    "v_cvt_i32_f32",
    "v_cvt_f16_f32",
    "v_cvt_f32_f16",
):
    H[_m] = _cvt


# ---- f16 -----------------------------------------------------------------------------------------
def _odd_add(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    from ...isa.semantics import _fma64_round_odd

    return _fma64_round_odd(a, b)


def _f16(w: Wave, inst: Inst, ctx: Ctx) -> None:
    _check_mode(w, inst)
    b = inst.base
    packed = b.startswith("v_pk_")
    srcs = [v32(w, inst, o, 16) for o in inst.ops[1:]]

    def op(vals: list[np.ndarray]) -> np.ndarray:
        with np.errstate(all="ignore"):
            if b.endswith("add_f16"):
                return _odd_add(vals[0], vals[1])
            if b.endswith("sub_f16"):
                return _odd_add(vals[0], -vals[1])
            if b.endswith("mul_f16"):
                return vals[0] * vals[1]
            return _odd_add(vals[0] * vals[1], vals[2])

    lo = f16_round(op([f16_val(s) for s in srcs]))
    if packed:
        hi = f16_round(op([f16_val(s >> U32(16)) for s in srcs]))
        r = lo | (hi << U32(16))
    else:
        r = lo  # gfx9: a 16-bit VALU result clears the high half
    set_v32(w, inst, inst.ops[0], r)


for _m in ("v_add_f16", "v_sub_f16", "v_mul_f16", "v_fma_f16", "v_pk_add_f16", "v_pk_mul_f16", "v_pk_fma_f16"):
    H[_m] = _f16


# ---- division helpers --------------------------------------------------------------------------
def _div_scale(w: Wave, inst: Inst, ctx: Ctx) -> None:
    _need(w, inst, 5)
    wide = inst.base.endswith("f64")
    rd = (lambda o: as_f64(v64(w, inst, o))) if wide else (lambda o: as_f32(v32(w, inst, o)))
    s0, s1, s2 = (rd(o) for o in inst.ops[2:])
    d, vcc = div_scale(s0, s1, s2, wide)
    m = lane_bits(w.exec)
    if wide:
        set_v64(w, inst, inst.ops[0], bits64(d))
    else:
        set_v32(w, inst, inst.ops[0], bits32(d))
    set_s64(w, inst, inst.ops[1], bits_to_mask(vcc & m))


def _div_fmas(w: Wave, inst: Inst, ctx: Ctx) -> None:
    _need(w, inst, 4)
    wide = inst.base.endswith("f64")
    vcc = lane_bits(w.vcc)
    if wide:
        a, b, c = (as_f64(v64(w, inst, o)) for o in inst.ops[1:])
        set_v64(w, inst, inst.ops[0], bits64(div_fmas(a, b, c, vcc, True)))
    else:
        a, b, c = (as_f32(v32(w, inst, o)) for o in inst.ops[1:])
        set_v32(w, inst, inst.ops[0], bits32(div_fmas(a, b, c, vcc, False)))


def _div_fixup(w: Wave, inst: Inst, ctx: Ctx) -> None:
    _need(w, inst, 4)
    wide = inst.base.endswith("f64")
    if wide:
        q, den, num = (as_f64(v64(w, inst, o)) for o in inst.ops[1:])
        set_v64(w, inst, inst.ops[0], bits64(div_fixup(q, den, num, True)))
    else:
        q, den, num = (as_f32(v32(w, inst, o)) for o in inst.ops[1:])
        set_v32(w, inst, inst.ops[0], bits32(div_fixup(q, den, num, False)))


for _m, _h in (("v_div_scale", _div_scale), ("v_div_fmas", _div_fmas), ("v_div_fixup", _div_fixup)):
    H[_m + "_f32"] = _h
    H[_m + "_f64"] = _h


# ---- compares and selects ------------------------------------------------------------------------
CMP = {
    "eq": np.equal,
    "ne": np.not_equal,
    "lg": lambda a, b: (a < b) | (a > b),
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
    "o": lambda a, b: ~np.isnan(a) & ~np.isnan(b),
    "u": lambda a, b: np.isnan(a) | np.isnan(b),
    "nlg": lambda a, b: ~((a < b) | (a > b)),
    "neq": lambda a, b: ~(a == b),
    "nge": lambda a, b: ~(a >= b),
    "ngt": lambda a, b: ~(a > b),
    "nle": lambda a, b: ~(a <= b),
    "nlt": lambda a, b: ~(a < b),
}


def _vcmp(w: Wave, inst: Inst, ctx: Ctx) -> None:
    _need(w, inst, 3)
    c, t = inst.base.split("_")[2:4]
    dst = inst.ops[0]
    if not inst.op.endswith("_e64") and not (isinstance(dst, type(inst.ops[0])) and str(dst) == "vcc"):
        raise err(w, inst, "the VOPC form writes vcc")
    a, b = inst.ops[1], inst.ops[2]
    if c == "class":
        if t == "f64":
            r = cmp_class(as_f64(v64(w, inst, a)), v32(w, inst, b), True)
        else:
            r = cmp_class(as_f32(v32(w, inst, a)), v32(w, inst, b), False)
    else:
        if t == "f64":
            x, y = as_f64(v64(w, inst, a)), as_f64(v64(w, inst, b))
        elif t == "f32":
            x, y = as_f32(v32(w, inst, a)), as_f32(v32(w, inst, b))
        elif t == "f16":
            x, y = f16_val(v32(w, inst, a, 16)), f16_val(v32(w, inst, b, 16))
        elif t == "i32":
            x, y = v32(w, inst, a).view(I32), v32(w, inst, b).view(I32)
        else:
            x, y = v32(w, inst, a), v32(w, inst, b)
        with np.errstate(all="ignore"):
            r = CMP[c](x, y)
    set_s64(w, inst, dst, bits_to_mask(np.asarray(r) & lane_bits(w.exec)))


def _cndmask(w: Wave, inst: Inst, ctx: Ctx) -> None:
    _need(w, inst, 4)
    m = lane_bits(s64(w, inst, inst.ops[3]))
    set_v32(w, inst, inst.ops[0], np.where(m, v32(w, inst, inst.ops[2]), v32(w, inst, inst.ops[1])))


H["v_cndmask_b32"] = _cndmask


# ---- lane operations --------------------------------------------------------------------------------
def _readlane(w: Wave, inst: Inst, ctx: Ctx) -> None:
    _need(w, inst, 3)
    lane = s32(w, inst, inst.ops[2]) & 63
    set_s32(w, inst, inst.ops[0], int(v32(w, inst, inst.ops[1])[lane]))


def _readfirstlane(w: Wave, inst: Inst, ctx: Ctx) -> None:
    _need(w, inst, 2)
    lane = (w.exec & -w.exec).bit_length() - 1 if w.exec else 0
    set_s32(w, inst, inst.ops[0], int(v32(w, inst, inst.ops[1])[lane]))


def _writelane(w: Wave, inst: Inst, ctx: Ctx) -> None:
    _need(w, inst, 3)
    lane = s32(w, inst, inst.ops[2]) & 63
    m = np.equal(LANES, lane)
    set_v32(w, inst, inst.ops[0], np.full(W, s32(w, inst, inst.ops[1]), dtype=U32), m)


def _mbcnt(w: Wave, inst: Inst, ctx: Ctx) -> None:
    _need(w, inst, 3)
    mask = s32(w, inst, inst.ops[1]) if not isinstance(inst.ops[1], Phys) or inst.ops[1].rc == "s" else None
    if mask is None:
        raise err(w, inst, "the mask of v_mbcnt is a scalar in the emitted subset")
    full = mask << 32 if inst.base.endswith("hi_u32_b32") else mask
    r = mbcnt(full, inst.base.startswith("v_mbcnt_hi")) + v32(w, inst, inst.ops[2])
    set_v32(w, inst, inst.ops[0], r)


def _accvgpr(w: Wave, inst: Inst, ctx: Ctx) -> None:
    _need(w, inst, 2)
    set_v32(w, inst, inst.ops[0], v32(w, inst, inst.ops[1]))


H.update(
    {
        "v_readlane_b32": _readlane,
        "v_readfirstlane_b32": _readfirstlane,
        "v_writelane_b32": _writelane,
        "v_mbcnt_lo_u32_b32": _mbcnt,
        "v_mbcnt_hi_u32_b32": _mbcnt,
        "v_accvgpr_write_b32": _accvgpr,
        "v_accvgpr_read_b32": _accvgpr,
    }
)


def dpp_source(inst: Inst, w: Wave) -> tuple[np.ndarray, np.ndarray]:
    """(source lane per lane, valid) of the DPP control on this instruction."""
    m = inst.mods
    lane = LANES
    row, inrow = lane // 16, lane % 16
    if "quad_perm" in m:
        perm = np.array(m["quad_perm"])
        return (lane & ~3) + perm[lane & 3], np.ones(W, bool)
    if "row_shr" in m:
        n = int(m["row_shr"])  # type: ignore[arg-type]
        return lane - n, inrow >= n
    if "row_shl" in m:
        n = int(m["row_shl"])  # type: ignore[arg-type]
        return lane + n, inrow + n < 16
    if "row_ror" in m:
        n = int(m["row_ror"])  # type: ignore[arg-type]
        return row * 16 + (inrow + 16 - n) % 16, np.ones(W, bool)
    if "row_mirror" in m:
        return row * 16 + 15 - inrow, np.ones(W, bool)
    if "row_half_mirror" in m:
        return (lane & ~7) + 7 - (lane & 7), np.ones(W, bool)
    if "row_bcast" in m:
        n = int(m["row_bcast"])  # type: ignore[arg-type]
        if n == 15:
            return row * 16 - 1, row >= 1
        if n == 31:
            return np.full(W, 31), row >= 2
    if "wave_shr" in m:
        return lane - 1, lane >= 1
    if "wave_shl" in m:
        return lane + 1, lane < 63
    if "wave_ror" in m:
        return (lane + 63) % 64, np.ones(W, bool)
    if "wave_rol" in m:
        return (lane + 1) % 64, np.ones(W, bool)
    raise err(w, inst, "DPP control is not one the backend emits")


def _dpp(w: Wave, inst: Inst, ctx: Ctx) -> None:
    """VOP2 with DPP: src0 comes from the lane the control names. A source lane outside the
    pattern or with its EXEC bit clear reads 0 with bound_ctrl, else the lane is not written;
    lanes of rows / banks outside row_mask / bank_mask are not written."""
    _need(w, inst, 3)
    base = inst.base.removesuffix("_dpp")
    src, valid = dpp_source(inst, w)
    src = np.clip(src, 0, 63)
    active = lane_bits(w.exec)
    valid = valid & active[src]
    a = v32(w, inst, inst.ops[1])[src]
    bound = "bound_ctrl" in inst.mods
    a = np.where(valid, a, U32(0))
    write = active & (valid | bound)
    row_mask = int(inst.mods.get("row_mask", 0xF))  # type: ignore[arg-type]
    bank_mask = int(inst.mods.get("bank_mask", 0xF))  # type: ignore[arg-type]
    write &= ((row_mask >> (LANES // 16)) & 1).astype(bool) & ((bank_mask >> ((LANES % 16) // 4)) & 1).astype(bool)
    b = v32(w, inst, inst.ops[2])
    if base in INT2:
        r = INT2[base](a, b)
    elif base in F32_2:
        with np.errstate(all="ignore"):
            r = bits32(F32_2[base](as_f32(a), as_f32(b)))
    else:
        raise err(w, inst, f"{base} with DPP is not modelled")
    set_v32(w, inst, inst.ops[0], np.asarray(r, dtype=U32), write)


for _m in list(INT2) + list(F32_2):
    H[_m + "_dpp"] = _dpp


# ---- SALU ----------------------------------------------------------------------------------------
def _s_bin32(w: Wave, inst: Inst, ctx: Ctx) -> None:
    _need(w, inst, 3)
    b = inst.base
    x, y = s32(w, inst, inst.ops[1]), s32(w, inst, inst.ops[2])
    sx, sy = x - (1 << 32) * (x >> 31), y - (1 << 32) * (y >> 31)
    scc = None
    if b == "s_add_u32":
        r = x + y
        scc = int(r > M32)
    elif b == "s_sub_u32":
        r = x - y
        scc = int(y > x)
    elif b == "s_mul_i32":
        r = sx * sy
    elif b == "s_mul_hi_u32":
        r = (x * y) >> 32
    elif b == "s_mul_hi_i32":
        r = (sx * sy) >> 32
    elif b in ("s_and_b32", "s_or_b32", "s_xor_b32", "s_andn2_b32"):
        r = {"s_and_b32": x & y, "s_or_b32": x | y, "s_xor_b32": x ^ y, "s_andn2_b32": x & ~y}[b]
        scc = int((r & M32) != 0)
    elif b in ("s_min_i32", "s_max_i32"):
        r = min(sx, sy) if b == "s_min_i32" else max(sx, sy)
        scc = int((sx < sy) if b == "s_min_i32" else (sx > sy))
    elif b in ("s_min_u32", "s_max_u32"):
        r = min(x, y) if b == "s_min_u32" else max(x, y)
        scc = int((x < y) if b == "s_min_u32" else (x > y))
    elif b == "s_lshl_b32":
        r = x << (y & 31)
        scc = int((r & M32) != 0)
    elif b == "s_lshr_b32":
        r = x >> (y & 31)
        scc = int(r != 0)
    elif b == "s_ashr_i32":
        r = sx >> (y & 31)
        scc = int((r & M32) != 0)
    elif b == "s_bfe_u32":
        off, wid = y & 31, (y >> 16) & 0x7F
        r = (x >> off) & ((1 << wid) - 1) if wid < 32 else x >> off
        scc = int(r != 0)
    elif b == "s_cselect_b32":
        r = x if w.scc else y
    else:
        raise err(w, inst, f"{b} is not modelled")
    set_s32(w, inst, inst.ops[0], r & M32)
    if scc is not None:
        w.scc = scc


def _s_bin64(w: Wave, inst: Inst, ctx: Ctx) -> None:
    _need(w, inst, 3)
    b = inst.base
    x, y = s64(w, inst, inst.ops[1]), s64(w, inst, inst.ops[2])
    if b == "s_cselect_b64":
        set_s64(w, inst, inst.ops[0], x if w.scc else y)
        return
    r = {"s_and_b64": x & y, "s_or_b64": x | y, "s_xor_b64": x ^ y, "s_andn2_b64": x & ~y}[b] & M64
    set_s64(w, inst, inst.ops[0], r)
    w.scc = int(r != 0)


def _s_un(w: Wave, inst: Inst, ctx: Ctx) -> None:
    _need(w, inst, 2)
    b = inst.base
    d, s = inst.ops
    if b == "s_mov_b32":
        set_s32(w, inst, d, s32(w, inst, s))
    elif b == "s_mov_b64":
        set_s64(w, inst, d, s64(w, inst, s))
    elif b == "s_not_b32":
        r = ~s32(w, inst, s) & M32
        set_s32(w, inst, d, r)
        w.scc = int(r != 0)
    elif b == "s_not_b64":
        r = ~s64(w, inst, s) & M64
        set_s64(w, inst, d, r)
        w.scc = int(r != 0)
    elif b == "s_abs_i32":
        x = s32(w, inst, s)
        x = x - (1 << 32) * (x >> 31)
        r = abs(x) & M32
        set_s32(w, inst, d, r)
        w.scc = int(r != 0)
    elif b == "s_brev_b32":
        set_s32(w, inst, d, int(f"{s32(w, inst, s):032b}"[::-1], 2))
    elif b == "s_bcnt1_i32_b32":
        r = bin(s32(w, inst, s)).count("1")
        set_s32(w, inst, d, r)
        w.scc = int(r != 0)
    elif b == "s_flbit_i32_b32":
        x = s32(w, inst, s)
        set_s32(w, inst, d, 32 - x.bit_length() if x else M32)
    elif b == "s_or_saveexec_b64":
        src = s64(w, inst, s)
        old = w.exec
        w.exec = (src | old) & M64
        set_s64(w, inst, d, old)
        w.scc = int(w.exec != 0)
    else:
        raise err(w, inst, f"{b} is not modelled")


def _s_cmp(w: Wave, inst: Inst, ctx: Ctx) -> None:
    _need(w, inst, 2)
    _, _, c, t = inst.base.split("_")
    if t == "u64":
        x, y = s64(w, inst, inst.ops[0]), s64(w, inst, inst.ops[1])
    else:
        x, y = s32(w, inst, inst.ops[0]), s32(w, inst, inst.ops[1])
        if t == "i32":
            x, y = x - (1 << 32) * (x >> 31), y - (1 << 32) * (y >> 31)
    w.scc = int({"eq": x == y, "lg": x != y, "lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y}[c])


def _setreg(w: Wave, inst: Inst, ctx: Ctx) -> None:
    _need(w, inst, 2)
    h, v = inst.ops
    if not isinstance(h, Raw) or h.text.replace(" ", "") != "hwreg(HW_REG_MODE,0,2)" or not isinstance(v, Imm):
        raise err(w, inst, "only the f32 rounding bits of MODE (hwreg(HW_REG_MODE, 0, 2)) are modelled")
    w.mode_round = v.value & 3


for _m, (_fmt, _) in EMITTED.items():  # the scalar ALU rows the backend emits, by encoding
    if _fmt == "SOP1":
        H[_m] = _s_un
    elif _fmt == "SOP2":
        H[_m] = _s_bin64 if _m.endswith("_b64") else _s_bin32
for _c in ("eq", "lg", "lt", "le", "gt", "ge"):
    for _t in ("i32", "u32"):
        H[f"s_cmp_{_c}_{_t}"] = _s_cmp
H["s_cmp_eq_u64"] = _s_cmp
H["s_cmp_lg_u64"] = _s_cmp
H["s_setreg_imm32_b32"] = _setreg
for _c in ("eq", "ne", "lt", "le", "gt", "ge"):
    for _t in ("i32", "u32", "f32", "f64"):
        if _t.startswith("f") and _c == "ne":
            continue
        H[f"v_cmp_{_c}_{_t}"] = _vcmp
for _c in ("lg", "o", "u", "nlg", "neq", "nge", "ngt", "nle", "nlt", "class"):
    for _t in ("f32", "f64"):
        H[f"v_cmp_{_c}_{_t}"] = _vcmp
H["v_cmp_u_f16"] = _vcmp


# ---- memory ----------------------------------------------------------------------------------
WIDTH = {"ubyte": 1, "sbyte": 1, "ushort": 2, "sshort": 2, "dword": 4, "dwordx2": 8, "dwordx4": 16}
WIDTH.update({"byte": 1, "short": 2})


def _global_addr(w: Wave, inst: Inst, vaddr: object, saddr: object) -> np.ndarray:
    off = int(inst.mods.get("offset", 0))  # type: ignore[arg-type]
    if not -4096 <= off <= 4095:
        raise err(w, inst, f"global offset {off} outside the signed 13-bit range")
    base = s64(w, inst, saddr)
    return v32(w, inst, vaddr).astype(np.int64) + base + off


def _sext(x: np.ndarray, bits: int) -> np.ndarray:
    sign = U32(1 << (bits - 1))
    return ((x ^ sign) - sign).astype(U32)


def _global_load(w: Wave, inst: Inst, ctx: Ctx) -> None:
    _need(w, inst, 3)
    kind = inst.base.removeprefix("global_load_")
    n = WIDTH[kind]
    active = lane_bits(w.exec)
    d = inst.ops[0]
    ndw = max(1, n // 4)
    if not isinstance(d, Phys) or d.rc != "v" or d.size != ndw:
        raise err(w, inst, f"{d} is not a destination of {ndw} VGPR(s)")
    if ndw > 1 and d.idx % 2:
        raise err(w, inst, f"{d}: VGPR tuples must start at an even register on {w.t.name}")
    p = Pending(inst, w.pc, False, False)
    p.units = set(d.units())
    if active.any():
        addr = _global_addr(w, inst, inst.ops[1], inst.ops[2])[active]
        vals = ctx.mem.load(addr, n, w.where(inst))
        if kind == "sbyte":
            vals = _sext(vals, 8)[None] if vals.ndim == 1 else np.array([_sext(vals[0], 8)])
        elif kind == "sshort":
            vals = np.array([_sext(vals[0], 16)])
        for i in range(ndw):
            full = np.zeros(W, U32)
            full[active] = vals[i]
            p.writes.append(("v", d.idx + i, full, w.exec))
    w.issue(p)


def _global_store(w: Wave, inst: Inst, ctx: Ctx) -> None:
    _need(w, inst, 3)
    kind = inst.base.removeprefix("global_store_")
    n = WIDTH[kind]
    ndw = max(1, n // 4)
    data = inst.ops[1]
    if not isinstance(data, Phys) or data.rc != "v" or data.size != ndw:
        raise err(w, inst, f"{data} is not {ndw} VGPR(s) of store data")
    active = lane_bits(w.exec)
    if active.any():
        addr = _global_addr(w, inst, inst.ops[0], inst.ops[2])[active]
        vals = np.array([w.v[data.idx + i][active] for i in range(ndw)])
        ctx.mem.store(addr, n, vals, w.where(inst))
    w.issue(Pending(inst, w.pc, False, True))


ATOM = {
    "add": lambda o, v: (o + v) & M32,
    "sub": lambda o, v: (o - v) & M32,
    "smin": lambda o, v: min(o - ((o >> 31) << 32), v - ((v >> 31) << 32)) & M32,
    "smax": lambda o, v: max(o - ((o >> 31) << 32), v - ((v >> 31) << 32)) & M32,
    "umin": min,
    "umax": max,
    "min": min,
    "max": max,
    "and": lambda o, v: o & v,
    "or": lambda o, v: o | v,
    "xor": lambda o, v: o ^ v,
    "swap": lambda o, v: v,
    "wrxchg": lambda o, v: v,
}


def _fadd(o: int, v: int) -> int:
    r = np.array([o], U32).view(F32)[0] + np.array([v], U32).view(F32)[0]
    return int(np.array([r], F32).view(U32)[0])


def _rmw(
    w: Wave, inst: Inst, data: np.ndarray, off: np.ndarray, vals: list[np.ndarray], fn: Callable[..., int]
) -> np.ndarray:
    """Per active lane in lane order: old = mem; mem = fn(old, values...). Returns old values."""
    old = np.zeros(off.size, U32)
    for i in range(off.size):
        o = int(data[off[i] : off[i] + 4].view("<u4")[0])
        old[i] = o
        new = fn(o, *(int(v[i]) for v in vals))
        data[off[i] : off[i] + 4] = np.frombuffer(int(new & M32).to_bytes(4, "little"), np.uint8)
    return old


def _global_atomic(w: Wave, inst: Inst, ctx: Ctx) -> None:
    ret = inst.ndefs == 1
    ops = inst.ops[1:] if ret else inst.ops
    if len(ops) != 3:
        raise err(w, inst, "a global atomic takes [vdst,] vaddr, vdata, saddr")
    name = inst.base.removeprefix("global_atomic_")
    active = lane_bits(w.exec)
    p = Pending(inst, w.pc, False, True)
    if ret:
        d = inst.ops[0]
        if not isinstance(d, Phys) or d.rc != "v" or d.size != 1:
            raise err(w, inst, f"{d} is not one VGPR")
        p.units = set(d.units())
    if active.any():
        addr = _global_addr(w, inst, ops[0], ops[2])[active]
        seg, off = ctx.mem.locate(addr, 4, w.where(inst))
        if (off % 4).any():
            raise err(w, inst, "a misaligned atomic")
        dv = ops[1]
        if name == "cmpswap":
            if not isinstance(dv, Phys) or dv.size != 2:
                raise err(w, inst, "cmpswap data is a VGPR pair {new, compare}")
            new, cmp = w.v[dv.idx][active], w.v[dv.idx + 1][active]
            old = _rmw(w, inst, seg.data, off, [new, cmp], lambda o, n, c: n if o == c else o)
        else:
            fn = _fadd if name == "add_f32" else ATOM[name]
            old = _rmw(w, inst, seg.data, off, [v32(w, inst, dv)[active]], fn)
        if ret:
            full = np.zeros(W, U32)
            full[active] = old
            p.writes.append(("v", inst.ops[0].idx, full, w.exec))  # type: ignore[union-attr]
    w.issue(p)


def _s_load(w: Wave, inst: Inst, ctx: Ctx) -> None:
    _need(w, inst, 3)
    d, base, off = inst.ops
    n = {"s_load_dword": 1, "s_load_dwordx2": 2, "s_load_dwordx4": 4}[inst.base]
    if not isinstance(d, Phys) or d.rc != "s" or d.size != n:
        raise err(w, inst, f"{d} is not {n} SGPR(s)")
    if n > 1 and d.idx % min(n, 4):
        raise err(w, inst, f"{d}: SGPR tuples of {n} must be {min(n, 4)}-aligned")
    addr = s64(w, inst, base) + s32(w, inst, off)
    vals = ctx.mem.load(np.array([addr]), 4 * n, w.where(inst))
    p = Pending(inst, w.pc, True, False)
    p.units = set(d.units())
    for i in range(n):
        p.writes.append(("s", d.idx + i, int(vals[i][0]), 0))
    w.issue(p)


LDS_W = {"u8": 1, "i8": 1, "u16": 2, "i16": 2, "b8": 1, "b16": 2, "b32": 4, "b64": 8, "b128": 16}


def _lds_off(w: Wave, inst: Inst, ctx: Ctx, addr_op: object, n: int) -> tuple[np.ndarray, np.ndarray]:
    active = lane_bits(w.exec)
    off = int(inst.mods.get("offset", 0))  # type: ignore[arg-type]
    if not 0 <= off <= 65535:
        raise err(w, inst, f"DS offset {off} outside 0..65535")
    # the 32-bit address plus the offset, modulo 2^32 (CI and later: LLVM folds DS offsets onto
    # negative bases, AMDGPU's test write_ds_sub0_offset0_global; SI did not wrap)
    a = (v32(w, inst, addr_op).astype(np.int64)[active] + off) & 0xFFFFFFFF
    if a.size and (a.min() < 0 or a.max() + n > ctx.lds.size):
        bad = int(a[(a < 0) | (a + n > ctx.lds.size)][0])
        raise err(w, inst, f"LDS access of {n} bytes at {bad} outside the workgroup's {ctx.lds.size} bytes")
    return active, a


def _ds_read(w: Wave, inst: Inst, ctx: Ctx) -> None:
    _need(w, inst, 2)
    kind = inst.base.removeprefix("ds_read_")
    n = LDS_W[kind]
    ndw = max(1, n // 4)
    d = inst.ops[0]
    if not isinstance(d, Phys) or d.rc != "v" or d.size != ndw:
        raise err(w, inst, f"{d} is not a destination of {ndw} VGPR(s)")
    if ndw > 1 and d.idx % 2:
        raise err(w, inst, f"{d}: VGPR tuples must start at an even register on {w.t.name}")
    active, a = _lds_off(w, inst, ctx, inst.ops[1], n)
    vals = gather_lds(ctx.lds, a, n)
    if kind == "i8":
        vals = np.array([_sext(vals[0], 8)])
    elif kind == "i16":
        vals = np.array([_sext(vals[0], 16)])
    p = Pending(inst, w.pc, False, False)
    p.units = set(d.units())
    for i in range(ndw):
        full = np.zeros(W, U32)
        full[active] = vals[i]
        p.writes.append(("v", d.idx + i, full, w.exec))
    w.issue(p)


def gather_lds(data: np.ndarray, off: np.ndarray, n: int) -> np.ndarray:
    from .machine import gather

    return gather(data, off, n)


def _ds_write(w: Wave, inst: Inst, ctx: Ctx) -> None:
    _need(w, inst, 2)
    n = LDS_W[inst.base.removeprefix("ds_write_")]
    ndw = max(1, n // 4)
    data = inst.ops[1]
    if not isinstance(data, Phys) or data.rc != "v" or data.size != ndw:
        raise err(w, inst, f"{data} is not {ndw} VGPR(s) of store data")
    active, a = _lds_off(w, inst, ctx, inst.ops[0], n)
    from .machine import scatter

    scatter(ctx.lds, a, n, np.array([w.v[data.idx + i][active] for i in range(ndw)]))
    w.issue(Pending(inst, w.pc, False, True))


def _ds_atomic(w: Wave, inst: Inst, ctx: Ctx) -> None:
    b = inst.base
    ret = inst.ndefs == 1
    ops = inst.ops[1:] if ret else inst.ops
    name = b.removeprefix("ds_").split("_")[0]
    cmp = name == "cmpst"
    if len(ops) != (3 if cmp else 2):
        raise err(w, inst, f"{b} takes {'[vdst,] addr, vcmp, vnew' if cmp else '[vdst,] addr, vdata'}")
    active, a = _lds_off(w, inst, ctx, ops[0], 4)
    if (a % 4).any():
        raise err(w, inst, "a misaligned LDS atomic")
    if cmp:
        c, nw = v32(w, inst, ops[1])[active], v32(w, inst, ops[2])[active]
        old = _rmw(w, inst, ctx.lds, a, [c, nw], lambda o, cc, n: n if o == cc else o)
    else:
        t = b.rsplit("_", 1)[1]
        fn = (
            _fadd
            if t == "f32"
            else ATOM[{"min": "smin", "max": "smax"}[name] if t == "i32" and name in ("min", "max") else name]
        )
        old = _rmw(w, inst, ctx.lds, a, [v32(w, inst, ops[1])[active]], fn)
    p = Pending(inst, w.pc, False, True)
    if ret:
        d = inst.ops[0]
        if not isinstance(d, Phys) or d.rc != "v" or d.size != 1:
            raise err(w, inst, f"{d} is not one VGPR")
        p.units = set(d.units())
        full = np.zeros(W, U32)
        full[active] = old
        p.writes.append(("v", d.idx, full, w.exec))
    w.issue(p)


def _ds_bpermute(w: Wave, inst: Inst, ctx: Ctx) -> None:
    """dst[lane] = data[(addr[lane] >> 2) & 63]; an inactive source lane reads 0."""
    _need(w, inst, 3)
    d = inst.ops[0]
    if not isinstance(d, Phys) or d.rc != "v" or d.size != 1:
        raise err(w, inst, f"{d} is not one VGPR")
    off = int(inst.mods.get("offset", 0))  # type: ignore[arg-type]
    src = ((v32(w, inst, inst.ops[1]).astype(np.int64) + off) >> 2) & 63
    data = v32(w, inst, inst.ops[2])
    act = lane_bits(w.exec)
    vals = np.where(act[src], data[src], U32(0))
    p = Pending(inst, w.pc, False, False)
    p.units = set(d.units())
    p.writes.append(("v", d.idx, vals, w.exec))
    w.issue(p)


def _ds_swizzle(w: Wave, inst: Inst, ctx: Ctx) -> None:
    """ds_swizzle_b32: within each group of 32 lanes, lane i reads lane ((i & and) | or) ^ xor
    (bitmask mode) or the quad permutation (bit 15); an inactive source lane reads 0."""
    _need(w, inst, 2)
    d = inst.ops[0]
    if not isinstance(d, Phys) or d.rc != "v" or d.size != 1:
        raise err(w, inst, f"{d} is not one VGPR")
    off = int(inst.mods.get("offset", 0))  # type: ignore[arg-type]
    if off & 0x8000:
        src = (LANES & ~3) | ((off >> (2 * (LANES & 3))) & 3)
    else:
        and_m, or_m, xor_m = off & 0x1F, (off >> 5) & 0x1F, (off >> 10) & 0x1F
        src = (LANES & ~31) | ((((LANES & 31) & and_m) | or_m) ^ xor_m)
    data = v32(w, inst, inst.ops[1])
    act = lane_bits(w.exec)
    p = Pending(inst, w.pc, False, False)
    p.units = set(d.units())
    p.writes.append(("v", d.idx, np.where(act[src], data[src], U32(0)), w.exec))
    w.issue(p)


H["ds_swizzle_b32"] = _ds_swizzle
for _k in ("ubyte", "sbyte", "ushort", "sshort", "dword", "dwordx2", "dwordx4"):
    H[f"global_load_{_k}"] = _global_load
for _k in ("byte", "short", "dword", "dwordx2", "dwordx4"):
    H[f"global_store_{_k}"] = _global_store
for _m in GLOBAL_ATOMICS:
    H[_m] = _global_atomic
for _k in ("s_load_dword", "s_load_dwordx2", "s_load_dwordx4"):
    H[_k] = _s_load
for _k in ("u8", "i8", "u16", "i16", "b32", "b64", "b128"):
    H[f"ds_read_{_k}"] = _ds_read
for _k in ("b8", "b16", "b32", "b64", "b128"):
    H[f"ds_write_{_k}"] = _ds_write
for _m in DS_ATOMICS:
    H[_m] = _ds_atomic
H["ds_bpermute_b32"] = _ds_bpermute


SCOPES = ("wavefront", "workgroup", "device", "system")  # SC[1:0] of the gfx940 family


def cache_scope(w: Wave, inst: Inst) -> str:
    """The scope of a cache write-back or invalidation, checked against the target's ISA.

    gfx90a (MI200 ISA): `buffer_wbinvl1_vol` invalidates the vector L1 (device scope: gfx90a's
    L2 is coherent for the device) and takes no cache bits; `buffer_inv` does not exist there.
    gfx942/gfx950 (MI300/MI350 ISA): `buffer_wbl2` writes back and `buffer_inv` invalidates the
    caches up to the scope in SC1:SC0 (0 wavefront, sc0 workgroup, sc1 device, both system);
    `buffer_wbinvl1_vol` is gone on gfx950 (LLVM 22 rejects it)."""
    b = inst.base
    bad = sorted(k for k in inst.mods if k not in ("sc0", "sc1"))
    if b == "buffer_wbinvl1_vol":
        if w.t.name == "gfx950":
            raise err(w, inst, "buffer_wbinvl1_vol does not exist on gfx950 (use buffer_inv sc1)")
        if inst.mods:
            raise err(w, inst, f"buffer_wbinvl1_vol takes no cache bits, not {' '.join(sorted(inst.mods))}")
        return "device"
    if not w.t.gfx940:
        raise err(w, inst, f"{b} with sc0/sc1 scope bits is a gfx940-family instruction, not {w.t.name}'s")
    if bad:
        raise err(w, inst, f"{b}: {' '.join(bad)} is not a cache bit of {w.t.name} (sc0, sc1)")
    return SCOPES[(1 if inst.mods.get("sc0") else 0) | (2 if inst.mods.get("sc1") else 0)]


def _cache(w: Wave, inst: Inst, ctx: Ctx) -> None:
    """buffer_wbinvl1_vol / buffer_inv / buffer_wbl2: one coherent memory here, so no data moves;
    the instruction is checked against the target (cache_scope) and counted on vmcnt (the memory
    model waits for a write-back with `s_waitcnt vmcnt(0)`)."""
    cache_scope(w, inst)
    w.issue(Pending(inst, w.pc, False, True))


for _k in ("buffer_wbinvl1_vol", "buffer_inv", "buffer_wbl2"):
    H[_k] = _cache


# ---- program control (the run loop handles branches, waits, barriers, nops, the end) ----------
def branch_target(w: Wave, inst: Inst) -> int | None:
    """The next pc of a branch (None: fall through)."""
    lbl = inst.ops[0]
    assert isinstance(lbl, Label)
    b = inst.base
    take = (
        b == "s_branch"
        or (b == "s_cbranch_scc0" and w.scc == 0)
        or (b == "s_cbranch_scc1" and w.scc == 1)
        or (b == "s_cbranch_execz" and w.exec == 0)
        or (b == "s_cbranch_execnz" and w.exec != 0)
    )
    return w.k.labels[lbl.name] if take else None


BRANCHES = {"s_branch", "s_cbranch_scc0", "s_cbranch_scc1", "s_cbranch_execz", "s_cbranch_execnz"}
CONTROL = BRANCHES | {"s_nop", "s_endpgm", "s_barrier", "s_waitcnt"}

__all__ = ["BRANCHES", "CONTROL", "Ctx", "H", "branch_target"]
