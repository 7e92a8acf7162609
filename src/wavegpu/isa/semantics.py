"""Vectorised value semantics of every ALU row (DESIGN section 3), on raw register bits.

Float arithmetic returns canonical NaNs (f32 0x7FFFFFFF, f64 0x7FFFFFFFFFFFFFFF, f16 and bf16
0x7FFF), as NVIDIA GPUs do, so results do not depend on the host CPU's NaN propagation;
moves, neg and abs keep the bits.

A function takes its source operands as NumPy arrays of raw bits (uint32 for a register, uint64
for a register pair, bool for a predicate) and returns the destination's raw bits the same
way. Memory, atomics, wave operations, control flow and special registers need machine state
and live in the emulator. `SEMANTICS` holds a function for every value row (table.VALUE_ROWS)
but the special-register move.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .table import ROWS, InstrSpec
from .types import DataType
from .vocabulary import AtomOp, Cmp, Op, ReduceOp

U32 = np.uint32
U64 = np.uint64
I32 = np.int32
F32 = np.float32
F64 = np.float64

Fn = Callable[..., np.ndarray]
SEMANTICS: dict[str, Fn] = {}


def _def(*keys: str) -> Callable[[Fn], Fn]:
    def deco(fn: Fn) -> Fn:
        for k in keys:
            SEMANTICS[k] = fn
        return fn

    return deco


def u32(x: np.ndarray) -> np.ndarray:
    return np.asarray(x).astype(U32, copy=False)


def s32(x: np.ndarray) -> np.ndarray:
    return np.asarray(x).astype(U32, copy=False).view(I32)


def f32(x: np.ndarray) -> np.ndarray:
    return np.asarray(x).astype(U32, copy=False).view(F32)


def f64(x: np.ndarray) -> np.ndarray:
    return np.asarray(x).astype(U64, copy=False).view(F64)


def bits32(x: np.ndarray) -> np.ndarray:
    """float32/int32 values -> raw uint32 bits."""
    x = np.asarray(x)
    if x.dtype == F32:
        return x.view(U32)
    return x.astype(I32, copy=False).view(U32) if x.dtype == I32 else x.astype(U32, copy=False)


def bits64(x: np.ndarray) -> np.ndarray:
    return np.asarray(x, dtype=F64).view(U64)


CANON_F32 = U32(0x7FFFFFFF)
CANON_F64 = U64(0x7FFFFFFFFFFFFFFF)
CANON_F16 = np.uint16(0x7FFF)


def canon32(x: np.ndarray) -> np.ndarray:
    """float32 values -> bits, with every NaN made the canonical 0x7FFFFFFF."""
    x = np.asarray(x, dtype=F32)
    nan = x != x
    if nan.any():
        return np.where(nan, CANON_F32, x.view(U32))
    return x.view(U32)


def canon64(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=F64)
    nan = x != x
    if nan.any():
        return np.where(nan, CANON_F64, x.view(U64))
    return x.view(U64)


def f32_from64(x: np.ndarray) -> np.ndarray:
    """Round float64 to float32 (nearest even) and return the bits (NaN canonical)."""
    return canon32(np.asarray(x, dtype=F64).astype(F32))


# ---- moves ------------------------------------------------------------------------------------
@_def("mov.b32", "mov.b64", "mov.pred")
def _mov(a: np.ndarray) -> np.ndarray:
    return np.array(a, copy=True)


# ---- integer ---------------------------------------------------------------------------------
@_def("add.s32", "add.u32")
def _add(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return u32(a) + u32(b)


@_def("sub.s32", "sub.u32")
def _sub(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return u32(a) - u32(b)


@_def("mul.lo.s32", "mul.lo.u32")
def _mullo(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return u32(a) * u32(b)


@_def("mul.hi.s32")
def _mulhi_s(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    p = s32(a).astype(np.int64) * s32(b).astype(np.int64)
    return (p >> 32).astype(U32)


@_def("mul.hi.u32")
def _mulhi_u(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return ((u32(a).astype(U64) * u32(b).astype(U64)) >> U64(32)).astype(U32)


@_def("mul.wide.s32")
def _mulwide_s(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (s32(a).astype(np.int64) * s32(b).astype(np.int64)).view(U64)


@_def("mul.wide.u32")
def _mulwide_u(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return u32(a).astype(U64) * u32(b).astype(U64)


@_def("mad.lo.s32", "mad.lo.u32")
def _mad(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    return u32(a) * u32(b) + u32(c)


@_def("div.u32")
def _divu(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a, b = np.broadcast_arrays(u32(a), u32(b))
    zero = b == 0
    q = a // np.where(zero, U32(1), b)
    return np.where(zero, U32(0xFFFFFFFF), q).astype(U32)


@_def("rem.u32")
def _remu(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a, b = np.broadcast_arrays(u32(a), u32(b))
    zero = b == 0
    r = a % np.where(zero, U32(1), b)
    return np.where(zero, a, r).astype(U32)


def _sdiv(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    x = s32(a).astype(np.int64)
    y = s32(b).astype(np.int64)
    x, y = np.broadcast_arrays(x, y)
    zero = y == 0
    ys = np.where(zero, 1, y)
    q = np.abs(x) // np.abs(ys) * np.sign(x) * np.sign(ys)  # truncating division
    r = x - q * ys
    return x, q, r, zero


@_def("div.s32")
def _divs(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    _x, q, _r, zero = _sdiv(a, b)
    # INT_MIN / -1 = 2^31 wraps to INT_MIN
    return np.where(zero, np.int64(-1), q).astype(np.int64).astype(U32)


@_def("rem.s32")
def _rems(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    x, _q, r, zero = _sdiv(a, b)
    return np.where(zero, x, r).astype(np.int64).astype(U32)


@_def("neg.s32")
def _negs(a: np.ndarray) -> np.ndarray:
    return U32(0) - u32(a)


@_def("abs.s32")
def _abss(a: np.ndarray) -> np.ndarray:
    x = s32(a)
    return np.where(x < 0, U32(0) - u32(a), u32(a)).astype(U32)


@_def("min.s32")
def _mins(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.minimum(s32(a), s32(b)).view(U32)


@_def("max.s32")
def _maxs(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.maximum(s32(a), s32(b)).view(U32)


@_def("min.u32")
def _minu(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.minimum(u32(a), u32(b))


@_def("max.u32")
def _maxu(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.maximum(u32(a), u32(b))


@_def("clamp.s32")
def _clamps(a: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    return np.minimum(np.maximum(s32(a), s32(lo)), s32(hi)).view(U32)


@_def("clamp.u32")
def _clampu(a: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    return np.minimum(np.maximum(u32(a), u32(lo)), u32(hi))


def _bytes(x: np.ndarray, signed: bool) -> list[np.ndarray]:
    v = u32(x)
    out = []
    for i in range(4):
        b = ((v >> U32(8 * i)) & U32(0xFF)).astype(np.int64)
        out.append(np.where(b >= 128, b - 256, b) if signed else b)
    return out


@_def("dp4a.s32.s32")
def _dp4a_s(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    acc = s32(c).astype(np.int64)
    for x, y in zip(_bytes(a, True), _bytes(b, True)):
        acc = acc + x * y
    return (acc & 0xFFFFFFFF).astype(U32)


@_def("dp4a.u32.u32")
def _dp4a_u(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    acc = u32(c).astype(np.int64)
    for x, y in zip(_bytes(a, False), _bytes(b, False)):
        acc = acc + x * y
    return (acc & 0xFFFFFFFF).astype(U32)


# ---- bitwise ---------------------------------------------------------------------------------
@_def("and.b32")
def _and(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return u32(a) & u32(b)


@_def("or.b32")
def _or(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return u32(a) | u32(b)


@_def("xor.b32")
def _xor(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return u32(a) ^ u32(b)


@_def("not.b32")
def _not(a: np.ndarray) -> np.ndarray:
    return ~u32(a)


@_def("and.pred")
def _andp(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.logical_and(a, b)


@_def("or.pred")
def _orp(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.logical_or(a, b)


@_def("xor.pred")
def _xorp(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.logical_xor(a, b)


@_def("not.pred")
def _notp(a: np.ndarray) -> np.ndarray:
    return np.logical_not(a)


@_def("shl.b32")
def _shl(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a, b = np.broadcast_arrays(u32(a), u32(b))
    big = b > U32(31)
    return np.where(big, U32(0), a << np.where(big, U32(0), b)).astype(U32)


@_def("shr.u32")
def _shru(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a, b = np.broadcast_arrays(u32(a), u32(b))
    big = b > U32(31)
    return np.where(big, U32(0), a >> np.where(big, U32(0), b)).astype(U32)


@_def("shr.s32")
def _shrs(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    b = np.minimum(u32(b), U32(31)).astype(I32)
    return (s32(a) >> b).view(U32)


def popcount(v: np.ndarray) -> np.ndarray:
    v = u32(v)
    v = v - ((v >> U32(1)) & U32(0x55555555))
    v = (v & U32(0x33333333)) + ((v >> U32(2)) & U32(0x33333333))
    v = (v + (v >> U32(4))) & U32(0x0F0F0F0F)
    return (v * U32(0x01010101)) >> U32(24)


@_def("popc.b32")
def _popc(a: np.ndarray) -> np.ndarray:
    return popcount(a).astype(U32)


@_def("clz.b32")
def _clz(a: np.ndarray) -> np.ndarray:
    v = u32(a)
    n = np.zeros(np.shape(v), dtype=U32)
    x = np.array(v, copy=True)
    for shift in (16, 8, 4, 2, 1):
        top = x < (U32(1) << U32(32 - shift))
        n = np.where(top, n + U32(shift), n)
        x = np.where(top, x << U32(shift), x)
    return np.where(v == 0, U32(32), n).astype(U32)


@_def("brev.b32")
def _brev(a: np.ndarray) -> np.ndarray:
    v = u32(a)
    v = ((v >> U32(1)) & U32(0x55555555)) | ((v & U32(0x55555555)) << U32(1))
    v = ((v >> U32(2)) & U32(0x33333333)) | ((v & U32(0x33333333)) << U32(2))
    v = ((v >> U32(4)) & U32(0x0F0F0F0F)) | ((v & U32(0x0F0F0F0F)) << U32(4))
    v = ((v >> U32(8)) & U32(0x00FF00FF)) | ((v & U32(0x00FF00FF)) << U32(8))
    return ((v >> U32(16)) | (v << U32(16))).astype(U32)


def _bfe(a: np.ndarray, b: np.ndarray, c: np.ndarray, signed: bool) -> np.ndarray:
    x = u32(a).astype(np.int64)
    pos = (u32(b) & U32(0xFF)).astype(np.int64)
    ln = (u32(c) & U32(0xFF)).astype(np.int64)
    x, pos, ln = np.broadcast_arrays(x, pos, ln)
    width = np.clip(np.minimum(ln, 32 - np.minimum(pos, 32)), 0, 32)
    shifted = np.where(pos >= 32, 0, x >> np.minimum(pos, 31))
    field = shifted & ((np.int64(1) << width) - 1)
    if signed:
        msb_index = np.minimum(pos + ln - 1, 31)
        sbit = np.where(ln == 0, 0, (x >> np.clip(msb_index, 0, 31)) & 1)
        fill = np.where(sbit == 1, ~((np.int64(1) << width) - 1) & 0xFFFFFFFF, 0)
        field = field | fill
    return (field & 0xFFFFFFFF).astype(U32)


@_def("bfe.u32")
def _bfeu(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    return _bfe(a, b, c, False)


@_def("bfe.s32")
def _bfes(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    return _bfe(a, b, c, True)


@_def("bfi.b32")
def _bfi(a: np.ndarray, b: np.ndarray, c: np.ndarray, e: np.ndarray) -> np.ndarray:
    """Insert the low c bits of a at position b into e (PTX bfi with the spec's operand order)."""
    ins = u32(a).astype(np.int64)
    pos = (u32(b) & U32(0xFF)).astype(np.int64)
    ln = (u32(c) & U32(0xFF)).astype(np.int64)
    base = u32(e).astype(np.int64)
    ins, pos, ln, base = np.broadcast_arrays(ins, pos, ln, base)
    width = np.clip(np.minimum(ln, 32 - np.minimum(pos, 32)), 0, 32)
    mask = ((np.int64(1) << width) - 1) << np.minimum(pos, 31)
    mask = np.where(pos >= 32, 0, mask) & 0xFFFFFFFF
    out = (base & ~mask) | ((ins << np.minimum(pos, 31)) & mask)
    return (out & 0xFFFFFFFF).astype(U32)


# ---- floating point helpers -------------------------------------------------------------------
def _fma64_round_odd(p: np.ndarray, c: np.ndarray) -> np.ndarray:
    """p + c in float64 rounded to odd (p, c exact float64 values without overflow)."""
    p, c = np.broadcast_arrays(np.asarray(p, dtype=F64), np.asarray(c, dtype=F64))
    s = p + c
    bb = s - p
    e = (p - (s - bb)) + (c - bb)
    inexact = (e != 0) & np.isfinite(s)
    even = (s.view(U64) & U64(1)) == U64(0)
    adjust = inexact & even
    if np.any(adjust):
        toward = np.where(e > 0, np.inf, -np.inf)
        s = np.where(adjust, np.nextafter(s, toward), s)
    return s


def fma_f32(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Correctly rounded float32 fma on float32 values (returns float32).

    a*b is exact in float64. Rounding the float64 sum again to float32 is wrong only when the
    sum lands exactly on a float32 midpoint (it cannot jump over one), or in the float32
    subnormal range whose midpoints sit elsewhere: those lanes take the round-to-odd path.
    """
    a64, b64, c64 = (np.asarray(x, dtype=F32).astype(F64) for x in (a, b, c))
    p = a64 * b64
    s = p + c64
    r = s.astype(F32)
    low = s.view(U64) & U64(0x1FFFFFFF)
    suspect = (low == U64(0x10000000)) | ((np.abs(s) < 2.0**-125) & (s != 0))
    if np.any(suspect):
        r = np.array(r, copy=True)
        p, c64, suspect = np.broadcast_arrays(p, c64, suspect)
        r[suspect] = _fma64_round_odd(p[suspect], c64[suspect]).astype(F32)
    return r


def _split(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    t = x * 134217729.0  # 2^27 + 1
    hi = t - (t - x)
    return hi, x - hi


def fma_f64(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Correctly rounded float64 fma (Boldo-Melquiond with round-to-odd; exact fallback)."""
    a, b, c = np.broadcast_arrays(np.asarray(a, dtype=F64), np.asarray(b, dtype=F64), np.asarray(c, dtype=F64))
    with np.errstate(all="ignore"):
        ph = a * b
        ah, al = _split(a)
        bh, bl = _split(b)
        pl = ((ah * bh - ph) + ah * bl + al * bh) + al * bl
        uh = c + ph
        bb = uh - c
        ul = (c - (uh - bb)) + (ph - bb)
        t = _fma64_round_odd(ul, pl)
        r = uh + t
        # a zero product plus a zero is IEEE's signed-zero sum ((-0) + (-0) = -0, else +0);
        # the error-free transformation loses the sign (it gave +0 for fma(0, -1, -0))
        zeros = (r == 0) & ((a == 0) | (b == 0))
        if np.any(zeros):
            r = np.where(zeros, ph + c, r)
        # the error-free transformations are exact unless something overflows or underflows
        tiny = 2.0**-900
        safe = (
            np.isfinite(r)
            & (np.abs(a) < 2.0**500)
            & (np.abs(b) < 2.0**500)
            & (np.abs(c) < 2.0**1000)
            & ((np.abs(ph) > tiny) | (a == 0) | (b == 0))
            & ((np.abs(c) > tiny) | (c == 0))
        )
        slow = ~safe
    if np.any(slow):
        r = np.array(r, copy=True)
        idx = np.nonzero(slow)
        for i in zip(*idx):
            r[i] = _fma_exact(float(a[i]), float(b[i]), float(c[i]))
    return r


def _fma_exact(a: float, b: float, c: float) -> float:
    """fma by exact rational arithmetic (IEEE special cases first)."""
    import math

    if math.isnan(a) or math.isnan(b) or math.isnan(c):
        return a * b + c  # a NaN
    if math.isinf(a) or math.isinf(b):
        return a * b + c  # inf or nan by IEEE rules, no rounding involved
    if math.isinf(c):
        return c
    from fractions import Fraction  # here, not at import: start-up of the commands

    exact = Fraction(a) * Fraction(b) + Fraction(c)
    if exact == 0:
        # sign of an exact zero sum: (a*b) + c with IEEE rules for signed zeros
        return (a * b) + c if (a * b) + c == 0 else 0.0
    try:
        return float(exact)  # correctly rounded (CPython rounds Fraction division exactly)
    except OverflowError:
        return math.inf if exact > 0 else -math.inf


def _fmin(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """IEEE minNum: a NaN operand yields the other; -0 < +0. (np.fmin is not used: NumPy 2.4's
    SIMD fmin/nanmin reductions return wrong results for some NaN inputs.)"""
    an, bn = a != a, b != b
    r = np.where(an, b, np.where(bn, a, np.minimum(a, b)))
    both_zero = (a == 0) & (b == 0)
    if np.any(both_zero):
        r = np.where(both_zero, np.where(np.signbit(a) | np.signbit(b), -0.0, 0.0).astype(r.dtype), r)
    return r


def _fmax(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """IEEE maxNum: a NaN operand yields the other; +0 > -0."""
    an, bn = a != a, b != b
    r = np.where(an, b, np.where(bn, a, np.maximum(a, b)))
    both_zero = (a == 0) & (b == 0)
    if np.any(both_zero):
        r = np.where(both_zero, np.where(np.signbit(a) & np.signbit(b), -0.0, 0.0).astype(r.dtype), r)
    return r


# ---- f32 -------------------------------------------------------------------------------------
@_def("add.f32")
def _addf(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return canon32(f32(a) + f32(b))


@_def("sub.f32")
def _subf(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return canon32(f32(a) - f32(b))


@_def("mul.f32")
def _mulf(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return canon32(f32(a) * f32(b))


@_def("fma.f32")
def _fmaf(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    return canon32(fma_f32(f32(a), f32(b), f32(c)))


@_def("div.f32")
def _divf(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return canon32(f32(a) / f32(b))


@_def("sqrt.f32")
def _sqrtf(a: np.ndarray) -> np.ndarray:
    return canon32(np.sqrt(f32(a)))


@_def("rcp.f32")
def _rcpf(a: np.ndarray) -> np.ndarray:
    return f32_from64(1.0 / f32(a).astype(F64))


@_def("rsqrt.f32")
def _rsqrtf(a: np.ndarray) -> np.ndarray:
    return f32_from64(1.0 / np.sqrt(f32(a).astype(F64)))


@_def("neg.f32")
def _negf(a: np.ndarray) -> np.ndarray:
    return u32(a) ^ U32(0x80000000)


@_def("abs.f32")
def _absf(a: np.ndarray) -> np.ndarray:
    return u32(a) & U32(0x7FFFFFFF)


@_def("min.f32")
def _minf(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return canon32(_fmin(f32(a), f32(b)))


@_def("max.f32")
def _maxf(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return canon32(_fmax(f32(a), f32(b)))


@_def("sin.f32")
def _sinf(a: np.ndarray) -> np.ndarray:
    return f32_from64(np.sin(f32(a).astype(F64)))


@_def("cos.f32")
def _cosf(a: np.ndarray) -> np.ndarray:
    return f32_from64(np.cos(f32(a).astype(F64)))


@_def("exp2.f32")
def _exp2f(a: np.ndarray) -> np.ndarray:
    return f32_from64(np.exp2(f32(a).astype(F64)))


@_def("log2.f32")
def _log2f(a: np.ndarray) -> np.ndarray:
    return f32_from64(np.log2(f32(a).astype(F64)))


ONE_MINUS_ULP = np.float32(np.nextafter(np.float32(1), np.float32(0)))


@_def("fract.f32")
def _fractf(a: np.ndarray) -> np.ndarray:
    x = f32(a)
    r = np.minimum(x - np.floor(x), ONE_MINUS_ULP)
    r = np.where(np.isinf(x), np.float32(np.nan), r)
    return canon32(r)


@_def("sat.f32")
def _satf(a: np.ndarray) -> np.ndarray:
    x = f32(a)
    r = np.where(np.isnan(x), np.float32(0), np.clip(x, np.float32(0), np.float32(1)))
    return np.asarray(r, dtype=F32).view(U32)


@_def("clamp.f32")
def _clampf(a: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    return canon32(_fmin(_fmax(f32(a), f32(lo)), f32(hi)))


# ---- f16 / bf16 (packed and scalar in the low half) -------------------------------------------
def _halves(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    v = u32(x)
    return (v & U32(0xFFFF)).astype(np.uint16), (v >> U32(16)).astype(np.uint16)


def _pack(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    return lo.astype(U32) | (hi.astype(U32) << U32(16))


def f16_to64(h: np.ndarray) -> np.ndarray:
    return h.view(np.float16).astype(F64)


def f16_from64(x: np.ndarray) -> np.ndarray:
    """float64 -> float16 bits, round to nearest even; NaN becomes the canonical 0x7FFF."""
    x = np.asarray(x, dtype=F64)
    h = x.astype(np.float16).view(np.uint16)
    nan = x != x
    return np.where(nan, CANON_F16, h) if nan.any() else h


def bf16_to32(h: np.ndarray) -> np.ndarray:
    return (h.astype(U32) << U32(16)).view(F32)


def bf16_from32(x: np.ndarray) -> np.ndarray:
    """float32 -> bfloat16 bits, round to nearest even; NaN stays a quiet NaN."""
    b = np.asarray(x, dtype=F32).view(U32)
    rounded = (b + U32(0x7FFF) + ((b >> U32(16)) & U32(1))) >> U32(16)
    nan = np.isnan(np.asarray(x, dtype=F32))
    return np.where(nan, U32(0x7FFF), rounded).astype(np.uint16)


def _f16_op(op: Callable[..., np.ndarray], n: int, packed: bool) -> Fn:
    def fn(*args: np.ndarray) -> np.ndarray:
        parts = [_halves(a) for a in args[:n]]
        lo = f16_from64(op(*(f16_to64(p[0]) for p in parts)))
        if not packed:
            return lo.astype(U32)
        hi = f16_from64(op(*(f16_to64(p[1]) for p in parts)))
        return _pack(lo, hi)

    return fn


def bf16_from64(x: np.ndarray) -> np.ndarray:
    """float64 -> bfloat16 bits, rounded once (to nearest even), NaN canonical.

    Going through float32 would round twice, which is wrong for fma results."""
    x = np.asarray(x, dtype=F64)
    b = x.view(U64)
    # normal range: keep 7 of the 52 fraction bits, ties to even
    r = ((b + U64((1 << 44) - 1) + ((b >> U64(45)) & U64(1))) >> U64(45)) << U64(45)
    y = r.view(F64)
    tiny = np.abs(x) < 2.0**-126
    if tiny.any():  # bfloat16 subnormals are multiples of 2^-133
        y = np.where(tiny, np.rint(x * 2.0**133) * 2.0**-133, y)
        y = np.where(tiny & (y == 0), np.copysign(0.0, x), y)
    with np.errstate(over="ignore"):
        out = (y.astype(F32).view(U32) >> U32(16)).astype(np.uint16)
    nan = x != x
    return np.where(nan, np.uint16(0x7FFF), out) if nan.any() else out


def _bf16_op(op: Callable[..., np.ndarray], n: int, packed: bool) -> Fn:
    def fn(*args: np.ndarray) -> np.ndarray:
        parts = [_halves(a) for a in args[:n]]
        lo = bf16_from64(op(*(bf16_to32(p[0]).astype(F64) for p in parts)))
        if not packed:
            return lo.astype(U32)
        hi = bf16_from64(op(*(bf16_to32(p[1]).astype(F64) for p in parts)))
        return _pack(lo, hi)

    return fn


# Half-precision arithmetic in float64: products of 11- or 8-bit significands are exact; sums are
# rounded to odd, which makes the one final rounding to f16 / bf16 correct (53 >= p + 2).
def _add64(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return _fma64_round_odd(a, b)


def _sub64(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return _fma64_round_odd(a, -b)


def _mul64(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return a * b


def _fma64(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    return _fma64_round_odd(a * b, c)


for _t, _maker in (("f16", _f16_op), ("bf16", _bf16_op)):
    SEMANTICS[f"add.{_t}x2"] = _maker(_add64, 2, True)
    SEMANTICS[f"mul.{_t}x2"] = _maker(_mul64, 2, True)
    SEMANTICS[f"fma.{_t}x2"] = _maker(_fma64, 3, True)
    SEMANTICS[f"add.{_t}"] = _maker(_add64, 2, False)
    SEMANTICS[f"sub.{_t}"] = _maker(_sub64, 2, False)
    SEMANTICS[f"mul.{_t}"] = _maker(_mul64, 2, False)
    SEMANTICS[f"fma.{_t}"] = _maker(_fma64, 3, False)


# ---- f64 on pairs ----------------------------------------------------------------------------
@_def("add.f64")
def _addd(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return canon64(f64(a) + f64(b))


@_def("sub.f64")
def _subd(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return canon64(f64(a) - f64(b))


@_def("mul.f64")
def _muld(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return canon64(f64(a) * f64(b))


@_def("div.f64")
def _divd(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return canon64(f64(a) / f64(b))


@_def("fma.f64")
def _fmad(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    return canon64(fma_f64(f64(a), f64(b), f64(c)))


@_def("sqrt.f64")
def _sqrtd(a: np.ndarray) -> np.ndarray:
    return canon64(np.sqrt(f64(a)))


@_def("neg.f64")
def _negd(a: np.ndarray) -> np.ndarray:
    return np.asarray(a, dtype=U64) ^ U64(1 << 63)


@_def("abs.f64")
def _absd(a: np.ndarray) -> np.ndarray:
    return np.asarray(a, dtype=U64) & U64((1 << 63) - 1)


@_def("min.f64")
def _mind(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return canon64(_fmin(f64(a), f64(b)))


@_def("max.f64")
def _maxd(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return canon64(_fmax(f64(a), f64(b)))


# ---- conversions -----------------------------------------------------------------------------
_ROUND = {"": np.trunc, "rzi.": np.trunc, "rni.": np.rint, "rmi.": np.floor, "rpi.": np.ceil}


def _to_int(x: np.ndarray, mode: str, signed: bool) -> np.ndarray:
    v = _ROUND[mode](np.asarray(x, dtype=F64))
    lo, hi = (-(2.0**31), 2.0**31 - 1) if signed else (0.0, 2.0**32 - 1)
    v = np.where(np.isnan(v), 0.0, np.clip(v, lo, hi))
    return v.astype(np.int64).astype(U32)


def _cvt_to_int(mode: str, signed: bool, src64: bool) -> Fn:
    def fn(a: np.ndarray) -> np.ndarray:
        return _to_int(f64(a) if src64 else f32(a).astype(F64), mode, signed)

    return fn


for _m in ("", "rni.", "rmi.", "rpi."):
    SEMANTICS[f"cvt.{_m}s32.f32"] = _cvt_to_int(_m, True, False)
    SEMANTICS[f"cvt.{_m}u32.f32"] = _cvt_to_int(_m, False, False)
SEMANTICS["cvt.s32.f64"] = _cvt_to_int("", True, True)
SEMANTICS["cvt.u32.f64"] = _cvt_to_int("", False, True)


@_def("cvt.f32.s32")
def _cvt_f32_s32(a: np.ndarray) -> np.ndarray:
    return s32(a).astype(F32).view(U32)


@_def("cvt.f32.u32")
def _cvt_f32_u32(a: np.ndarray) -> np.ndarray:
    return u32(a).astype(F32).view(U32)


@_def("cvt.f64.s32")
def _cvt_f64_s32(a: np.ndarray) -> np.ndarray:
    return s32(a).astype(F64).view(U64)


@_def("cvt.f64.u32")
def _cvt_f64_u32(a: np.ndarray) -> np.ndarray:
    return u32(a).astype(F64).view(U64)


@_def("cvt.f16.f32")
def _cvt_f16_f32(a: np.ndarray) -> np.ndarray:
    return f16_from64(f32(a).astype(F64)).astype(U32)


@_def("cvt.f32.f16")
def _cvt_f32_f16(a: np.ndarray) -> np.ndarray:
    return canon32((u32(a) & U32(0xFFFF)).astype(np.uint16).view(np.float16).astype(F32))


@_def("cvt.bf16.f32")
def _cvt_bf16_f32(a: np.ndarray) -> np.ndarray:
    return bf16_from32(f32(a)).astype(U32)


@_def("cvt.f32.bf16")
def _cvt_f32_bf16(a: np.ndarray) -> np.ndarray:
    return canon32(((u32(a) & U32(0xFFFF)) << U32(16)).view(F32))


@_def("cvt.f64.f32")
def _cvt_f64_f32(a: np.ndarray) -> np.ndarray:
    return canon64(f32(a).astype(F64))


@_def("cvt.f32.f64")
def _cvt_f32_f64(a: np.ndarray) -> np.ndarray:
    return canon32(f64(a).astype(F32))


@_def("cvt.rz.f32.f64")
def _cvt_rz_f32_f64(a: np.ndarray) -> np.ndarray:
    x = f64(a)
    r = x.astype(F32)
    over = np.abs(r.astype(F64)) > np.abs(x)
    r = np.where(over & ~np.isnan(x), np.nextafter(r, np.float32(0)), r)
    return canon32(r)


def _round_f32(fn: Callable[[np.ndarray], np.ndarray]) -> Fn:
    def g(a: np.ndarray) -> np.ndarray:
        return canon32(fn(f32(a)))

    return g


def _round_f64(fn: Callable[[np.ndarray], np.ndarray]) -> Fn:
    def g(a: np.ndarray) -> np.ndarray:
        return canon64(fn(f64(a)))

    return g


for _m, _fn in (("rni.", np.rint), ("rzi.", np.trunc), ("rmi.", np.floor), ("rpi.", np.ceil)):
    SEMANTICS[f"cvt.{_m}f32.f32"] = _round_f32(_fn)
    SEMANTICS[f"cvt.{_m}f64.f64"] = _round_f64(_fn)


# ---- comparisons and selects -----------------------------------------------------------------
COMPARE: dict[Cmp, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    Cmp.EQ: np.equal,
    Cmp.NE: np.not_equal,
    Cmp.LT: np.less,
    Cmp.LE: np.less_equal,
    Cmp.GT: np.greater,
    Cmp.GE: np.greater_equal,
}
"""The ordered comparison of each basic condition (the unordered forms and num/nan build on it)."""


def _setp(cmp: Cmp, view: Callable[[np.ndarray], np.ndarray], is_float: bool) -> Fn:
    if cmp is Cmp.NUM:
        return lambda a, b: ~(np.isnan(view(a)) | np.isnan(view(b)))
    if cmp is Cmp.NAN:
        return lambda a, b: np.isnan(view(a)) | np.isnan(view(b))
    if cmp.unordered and is_float:
        op = COMPARE[cmp.ordered]
        return lambda a, b: op(view(a), view(b)) | np.isnan(view(a)) | np.isnan(view(b))
    op = COMPARE[cmp]
    if is_float and cmp is Cmp.NE:
        return lambda a, b: op(view(a), view(b)) & ~(np.isnan(view(a)) | np.isnan(view(b)))
    return lambda a, b: op(view(a), view(b))


_VIEW = {DataType.S32: s32, DataType.U32: u32, DataType.F32: f32, DataType.F64: f64}
for _row in ROWS:
    if _row.op is Op.SETP:
        assert isinstance(_row.variant, Cmp) and _row.dtype is not None
        SEMANTICS[_row.key] = _setp(_row.variant, _VIEW[_row.dtype], _row.dtype.is_float)


@_def("selp.b32", "selp.b64")
def _selp(a: np.ndarray, b: np.ndarray, p: np.ndarray) -> np.ndarray:
    return np.where(p, a, b)


@_def("slct.s32.f32")
def _slct_f(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    return np.where(f32(c) >= 0, u32(a), u32(b)).astype(U32)


@_def("slct.b32.s32")
def _slct_s(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    return np.where(s32(c) >= 0, u32(a), u32(b)).astype(U32)


# ---- reduction and atomic operators ---------------------------------------------------------
@dataclass(frozen=True)
class Reduction:
    """A wave reduction operator over one type: its identity (raw bits: combining it with x
    gives x; for f32 min/max the canonical NaN, which they ignore), the pairwise combine on raw
    bits, and fold: [waves, W] raw bits, inactive lanes already the identity -> [waves]."""

    op: ReduceOp
    dtype: DataType
    identity: int
    combine: Fn
    fold: Callable[[np.ndarray], np.ndarray]


def _ufunc_fold(ufunc: np.ufunc, view: type) -> Callable[[np.ndarray], np.ndarray]:
    return lambda x: ufunc.reduce(x.view(view), axis=1, dtype=view).view(U32)


def _ufunc_pair(ufunc: np.ufunc, view: type) -> Fn:
    return lambda a, b: ufunc(u32(a).view(view), u32(b).view(view)).view(U32)


def _fold_minmax_f32(is_min: bool) -> Callable[[np.ndarray], np.ndarray]:
    """NaN-ignoring min or max over each row; -0 orders below +0; all NaN gives NaN."""

    def fold(x: np.ndarray) -> np.ndarray:
        v = x.view(F32)
        use = v == v  # not NaN (np.fmin.reduce is wrong for some NaNs)
        r = np.where(use, v, F32(np.inf if is_min else -np.inf))
        r = r.min(axis=1) if is_min else r.max(axis=1)
        r = np.where(use.any(axis=1), r, F32(np.nan))
        zero = r == 0
        if zero.any():
            neg = ((v == 0) & np.signbit(v)).any(axis=1)
            pos = ((v == 0) & ~np.signbit(v)).any(axis=1)
            negative = neg if is_min else neg & ~pos
            r = np.where(zero, np.where(negative, F32(-0.0), F32(0.0)), r)
        return canon32(r)

    return fold


def _reduction(op: ReduceOp, t: DataType, identity: int, ufunc: np.ufunc, view: type) -> Reduction:
    return Reduction(op, t, identity, _ufunc_pair(ufunc, view), _ufunc_fold(ufunc, view))


_T = DataType
REDUCTIONS: dict[tuple[ReduceOp, DataType], Reduction] = {
    (r.op, r.dtype): r
    for r in (
        _reduction(ReduceOp.ADD, _T.U32, 0, np.add, U32),
        _reduction(ReduceOp.MIN, _T.S32, 0x7FFFFFFF, np.minimum, I32),
        _reduction(ReduceOp.MAX, _T.S32, 0x80000000, np.maximum, I32),
        _reduction(ReduceOp.MIN, _T.U32, 0xFFFFFFFF, np.minimum, U32),
        _reduction(ReduceOp.MAX, _T.U32, 0, np.maximum, U32),
        _reduction(ReduceOp.AND, _T.B32, 0xFFFFFFFF, np.bitwise_and, U32),
        _reduction(ReduceOp.OR, _T.B32, 0, np.bitwise_or, U32),
        _reduction(ReduceOp.XOR, _T.B32, 0, np.bitwise_xor, U32),
        Reduction(ReduceOp.MIN, _T.F32, 0x7FFFFFFF, SEMANTICS["min.f32"], _fold_minmax_f32(True)),
        Reduction(ReduceOp.MAX, _T.F32, 0x7FFFFFFF, SEMANTICS["max.f32"], _fold_minmax_f32(False)),
    )
}
"""Every wave reduction and prefix operator, keyed by (row.variant, row.dtype)."""


@dataclass(frozen=True)
class Atomic:
    """An atomic read-modify-write operator over one type: combine(old, value[, new]) -> the
    word written (for cas, value is the compare operand and the third the new value)."""

    op: AtomOp
    dtype: DataType
    combine: Fn


ATOMICS: dict[tuple[AtomOp, DataType], Atomic] = {
    (a.op, a.dtype): a
    for a in (
        Atomic(AtomOp.ADD, _T.U32, lambda o, v: o + v),
        Atomic(AtomOp.SUB, _T.U32, lambda o, v: o - v),
        Atomic(AtomOp.MIN, _T.S32, lambda o, v: np.minimum(o.view(I32), v.view(I32)).view(U32)),
        Atomic(AtomOp.MAX, _T.S32, lambda o, v: np.maximum(o.view(I32), v.view(I32)).view(U32)),
        Atomic(AtomOp.MIN, _T.U32, np.minimum),
        Atomic(AtomOp.MAX, _T.U32, np.maximum),
        Atomic(AtomOp.AND, _T.B32, np.bitwise_and),
        Atomic(AtomOp.OR, _T.B32, np.bitwise_or),
        Atomic(AtomOp.XOR, _T.B32, np.bitwise_xor),
        Atomic(AtomOp.EXCH, _T.B32, lambda o, v: v),
        Atomic(AtomOp.CAS, _T.B32, lambda o, v, c: np.where(o == v, c, o).astype(U32)),
        Atomic(AtomOp.ADD, _T.F32, lambda o, v: canon32(o.view(F32) + v.view(F32))),
    )
}
"""Every atomic operator (`atom`, `red`), keyed by (row.variant, row.dtype)."""


def reduction_of(spec: InstrSpec) -> Reduction:
    """The operator of a wave.reduce or wave.prefix row."""
    assert isinstance(spec.variant, ReduceOp) and spec.dtype is not None, spec.key
    return REDUCTIONS[(spec.variant, spec.dtype)]


def atomic_of(spec: InstrSpec) -> Atomic:
    """The operator of an atom or red row."""
    assert isinstance(spec.variant, AtomOp) and spec.dtype is not None, spec.key
    return ATOMICS[(spec.variant, spec.dtype)]
