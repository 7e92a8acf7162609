"""Scalar value semantics for the compiled engine: one lane's result, called by the generated
kernels (the names they import are `rows.HELPERS`).

A register value is an int64 holding raw bits (a 32-bit register in 0..2**32-1, a pair as the
64-bit pattern). Where the generated code keeps a loop's float32 values in float registers
(`codegen.py`, float_registers), the helpers take and give the float itself: `cf32`, `f32`,
`c32` (a float32 to its bits, NaN canonical) and the float helpers below. The functions mirror
`isa.semantics` (the NumPy reference) operation by operation;
tests/emulator/compiled/test_compiled_rows.py runs every row of the table on both engines and
compares the bits.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .intrinsics import Bits, Float, bits_of_f32, bits_of_f64, f32_of, f32_of_f16, f64_of, fma64, native_half

M32 = 0xFFFFFFFF
CANON32 = 0x7FFFFFFF
CANON64 = 0x7FFFFFFFFFFFFFFF
CANON16 = 0x7FFF

jit = njit(cache=True, nogil=True, error_model="numpy")
tiny = njit(cache=True, nogil=True, error_model="numpy", inline="always")
"""`tiny`: a few operations, inlined where they are used (numba IR), so that the constants of
a call (a comparison code, a shift count) fold; calls to `jit` functions are left to LLVM,
which keeps the compile time of a kernel linear in its length."""


@tiny
def s32(a: int) -> int:
    """Bits as a signed 32-bit value."""
    return a - ((a & 0x80000000) << 1)


@tiny
def c32(x: Float) -> int:
    """float32 -> bits, NaN canonical (the choice made on floats, so that LLVM can keep a
    loop's float values in float registers)."""
    return bits_of_f32(x if x == x else f32_of(CANON32))


@tiny
def cf32(x: float) -> float:
    """A float32 with its NaNs made the canonical NaN (bits 0x7FFFFFFF)."""
    return x if x == x else f32_of(CANON32)


@tiny
def c64(x: float) -> int:
    """float64 -> bits, NaN canonical."""
    if x != x:
        return CANON64
    return bits_of_f64(x)


@tiny
def r32(x: float) -> int:
    """float64 rounded once to float32 -> bits (NaN canonical)."""
    return c32(np.float32(x))


@tiny
def f32(a: int) -> float:
    return f32_of(a)


@tiny
def f64(a: int) -> float:
    return f64_of(a)


@tiny
def f32w(a: int) -> float:
    """A register's float32 widened to float64 (exact)."""
    return np.float64(f32_of(a))


# ---- integer --------------------------------------------------------------------------------
@tiny
def mulhi_s(a: int, b: int) -> int:
    return ((s32(a) * s32(b)) >> 32) & M32


@tiny
def mulhi_u(a: int, b: int) -> Bits:
    return np.int64((np.uint64(a) * np.uint64(b)) >> np.uint64(32))


@tiny
def div_u(a: int, b: int) -> int:
    return M32 if b == 0 else a // b


@tiny
def rem_u(a: int, b: int) -> int:
    return a if b == 0 else a % b


@jit
def div_s(a: int, b: int) -> int:
    x, y = s32(a), s32(b)
    if y == 0:
        return M32
    q = abs(x) // abs(y)
    if (x < 0) != (y < 0):
        q = -q
    return q & M32


@jit
def rem_s(a: int, b: int) -> int:
    x, y = s32(a), s32(b)
    if y == 0:
        return a
    q = abs(x) // abs(y)
    if (x < 0) != (y < 0):
        q = -q
    return (x - q * y) & M32


@tiny
def abs_s(a: int) -> int:
    x = s32(a)
    return (-x) & M32 if x < 0 else a


@tiny
def min_s(a: int, b: int) -> int:
    return a if s32(a) <= s32(b) else b


@tiny
def max_s(a: int, b: int) -> int:
    return a if s32(a) >= s32(b) else b


@tiny
def clamp_s(a: int, lo: int, hi: int) -> int:
    return min_s(max_s(a, lo), hi)


@tiny
def clamp_u(a: int, lo: int, hi: int) -> int:
    return min(max(a, lo), hi)


@jit
def dp4a(a: int, b: int, c: int, signed: bool) -> int:
    acc = s32(c) if signed else c
    for i in range(4):
        x = (a >> (8 * i)) & 0xFF
        y = (b >> (8 * i)) & 0xFF
        if signed:
            x = x - 256 if x >= 128 else x
            y = y - 256 if y >= 128 else y
        acc += x * y
    return acc & M32


@tiny
def shl(a: int, b: int) -> int:
    return 0 if b > 31 else (a << b) & M32


@tiny
def shr_u(a: int, b: int) -> int:
    return 0 if b > 31 else a >> b


@tiny
def shr_s(a: int, b: int) -> int:
    return (s32(a) >> min(b, 31)) & M32


@jit
def popc(a: int) -> int:
    n = 0
    while a:
        a &= a - 1
        n += 1
    return n


@jit
def clz(a: int) -> int:
    if a == 0:
        return 32
    n = 0
    while not (a & 0x80000000):
        a <<= 1
        n += 1
    return n


@jit
def brev(a: int) -> int:
    r = 0
    for _ in range(32):
        r = (r << 1) | (a & 1)
        a >>= 1
    return r


@jit
def bfe(a: int, b: int, c: int, signed: bool) -> int:
    pos = b & 0xFF
    ln = c & 0xFF
    width = min(max(min(ln, 32 - min(pos, 32)), 0), 32)
    shifted = 0 if pos >= 32 else a >> min(pos, 31)
    field = shifted & ((1 << width) - 1)
    if signed:
        msb = min(max(pos + ln - 1, 0), 31)
        sbit = 0 if ln == 0 else (a >> msb) & 1
        if sbit == 1:
            field |= ~((1 << width) - 1) & M32
    return field & M32


@jit
def bfi(a: int, b: int, c: int, e: int) -> int:
    pos = b & 0xFF
    ln = c & 0xFF
    width = min(max(min(ln, 32 - min(pos, 32)), 0), 32)
    mask = (((1 << width) - 1) << min(pos, 31)) & M32
    if pos >= 32:
        mask = 0
    return ((e & ~mask) | ((a << min(pos, 31)) & mask)) & M32


# ---- float helpers ----------------------------------------------------------------------------
@tiny
def fmin(a: float, b: float) -> float:
    """IEEE minNum: a NaN yields the other operand; -0 < +0 (type of the operands kept)."""
    if a != a:
        return b
    if b != b:
        return a
    if a == 0 and b == 0:
        return a if math.copysign(1.0, a) < 0 else b
    return a if a < b else b


@tiny
def fmax(a: float, b: float) -> float:
    """IEEE maxNum: a NaN yields the other operand; +0 > -0."""
    if a != a:
        return b
    if b != b:
        return a
    if a == 0 and b == 0:
        return a if math.copysign(1.0, a) > 0 else b
    return a if a > b else b


@jit
def next_toward(s: float, up: bool) -> float:
    """The float64 next to finite nonzero s toward +inf (up) or -inf."""
    bits = bits_of_f64(s)
    if (s > 0) == up:
        return f64_of(bits + 1)
    return f64_of(bits - 1)


@jit
def add_odd(p: float, c: float) -> float:
    """p + c in float64 rounded to odd (exact operands without overflow)."""
    s = p + c
    bb = s - p
    e = (p - (s - bb)) + (c - bb)
    if e != 0 and math.isfinite(s) and (bits_of_f64(s) & 1) == 0:
        s = next_toward(s, e > 0)
    return s


@tiny
def fma_f64(a: int, b: int, c: int) -> int:
    return c64(fma64(f64_of(a), f64_of(b), f64_of(c)))


ONE_MINUS_ULP = np.float32(np.nextafter(np.float32(1), np.float32(0)))


@jit
def fract(a: int) -> int:
    x = f32_of(a)
    r = x - np.floor(x)
    if math.isinf(x) or r != r:
        return CANON32
    return c32(min(r, ONE_MINUS_ULP))


@jit
def sat(a: int) -> int:
    x = f32_of(a)
    if x != x:
        return 0
    return bits_of_f32(min(max(x, np.float32(0.0)), np.float32(1.0)))


@jit
def rint(x: float) -> float:
    """Round to the nearest integer, ties to even (float64)."""
    return np.rint(x)


@jit
def to_int(x: float, mode: int, signed: bool) -> Bits:
    """float64 -> s32/u32 bits: mode 0 truncates, 1 rounds to nearest even, 2 floor, 3 ceil;
    saturating; NaN gives 0."""
    if x != x:
        return 0
    if mode == 0:
        v = np.trunc(x)
    elif mode == 1:
        v = np.rint(x)
    elif mode == 2:
        v = np.floor(x)
    else:
        v = np.ceil(x)
    lo, hi = (-2147483648.0, 2147483647.0) if signed else (0.0, 4294967295.0)
    v = min(max(v, lo), hi)
    return np.int64(v) & M32


@jit
def round_f32(a: int, mode: int) -> int:
    x = np.float64(f32_of(a))
    if mode == 1:
        r = np.rint(x)
    elif mode == 0:
        r = np.trunc(x)
    elif mode == 2:
        r = np.floor(x)
    else:
        r = np.ceil(x)
    return c32(np.float32(r))


@jit
def round_f64(a: int, mode: int) -> int:
    x = f64_of(a)
    if mode == 1:
        r = np.rint(x)
    elif mode == 0:
        r = np.trunc(x)
    elif mode == 2:
        r = np.floor(x)
    else:
        r = np.ceil(x)
    return c64(r)


@jit
def cvt_rz_f32_f64(a: int) -> int:
    x = f64_of(a)
    r = np.float32(x)
    if x == x and abs(np.float64(r)) > abs(x):
        b = bits_of_f32(r)
        r = f32_of(b - 1)  # one step toward zero (r is not zero here)
    return c32(r)


# ---- f16 / bf16 -------------------------------------------------------------------------------
@jit
def f16_to64(h: int) -> float:
    """f16 bits -> float64 (exact), built from bits: no power or libm call in the lane loop."""
    e = (h >> 10) & 31
    f = h & 1023
    if e == 0:
        v = f * 2.0**-24
    elif e == 31:
        v = math.inf if f == 0 else math.nan
    else:
        v = f64_of(((e + 1008) << 52) | (f << 42))
    return -v if h & 0x8000 else v


@tiny
def half_f32_bits(h: int) -> float:
    """f16 bits -> the float32 of the same value (exact; NaN canonical), from bits: exponent
    and mantissa shifted into a float32 and scaled by 2^112 (exact for normal and subnormal
    halves alike), one test for infinities and NaNs."""
    em = h & 0x7FFF
    sign = (h & 0x8000) << 16
    if em >= 0x7C00:
        return f32_of(CANON32 if em > 0x7C00 else sign | 0x7F800000)
    return f32_of(sign | bits_of_f32(f32_of(em << 13) * np.float32(2.0**112)))


@tiny
def half_f32_native(h: int) -> float:
    """The same through the host's conversion instruction (a NaN keeps a quieted payload)."""
    return f32_of_f16(h)


half_f32 = half_f32_native if native_half() else half_f32_bits
"""f16 bits -> float32 (exact; a NaN's payload is the caller's to canonicalise): in hardware
where the host has it."""


@jit
def f16_from64(x: float) -> Bits:
    """float64 -> f16 bits, round to nearest even; NaN canonical."""
    if x != x:
        return CANON16
    sign = 0x8000 if bits_of_f64(x) >> 63 else 0
    ax = abs(x)
    if ax >= 65520.0:
        return sign | 0x7C00
    if ax < 2.0**-14:
        return sign | np.int64(np.rint(ax * 2.0**24))
    m, e = math.frexp(ax)
    mant = np.int64(np.rint(m * 2048.0))  # ax = mant * 2^(e - 11), mant in [1024, 2048]
    return sign | (((e + 13) << 10) + mant)


@jit
def bf16_to64(h: int) -> float:
    return np.float64(f32_of(h << 16))


@jit
def bf16_from32(a: int) -> int:
    """float32 bits -> bf16 bits, nearest even; NaN 0x7FFF."""
    x = f32_of(a)
    if x != x:
        return 0x7FFF
    return ((a + 0x7FFF + ((a >> 16) & 1)) & M32) >> 16


@jit
def bf16_from64(x: float) -> int:
    """float64 -> bf16 bits, rounded once (nearest even); NaN canonical."""
    if x != x:
        return 0x7FFF
    if abs(x) < 2.0**-126:
        y = np.rint(x * 2.0**133) * 2.0**-133
        if y == 0:
            y = math.copysign(0.0, x)
    else:
        b = np.uint64(bits_of_f64(x))
        r = ((b + np.uint64((1 << 44) - 1) + ((b >> np.uint64(45)) & np.uint64(1))) >> np.uint64(45)) << np.uint64(45)
        y = f64_of(np.int64(r))
    return (bits_of_f32(np.float32(y)) >> 16) & 0xFFFF


@jit
def half_add(a: float, b: float) -> float:
    return add_odd(a, b)


@jit
def half_sub(a: float, b: float) -> float:
    return add_odd(a, -b)


@jit
def half_mul(a: float, b: float) -> float:
    return a * b


@jit
def half_fma(a: float, b: float, c: float) -> float:
    return add_odd(a * b, c)


# ---- compare ----------------------------------------------------------------------------------
@tiny
def fcmp(x: float, y: float, cond: int) -> bool:
    """Float setp: cond 0..13 in the order of vocabulary.Cmp (eq ne lt le gt ge, their
    unordered forms, num, nan)."""
    nan = x != x or y != y
    if cond == 12:
        return not nan
    if cond == 13:
        return nan
    base = cond % 6
    if base == 0:
        r = x == y
    elif base == 1:
        r = x != y and not nan
    elif base == 2:
        r = x < y
    elif base == 3:
        r = x <= y
    elif base == 4:
        r = x > y
    else:
        r = x >= y
    return r or (cond >= 6 and nan)


@tiny
def icmp(x: int, y: int, cond: int) -> bool:
    if cond == 0:
        return x == y
    if cond == 1:
        return x != y
    if cond == 2:
        return x < y
    if cond == 3:
        return x <= y
    if cond == 4:
        return x > y
    return x >= y


@jit
def fold_minmax_f32(acc: int, v: int, is_min: bool) -> int:
    """One step of the NaN-ignoring f32 min/max reduction (acc starts as the canonical NaN)."""
    a, b = f32_of(acc), f32_of(v)
    return c32(fmin(a, b) if is_min else fmax(a, b))


@tiny
def inside(
    a: int, w: int, rs: np.ndarray, re: np.ndarray, own_lo: np.ndarray, own_hi: np.ndarray, pc: int, nb: int
) -> bool:
    """Whether bytes a..a+w-1 lie in the buffer of access pc (own_lo/own_hi, when the launch
    checks accesses against their own buffers), else in some buffer (rs/re, nb of them)."""
    if own_lo[pc] >= 0:
        return own_lo[pc] <= a and a + w <= own_hi[pc]
    for i in range(nb):  # noqa: SIM110 (numba compiles the loop, not a generator)
        if rs[i] <= a and a + w <= re[i]:
            return True
    return False
