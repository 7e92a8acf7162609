"""What each instruction of the emitted subset does (the gfx9 ISA's definitions, wave64).

Floating point follows the hardware in IEEE mode with denormals kept (the descriptor's
`float_denorm_mode_32/16_64 3`): VALU arithmetic rounds once to nearest even (NumPy's float32 /
float64 and the exact fma of isa/semantics.py), NaN results are quiet but not canonical (the
backend canonicalises where WAVE needs it), `v_min/v_max` are minNum/maxNum with an sNaN
operand giving a quiet NaN. The approximate ops `v_rcp/v_rsq/v_exp/v_log_f32` are modelled as
correctly rounded with denormal inputs and results flushed to zero (the hardware neither takes
nor gives denormals there); `v_sqrt_f32` and `v_rcp/v_rsq_f64` as correctly rounded. Their
stated accuracy of 1 ulp is modelled by the test mode `run(..., approx=...)` (execute.Ulp).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ...isa.semantics import _fmax, _fmin, f16_from64, fma_f32, fma_f64, popcount
from .machine import W, Wave, bits_to_mask, lane_bits
from .parse import AmdgcnSimError, FConst, Inst

U16, U32, U64, I32, I64 = np.uint16, np.uint32, np.uint64, np.int32, np.int64
F16, F32, F64 = np.float16, np.float32, np.float64
LANES = np.arange(W)

from ...backends.amdgcn.ir import Imm, Neg, Phys, Special  # noqa: E402


def err(w: Wave, inst: Inst, msg: str) -> AmdgcnSimError:
    return AmdgcnSimError(f"{w.where(inst)}: {msg}")


# ---- operand access ------------------------------------------------------------------------
def _imm32(o: object, fp: int) -> int:
    if isinstance(o, Imm):
        return o.value & 0xFFFFFFFF
    assert isinstance(o, FConst)
    return o.bits(fp if fp in (16, 32) else 32)


def v32(w: Wave, inst: Inst, o: object, fp: int = 32) -> np.ndarray:
    """A 32-bit VALU source across the lanes (uint32); `-x` negates a float of width fp."""
    neg = isinstance(o, Neg)
    if neg:
        o = o.o
    if isinstance(o, Phys):
        if o.size != 1:
            raise err(w, inst, f"{o} where one register is expected")
        if o.rc == "v":
            r = w.v[o.idx]
        elif o.rc == "a":
            r = w.a[o.idx]
        else:
            r = np.full(W, w.s[o.idx], dtype=U32)
    elif isinstance(o, Special):
        r = np.full(W, s32(w, inst, o), dtype=U32)
    elif isinstance(o, (Imm, FConst)):
        r = np.full(W, _imm32(o, fp), dtype=U32)
    else:
        raise err(w, inst, f"operand {o} is not a 32-bit source")
    if neg:
        r = r ^ U32(0x8000 if fp == 16 else 0x80000000)
    return r


def v64(w: Wave, inst: Inst, o: object, fp: bool = True) -> np.ndarray:
    neg = isinstance(o, Neg)
    if neg:
        o = o.o
    if isinstance(o, Phys):
        if o.size != 2:
            raise err(w, inst, f"{o} where a register pair is expected")
        if o.rc == "v":
            if o.idx % 2:
                raise err(w, inst, f"{o}: 64-bit VGPR tuples must start at an even register on {w.t.name}")
            r = w.v[o.idx].astype(U64) | (w.v[o.idx + 1].astype(U64) << U64(32))
        else:
            r = np.full(W, w.s[o.idx] | (w.s[o.idx + 1] << 32), dtype=U64)
    elif isinstance(o, FConst):
        r = np.full(W, o.bits(64), dtype=U64)
    elif isinstance(o, Imm):
        if not -16 <= o.value <= 64:
            raise err(w, inst, f"{o}: a 64-bit operand takes inline constants only in the emitted subset")
        r = np.full(W, o.value & ((1 << 64) - 1), dtype=U64)
    else:
        raise err(w, inst, f"operand {o} is not a 64-bit source")
    if neg:
        r = r ^ U64(1 << 63)
    return r


def s32(w: Wave, inst: Inst, o: object) -> int:
    if isinstance(o, Phys) and o.rc == "s" and o.size == 1:
        return w.s[o.idx]
    if isinstance(o, Imm):
        return o.value & 0xFFFFFFFF
    if isinstance(o, FConst):
        return o.bits(32)
    if isinstance(o, Special):
        n = o.name
        if n == "vcc_lo":
            return w.vcc & 0xFFFFFFFF
        if n == "vcc_hi":
            return w.vcc >> 32
        if n == "exec_lo":
            return w.exec & 0xFFFFFFFF
        if n == "exec_hi":
            return w.exec >> 32
        if n == "m0":
            return w.m0
        if n == "scc":
            return w.scc
    raise err(w, inst, f"operand {o} is not a 32-bit scalar source")


def s64(w: Wave, inst: Inst, o: object) -> int:
    if isinstance(o, Phys) and o.rc == "s" and o.size == 2:
        if o.idx % 2:
            raise err(w, inst, f"{o}: SGPR pairs must start at an even register")
        return w.s[o.idx] | (w.s[o.idx + 1] << 32)
    if isinstance(o, Special) and o.name == "exec":
        return w.exec
    if isinstance(o, Special) and o.name == "vcc":
        return w.vcc
    if isinstance(o, Imm):
        if not -16 <= o.value <= 64:
            raise err(w, inst, f"{o}: a 64-bit scalar operand takes inline constants only")
        return o.value & ((1 << 64) - 1)
    raise err(w, inst, f"operand {o} is not a 64-bit scalar source")


def set_s32(w: Wave, inst: Inst, o: object, val: int) -> None:
    val &= 0xFFFFFFFF
    if isinstance(o, Phys) and o.rc == "s" and o.size == 1:
        if o.idx >= 102:
            raise err(w, inst, f"{o} is beyond the 102 SGPRs a kernel may use")
        w.s[o.idx] = val
    elif isinstance(o, Special) and o.name in ("vcc_lo", "vcc_hi", "exec_lo", "exec_hi", "m0"):
        if o.name == "m0":
            w.m0 = val
        else:
            attr, hi = o.name[:-3], o.name.endswith("_hi")
            cur = getattr(w, attr)
            cur = (cur & 0xFFFFFFFF) | (val << 32) if hi else (cur & ~0xFFFFFFFF) | val
            setattr(w, attr, cur & ((1 << 64) - 1))
    else:
        raise err(w, inst, f"operand {o} is not a 32-bit scalar destination")


def set_s64(w: Wave, inst: Inst, o: object, val: int) -> None:
    val &= (1 << 64) - 1
    if isinstance(o, Phys) and o.rc == "s" and o.size == 2:
        if o.idx % 2:
            raise err(w, inst, f"{o}: SGPR pairs must start at an even register")
        if o.idx + 1 >= 102:
            raise err(w, inst, f"{o} is beyond the 102 SGPRs a kernel may use")
        w.s[o.idx] = val & 0xFFFFFFFF
        w.s[o.idx + 1] = val >> 32
    elif isinstance(o, Special) and o.name == "exec":
        w.exec = val
    elif isinstance(o, Special) and o.name == "vcc":
        w.vcc = val
    else:
        raise err(w, inst, f"operand {o} is not a 64-bit scalar destination")


def vdst(w: Wave, inst: Inst, o: object, n: int = 1) -> tuple[np.ndarray, int]:
    """(register file, first index) of a VGPR (or AGPR) destination of n dwords."""
    if not isinstance(o, Phys) or o.rc not in ("v", "a") or o.size != n:
        raise err(w, inst, f"{o} is not a destination of {n} VGPR(s)")
    if n >= 2 and o.idx % 2:
        raise err(w, inst, f"{o}: VGPR tuples must start at an even register on {w.t.name}")
    f = w.v if o.rc == "v" else w.a
    if o.idx + n > f.shape[0]:
        raise err(
            w,
            inst,
            f"{o} is beyond the kernel's {f.shape[0]} {'VGPRs' if o.rc == 'v' else 'AGPRs'} (.amdhsa_next_free_vgpr)",
        )
    return f, o.idx


def set_v32(w: Wave, inst: Inst, o: object, val: np.ndarray, mask: np.ndarray | None = None) -> None:
    f, i = vdst(w, inst, o)
    m = lane_bits(w.exec) if mask is None else mask
    f[i] = np.where(m, np.asarray(val, dtype=U32), f[i])


def set_v64(w: Wave, inst: Inst, o: object, val: np.ndarray) -> None:
    f, i = vdst(w, inst, o, 2)
    m = lane_bits(w.exec)
    val = np.asarray(val, dtype=U64)
    f[i] = np.where(m, (val & U64(0xFFFFFFFF)).astype(U32), f[i])
    f[i + 1] = np.where(m, (val >> U64(32)).astype(U32), f[i + 1])


def as_f32(x: np.ndarray) -> np.ndarray:
    return x.astype(U32, copy=False).view(F32)


def as_f64(x: np.ndarray) -> np.ndarray:
    return x.astype(U64, copy=False).view(F64)


def bits32(x: np.ndarray) -> np.ndarray:
    return np.asarray(x, dtype=F32).view(U32)


def bits64(x: np.ndarray) -> np.ndarray:
    return np.asarray(x, dtype=F64).view(U64)


# ---- float helpers -------------------------------------------------------------------------
def _snan32(x: np.ndarray) -> np.ndarray:
    b = x.view(U32)
    return ((b & U32(0x7F800000)) == U32(0x7F800000)) & ((b & U32(0x7FFFFF)) != 0) & ((b & U32(0x400000)) == 0)


def _snan64(x: np.ndarray) -> np.ndarray:
    b = x.view(U64)
    exp = U64(0x7FF0000000000000)
    return ((b & exp) == exp) & ((b & U64(0xFFFFFFFFFFFFF)) != 0) & ((b & U64(1 << 51)) == 0)


def _quiet(x: np.ndarray, wide: bool) -> np.ndarray:
    if wide:
        return (x.view(U64) | U64(1 << 51)).view(F64)
    return (x.view(U32) | U32(0x400000)).view(F32)


def minmax(a: np.ndarray, b: np.ndarray, is_min: bool, wide: bool) -> np.ndarray:
    """IEEE-mode v_min/v_max: an sNaN operand gives a quiet NaN, one quiet NaN gives the other operand."""
    r = _fmin(a, b) if is_min else _fmax(a, b)
    sn = _snan64 if wide else _snan32
    sa, sb = sn(a), sn(b)
    if sa.any() or sb.any():
        r = np.where(sa, _quiet(a, wide), np.where(sb, _quiet(b, wide), r))
    return r


def ftz32(x: np.ndarray) -> np.ndarray:
    b = x.view(U32)
    den = (b & U32(0x7F800000)) == 0
    return np.where(den, (b & U32(0x80000000)), b).view(F32)


def _approx32(fn: Callable[[np.ndarray], np.ndarray]) -> Callable[[np.ndarray], np.ndarray]:
    def g(x: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            r = fn(ftz32(x).astype(F64)).astype(F32)
        return ftz32(r)

    return g


def cvt_int(x: np.ndarray, signed: bool) -> np.ndarray:
    """v_cvt_{i,u}32_f{32,64}: truncate, clamp, NaN -> 0."""
    v = np.trunc(np.asarray(x, dtype=F64))
    lo, hi = (-(2.0**31), 2.0**31 - 1) if signed else (0.0, 2.0**32 - 1)
    v = np.where(np.isnan(v), 0.0, np.clip(v, lo, hi))
    return v.astype(np.int64).astype(U32)


def fract32(x: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        r = np.minimum(x - np.floor(x), np.float32(np.nextafter(np.float32(1), np.float32(0))))
    r = np.where(np.isinf(x), np.float32(np.nan), r)
    return np.where(np.isnan(x), x, r).astype(F32)


def cmp_class(x: np.ndarray, mask: np.ndarray, wide: bool) -> np.ndarray:
    b = x.view(U64 if wide else U32)
    neg = np.signbit(x)
    snan = _snan64(x) if wide else _snan32(x)
    nan = np.isnan(x)
    inf = np.isinf(x)
    zero = x == 0
    finite = ~nan & ~inf & ~zero
    expmask = U64(0x7FF0000000000000) if wide else U32(0x7F800000)
    den = finite & ((b & expmask) == 0)
    norm = finite & ~den
    classes = [
        snan,
        nan & ~snan,
        inf & neg,
        norm & neg,
        den & neg,
        zero & neg,
        zero & ~neg,
        den & ~neg,
        norm & ~neg,
        inf & ~neg,
    ]
    r = np.zeros(W, bool)
    for i, c in enumerate(classes):
        r |= c & ((mask >> U32(i)) & U32(1)).astype(bool)
    return r


def _exponent32(x: np.ndarray) -> np.ndarray:
    return ((x.view(U32) >> U32(23)) & U32(0xFF)).astype(np.int64)


def _exponent64(x: np.ndarray) -> np.ndarray:
    return ((x.view(U64) >> U64(52)) & U64(0x7FF)).astype(np.int64)


def div_scale(s0: np.ndarray, s1: np.ndarray, s2: np.ndarray, wide: bool) -> tuple[np.ndarray, np.ndarray]:
    """V_DIV_SCALE_F32/F64 (the ISA's definition): s0 scaled when the division s2 / s1 needs it; VCC
    set when the quotient must be rescaled by v_div_fmas."""
    ft = F64 if wide else F32
    expo = _exponent64 if wide else _exponent32
    bias_gap, mant, big = (768, 53, 128) if wide else (96, 23, 64)
    minnorm = 2.0 ** (-1022 if wide else -126)
    d = s0.copy()
    vcc = np.zeros(W, bool)
    with np.errstate(all="ignore"):
        recip = (1.0 / s1.astype(F64)).astype(ft)
        quot = (s2.astype(F64) / s1.astype(F64)).astype(ft)
    e1, e2 = expo(s1), expo(s2)
    s1_den = (s1 != 0) & (np.abs(s1) < minnorm)
    rec_den = (recip != 0) & (np.abs(recip) < minnorm)
    quo_den = (quot != 0) & (np.abs(quot) < minnorm)
    with np.errstate(all="ignore"):
        up = np.ldexp(s0, big).astype(ft)
        down = np.ldexp(s0, -big).astype(ft)
    nan = np.full(W, np.nan, ft)
    done = np.zeros(W, bool)

    def case(cond: np.ndarray, val: np.ndarray | None, setvcc: bool, only_if: np.ndarray | None = None) -> None:
        nonlocal d, vcc, done
        c = cond & ~done
        if setvcc:
            vcc = vcc | c
        if val is not None:
            apply = c if only_if is None else c & only_if
            d = np.where(apply, val, d)
        done = done | c

    case((s2 == 0) | (s1 == 0), nan, False)
    case(np.isnan(s1) | np.isnan(s2) | np.isinf(s1) | np.isinf(s2), None, False)
    case(e2 - e1 >= bias_gap, up, True, s0 == s1)
    case(s1_den, up, False)
    case(rec_den & quo_den, down, True, s0 == s1)
    case(rec_den, down, False)
    case(quo_den, up, True, s0 == s2)
    case(e2 <= mant, up, False)
    return d, vcc


def div_fmas(a: np.ndarray, b: np.ndarray, c: np.ndarray, vcc: np.ndarray, wide: bool) -> np.ndarray:
    """V_DIV_FMAS_F32/F64: fma(a, b, c), in lanes with VCC scaled by 2^64 (f64: 2^128) when |c| >= 2,
    else by 2^-64 (2^-128), rounded once."""
    big, ebias = (128, 1024) if wide else (64, 128)
    expo = _exponent64(c) if wide else _exponent32(c)
    k = np.where(expo >= ebias, big, -big)
    with np.errstate(all="ignore"):
        if not wide:
            from ...isa.semantics import _fma64_round_odd

            r64 = _fma64_round_odd(a.astype(F64) * b.astype(F64), c.astype(F64))
            scaled = np.ldexp(r64, k).astype(F32)
            return np.where(vcc, scaled, fma_f32(a, b, c)).astype(F32)
        r = fma_f64(a, b, c)
        out = np.where(vcc, np.ldexp(r, k), r)
        for i in np.flatnonzero(vcc & np.isfinite(a) & np.isfinite(b) & np.isfinite(c)):
            from fractions import Fraction

            exact = Fraction(float(a[i])) * Fraction(float(b[i])) + Fraction(float(c[i]))
            exact *= Fraction(2) ** int(k[i])
            try:
                out[i] = float(exact) if exact != 0 else out[i]
            except OverflowError:
                out[i] = math.inf if exact > 0 else -math.inf
        return out


def div_fixup(q: np.ndarray, den: np.ndarray, num: np.ndarray, wide: bool) -> np.ndarray:
    """V_DIV_FIXUP_F32/F64: the special cases of num / den around the computed quotient q."""
    ft = F64 if wide else F32
    sign = np.signbit(den) ^ np.signbit(num)
    inf = np.where(sign, -np.inf, np.inf).astype(ft)
    zero = np.where(sign, -0.0, 0.0).astype(ft)
    mag = np.where(sign, -np.abs(q), np.abs(q)).astype(ft)
    qnan = np.full(W, np.nan, ft)
    expo = _exponent64 if wide else _exponent32
    r = np.where(np.isnan(q), inf, mag)  # a NaN estimate: the intermediate overflowed
    r = np.where(expo(num) - expo(den) < (-1075 if wide else -150), zero, r)
    # later cases have lower priority: apply in reverse order of the definition
    r = np.where(np.isinf(den) | (num == 0), zero, r)
    r = np.where((den == 0) | np.isinf(num), inf, r)
    r = np.where(np.isinf(den) & np.isinf(num), qnan, r)
    r = np.where((den == 0) & (num == 0), qnan, r)
    r = np.where(np.isnan(den), _quiet(den.copy(), wide), r)
    r = np.where(np.isnan(num), _quiet(num.copy(), wide), r)
    return r.astype(ft)


def rz_f32(x: np.ndarray) -> np.ndarray:
    r = x.astype(F32)
    with np.errstate(all="ignore"):
        over = np.abs(r.astype(F64)) > np.abs(x)
    return np.where(over & ~np.isnan(x), np.nextafter(r, np.float32(0)), r).astype(F32)


def f16_round(x64: np.ndarray) -> np.ndarray:
    """float64 (exact or rounded to odd) -> f16 bits (nearest even)."""
    with np.errstate(all="ignore"):
        return f16_from64(x64).astype(U32)


def f16_val(bits: np.ndarray) -> np.ndarray:
    return (bits & U32(0xFFFF)).astype(U16).view(F16).astype(F64)


def mbcnt(mask: int, hi: bool) -> np.ndarray:
    half = (mask >> 32) if hi else (mask & 0xFFFFFFFF)
    bits = np.array([(half >> i) & 1 for i in range(32)], dtype=np.int64)
    cum = np.concatenate([[0], np.cumsum(bits)])  # cum[i] = bits below position i
    pos = np.clip(LANES - (32 if hi else 0), 0, 32)
    return cum[pos].astype(U32)


__all__ = [
    "I32",
    "I64",
    "_approx32",
    "as_f32",
    "as_f64",
    "bits32",
    "bits64",
    "bits_to_mask",
    "cmp_class",
    "cvt_int",
    "div_fixup",
    "div_scale",
    "err",
    "f16_round",
    "f16_val",
    "fma_f32",
    "fma_f64",
    "fract32",
    "ftz32",
    "lane_bits",
    "math",
    "mbcnt",
    "minmax",
    "popcount",
    "rz_f32",
    "s32",
    "s64",
    "set_s32",
    "set_s64",
    "set_v32",
    "set_v64",
    "v32",
    "v64",
    "vdst",
]
