"""The C translation's runtime: the C spelling of `scalar` (every name of `rows.HELPERS`), of the
mask bookkeeping of `control`, and of the atomic read-modify-writes of `intrinsics`, prepended
to every generated C file (ctrans.py).

Each function mirrors its Python/numba twin line by line (the NumPy engine, `isa.semantics`, is
the reference both are tested against: tests/emulator/compiled/). Everything is `static inline`
so that a lane loop calls nothing: the compiler folds a row's constants (a comparison code, a
rounding mode) and can vectorise. The file compiles as C11 without fast-math, with
`-ffp-contract=off` (no fused multiply-add the row did not ask for) and `-fwrapv` (int64
arithmetic wraps, as numba's does): `cbuild.FLAGS`.
"""

from __future__ import annotations

POLYMORPHIC = {"fmin": ("fmin_f", "fmin_d"), "fmax": ("fmax_f", "fmax_d"), "fcmp": ("fcmp_f", "fcmp_d")}
"""Helpers numba types by their arguments (float32 or float64): the C function for each."""

RETURNS = {
    "f32": "f",
    "cf32": "f",
    "half_f32": "f",
    "fma32": "f",
    "f64": "d",
    "f32w": "d",
    "f16_to64": "d",
    "bf16_to64": "d",
    "half_add": "d",
    "half_sub": "d",
    "half_mul": "d",
    "half_fma": "d",
    "fmin_f": "f",
    "fmax_f": "f",
    "fmin_d": "d",
    "fmax_d": "d",
}
"""The C type of a runtime function's result: "f" float, "d" double; any other is int64 ("i")."""

ARGS = {
    "c32": "f",
    "cf32": "f",
    "r32": "d",
    "c64": "d",
    "to_int": "d",
    "f16_from64": "d",
    "bf16_from64": "d",
    "half_add": "d",
    "half_sub": "d",
    "half_mul": "d",
    "half_fma": "d",
    "fma32": "f",
}
"""Runtime functions whose arguments are floats (the C argument type; a different one is cast
explicitly, as numba would convert it)."""

SOURCE = r"""
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

typedef int64_t i64;
typedef uint64_t u64;
typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
#define M32 0xFFFFFFFFLL
#define SI static inline __attribute__((always_inline))
/* where element i of a 32-bit word's `per` elements of `width` bits lies in the word, as the
   host's narrower views of the same memory see it (the chunked lane loops read 8- and 16-bit
   elements through their word, ctrans.Func.subscript) */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define WAVE_SUB_SHIFT(i, per, width) (((per) - 1 - ((i) & ((per) - 1))) * (width))
#else
#define WAVE_SUB_SHIFT(i, per, width) (((i) & ((per) - 1)) * (width))
#endif

/* ---- bits */
SI float f32_of(i64 a) { u32 u = (u32)a; float f; memcpy(&f, &u, 4); return f; }
SI i64 bits_of_f32(float x) { u32 u; memcpy(&u, &x, 4); return (i64)u; }
SI double f64_of(i64 a) { double d; memcpy(&d, &a, 8); return d; }
SI i64 bits_of_f64(double x) { i64 u; memcpy(&u, &x, 8); return u; }
SI i64 s32(i64 a) { return a - ((a & 0x80000000LL) << 1); }
SI i64 c32(float x) { return x == x ? bits_of_f32(x) : 0x7FFFFFFFLL; }
SI float cf32(float x) { return x == x ? x : f32_of(0x7FFFFFFF); }
SI i64 c64(double x) { return x != x ? 0x7FFFFFFFFFFFFFFFLL : bits_of_f64(x); }
SI i64 r32(double x) { return c32((float)x); }
SI float f32(i64 a) { return f32_of(a); }
SI double f64(i64 a) { return f64_of(a); }
SI double f32w(i64 a) { return (double)f32_of(a); }
/* a lane's new value where its mask bit m (0 or 1) is set, else its old one: by bits, so that
   GCC stores the blend (`m ? a : b` became a masked store behind a branch on the mask) */
SI i64 blend_i(i64 m, i64 a, i64 b) { return (a & -m) | (b & ~-m); }
SI float blend_f(i64 m, float a, float b) {
    u32 k = (u32)-(u32)m;
    return f32_of((i64)((bits_of_f32(a) & k) | (bits_of_f32(b) & ~k)));
}
SI i64 imin(i64 a, i64 b) { return b < a ? b : a; }
SI i64 imax(i64 a, i64 b) { return b > a ? b : a; }
SI i64 iabs(i64 a) { return a < 0 ? -a : a; }

/* ---- integer */
SI i64 mulhi_s(i64 a, i64 b) { return ((s32(a) * s32(b)) >> 32) & M32; }
SI i64 mulhi_u(i64 a, i64 b) { return (i64)(((u64)a * (u64)b) >> 32); }
SI i64 div_u(i64 a, i64 b) { return b == 0 ? M32 : a / (b == 0 ? 1 : b); }
SI i64 rem_u(i64 a, i64 b) { return b == 0 ? a : a % (b == 0 ? 1 : b); }
SI i64 div_s(i64 a, i64 b) {
    i64 x = s32(a), y = s32(b);
    if (y == 0) return M32;
    i64 q = iabs(x) / iabs(y);
    if ((x < 0) != (y < 0)) q = -q;
    return q & M32;
}
SI i64 rem_s(i64 a, i64 b) {
    i64 x = s32(a), y = s32(b);
    if (y == 0) return a;
    i64 q = iabs(x) / iabs(y);
    if ((x < 0) != (y < 0)) q = -q;
    return (x - q * y) & M32;
}
SI i64 abs_s(i64 a) { i64 x = s32(a); return x < 0 ? (-x) & M32 : a; }
SI i64 min_s(i64 a, i64 b) { return s32(a) <= s32(b) ? a : b; }
SI i64 max_s(i64 a, i64 b) { return s32(a) >= s32(b) ? a : b; }
SI i64 clamp_s(i64 a, i64 lo, i64 hi) { return min_s(max_s(a, lo), hi); }
SI i64 clamp_u(i64 a, i64 lo, i64 hi) { return imin(imax(a, lo), hi); }
SI i64 dp4a(i64 a, i64 b, i64 c, i64 sg) {
    i64 acc = sg ? s32(c) : c;
    for (int i = 0; i < 4; i++) {
        i64 x = (a >> (8 * i)) & 0xFF, y = (b >> (8 * i)) & 0xFF;
        if (sg) { x = x >= 128 ? x - 256 : x; y = y >= 128 ? y - 256 : y; }
        acc += x * y;
    }
    return acc & M32;
}
SI i64 shl(i64 a, i64 b) { return b > 31 ? 0 : (a << (b & 31)) & M32; }
SI i64 shr_u(i64 a, i64 b) { return b > 31 ? 0 : a >> (b & 31); }
SI i64 shr_s(i64 a, i64 b) { return (s32(a) >> imin(b, 31)) & M32; }
SI i64 popc(i64 a) { return __builtin_popcountll((u64)a); }
SI i64 clz(i64 a) { return (a & M32) == 0 ? 32 : __builtin_clz((u32)a); }
SI i64 brev(i64 a) {
    i64 r = 0;
    for (int i = 0; i < 32; i++) { r = (r << 1) | (a & 1); a >>= 1; }
    return r;
}
SI i64 bfe(i64 a, i64 b, i64 c, i64 sg) {
    i64 pos = b & 0xFF, ln = c & 0xFF;
    i64 width = imin(imax(imin(ln, 32 - imin(pos, 32)), 0), 32);
    i64 shifted = pos >= 32 ? 0 : a >> imin(pos, 31);
    i64 field = shifted & ((1LL << width) - 1);
    if (sg) {
        i64 msb = imin(imax(pos + ln - 1, 0), 31);
        i64 sbit = ln == 0 ? 0 : (a >> msb) & 1;
        if (sbit == 1) field |= ~((1LL << width) - 1) & M32;
    }
    return field & M32;
}
SI i64 bfi(i64 a, i64 b, i64 c, i64 e) {
    i64 pos = b & 0xFF, ln = c & 0xFF;
    i64 width = imin(imax(imin(ln, 32 - imin(pos, 32)), 0), 32);
    i64 mask = (((1LL << width) - 1) << imin(pos, 31)) & M32;
    if (pos >= 32) mask = 0;
    return ((e & ~mask) | ((a << imin(pos, 31)) & mask)) & M32;
}

/* ---- float */
/* min and max (a NaN operand gives the other; -0 below +0), for float and double */
#define WAVE_MINMAX(T, NAME, NEG, LT) \
    SI T NAME(T a, T b) { \
        if (a != a) return b; \
        if (b != b) return a; \
        if (a == 0 && b == 0) return NEG signbit(a) ? a : b; \
        return a LT b ? a : b; \
    }
WAVE_MINMAX(float, fmin_f, , <)
WAVE_MINMAX(float, fmax_f, !, >)
WAVE_MINMAX(double, fmin_d, , <)
WAVE_MINMAX(double, fmax_d, !, >)
SI float fma32(float a, float b, float c) { return fmaf(a, b, c); }
SI i64 fma_f64(i64 a, i64 b, i64 c) { return c64(fma(f64_of(a), f64_of(b), f64_of(c))); }
SI double next_toward(double s, int up) {
    i64 bits = bits_of_f64(s);
    return ((s > 0) == up) ? f64_of(bits + 1) : f64_of(bits - 1);
}
SI double add_odd(double p, double c) {
    double s = p + c;
    double bb = s - p;
    double e = (p - (s - bb)) + (c - bb);
    if (e != 0 && isfinite(s) && (bits_of_f64(s) & 1) == 0) s = next_toward(s, e > 0);
    return s;
}
SI i64 fract(i64 a) {
    float x = f32_of(a);
    float r = x - floorf(x);
    if (isinf(x) || r != r) return 0x7FFFFFFF;
    float one_minus_ulp = f32_of(0x3F7FFFFF);
    return c32(one_minus_ulp < r ? one_minus_ulp : r);
}
SI i64 sat(i64 a) {
    float x = f32_of(a);
    if (x != x) return 0;
    float t = 0.0f > x ? 0.0f : x;
    t = 1.0f < t ? 1.0f : t;
    return bits_of_f32(t);
}
SI double round_mode(double x, i64 mode) {
    return mode == 0 ? trunc(x) : mode == 1 ? rint(x) : mode == 2 ? floor(x) : ceil(x);
}
SI i64 to_int(double x, i64 mode, i64 sg) {
    if (x != x) return 0;
    double v = round_mode(x, mode);
    double lo = sg ? -2147483648.0 : 0.0, hi = sg ? 2147483647.0 : 4294967295.0;
    v = lo > v ? lo : v;
    v = hi < v ? hi : v;
    return ((i64)v) & M32;
}
SI i64 round_f32(i64 a, i64 mode) { return c32((float)round_mode((double)f32_of(a), mode)); }
SI i64 round_f64(i64 a, i64 mode) { return c64(round_mode(f64_of(a), mode)); }
SI i64 cvt_rz_f32_f64(i64 a) {
    double x = f64_of(a);
    float r = (float)x;
    if (x == x && fabs((double)r) > fabs(x)) r = f32_of(bits_of_f32(r) - 1);
    return c32(r);
}

/* ---- f16 / bf16 */
SI double f16_to64(i64 h) {
    i64 e = (h >> 10) & 31, f = h & 1023;
    double v;
    if (e == 0) v = (double)f * 0x1p-24;
    else if (e == 31) v = f == 0 ? INFINITY : NAN;
    else v = f64_of(((e + 1008) << 52) | (f << 42));
    return (h & 0x8000) ? -v : v;
}
#if defined(__F16C__)
/* the host's conversion instruction (vcvtph2ps), as numba's half_f32_native: exact; a NaN keeps
   a quieted payload, which the caller canonicalises where its bits show. The compiler's builtin,
   as <immintrin.h>'s _cvtsh_ss spells it, without that header (0.1 s of each compile) */
typedef short wave_v8hi __attribute__((vector_size(16)));
SI float half_f32(i64 h) {
    wave_v8hi v = {(short)(h & 0xFFFF), 0, 0, 0, 0, 0, 0, 0};
    return __builtin_ia32_vcvtph2ps(v)[0];
}
#else
#define half_f32 half_f32_bits
#endif
/* shifts and a scale by 2^112 (exact): branch-free, so a loop over a chunk of lanes (clanes.py)
   vectorises it, where the scalar intrinsic above would keep the loop scalar */
SI float half_f32_bits(i64 h) {
    i64 em = h & 0x7FFF, sign = (h & 0x8000) << 16;
    float v = f32_of(sign | bits_of_f32(f32_of(em << 13) * 0x1p112f));
    return em >= 0x7C00 ? f32_of(em > 0x7C00 ? 0x7FFFFFFF : sign | 0x7F800000) : v;
}
SI i64 f16_from64(double x) {
    if (x != x) return 0x7FFF;
    i64 sign = bits_of_f64(x) < 0 ? 0x8000 : 0;
    double ax = fabs(x);
    if (ax >= 65520.0) return sign | 0x7C00;
    if (ax < 0x1p-14) return sign | (i64)rint(ax * 0x1p24);
    int e;
    double m = frexp(ax, &e);
    i64 mant = (i64)rint(m * 2048.0);
    return sign | ((((i64)e + 13) << 10) + mant);
}
SI double bf16_to64(i64 h) { return (double)f32_of(h << 16); }
SI i64 bf16_from32(i64 a) {
    float x = f32_of(a);
    if (x != x) return 0x7FFF;
    return ((a + 0x7FFF + ((a >> 16) & 1)) & M32) >> 16;
}
SI i64 bf16_from64(double x) {
    if (x != x) return 0x7FFF;
    double y;
    if (fabs(x) < 0x1p-126) {
        y = rint(x * 0x1p133) * 0x1p-133;
        if (y == 0) y = copysign(0.0, x);
    } else {
        u64 b = (u64)bits_of_f64(x);
        u64 r = ((b + ((1ULL << 44) - 1) + ((b >> 45) & 1)) >> 45) << 45;
        y = f64_of((i64)r);
    }
    return (bits_of_f32((float)y) >> 16) & 0xFFFF;
}
SI double half_add(double a, double b) { return add_odd(a, b); }
SI double half_sub(double a, double b) { return add_odd(a, -b); }
SI double half_mul(double a, double b) { return a * b; }
SI double half_fma(double a, double b, double c) { return add_odd(a * b, c); }

/* ---- compare */
#define FCMP(name, T) \
SI i64 name(T x, T y, i64 cond) { \
    int nan = x != x || y != y; \
    if (cond == 12) return !nan; \
    if (cond == 13) return nan; \
    i64 base = cond % 6; \
    int r = base == 0 ? x == y : base == 1 ? (x != y && !nan) : base == 2 ? x < y \
        : base == 3 ? x <= y : base == 4 ? x > y : x >= y; \
    return r || (cond >= 6 && nan); \
}
FCMP(fcmp_f, float)
FCMP(fcmp_d, double)
SI i64 icmp(i64 x, i64 y, i64 cond) {
    return cond == 0 ? x == y : cond == 1 ? x != y : cond == 2 ? x < y : cond == 3 ? x <= y
        : cond == 4 ? x > y : x >= y;
}
SI i64 fold_minmax_f32(i64 acc, i64 v, i64 is_min) {
    float a = f32_of(acc), b = f32_of(v);
    return c32(is_min ? fmin_f(a, b) : fmax_f(a, b));
}
SI i64 inside(i64 a, i64 w, const i64 *rs, const i64 *re, const i64 *own_lo, const i64 *own_hi, i64 pc, i64 nb) {
    if (own_lo[pc] >= 0) return own_lo[pc] <= a && a + w <= own_hi[pc];
    for (i64 i = 0; i < nb; i++)
        if (rs[i] <= a && a + w <= re[i]) return 1;
    return 0;
}

/* ---- atomics of workgroups on other threads (intrinsics.rmw_*) */
#define RMW(name, op) \
SI i64 name(u32 *m, i64 i, i64 v) { return (i64)__atomic_##op(&m[i], (u32)v, __ATOMIC_RELAXED); }
RMW(rmw_add, fetch_add)
RMW(rmw_sub, fetch_sub)
RMW(rmw_and, fetch_and)
RMW(rmw_or, fetch_or)
RMW(rmw_xor, fetch_xor)
#define RMW_CAS(name, T) \
SI i64 name(u32 *m, i64 i, i64 v) { \
    u32 old = __atomic_load_n(&m[i], __ATOMIC_RELAXED); \
    for (;;) { \
        u32 want = (T)(u32)v OP_ (T)old ? (u32)v : old; \
        if (want == old || __atomic_compare_exchange_n(&m[i], &old, want, 0, __ATOMIC_RELAXED, \
                                                       __ATOMIC_RELAXED)) \
            return (i64)old; \
    } \
}
#define OP_ <
RMW_CAS(rmw_min_s, int32_t)
RMW_CAS(rmw_min_u, u32)
#undef OP_
#define OP_ >
RMW_CAS(rmw_max_s, int32_t)
RMW_CAS(rmw_max_u, u32)
#undef OP_

/* ---- masks of structured control flow (control.py) */
SI i64 start(u8 *act, u8 *alive, i64 T, i64 NL) {
    for (i64 i = 0; i < NL; i++) { alive[i] = i < T; act[i] = i < T; }
    return T;
}
SI i64 if_open(u8 *act, u8 *E, u8 *Q, const u8 *P, i64 d, i64 pn, i64 NL) {
    i64 n = 0;
    for (i64 i = 0; i < NL; i++) {
        u8 e = act[i], q = P[pn * NL + i];
        E[d * NL + i] = e;
        Q[d * NL + i] = q;
        u8 t = e && q;
        act[i] = t;
        n += t;
    }
    return n;
}
#define LEFT(i) (lp >= 0 && (B[lp * NL + (i)] || C[lp * NL + (i)]))
SI i64 if_else(u8 *act, const u8 *E, const u8 *Q, const u8 *alive, const u8 *B, const u8 *C, i64 d, i64 lp,
               i64 NL) {
    i64 n = 0;
    for (i64 i = 0; i < NL; i++) {
        u8 t = E[d * NL + i] && !Q[d * NL + i] && alive[i] && !LEFT(i);
        act[i] = t;
        n += t;
    }
    return n;
}
SI i64 close(u8 *act, const u8 *E, const u8 *alive, const u8 *B, const u8 *C, i64 d, i64 lp, i64 NL) {
    i64 n = 0;
    for (i64 i = 0; i < NL; i++) {
        u8 t = E[d * NL + i] && alive[i] && !LEFT(i);
        act[i] = t;
        n += t;
    }
    return n;
}
SI void loop_open(const u8 *act, u8 *E, u8 *B, u8 *C, i64 d, i64 NL) {
    for (i64 i = 0; i < NL; i++) { E[d * NL + i] = act[i]; B[d * NL + i] = 0; C[d * NL + i] = 0; }
}
SI i64 loop_next(u8 *act, const u8 *E, const u8 *alive, const u8 *B, u8 *C, i64 d, i64 NL) {
    i64 n = 0;
    for (i64 i = 0; i < NL; i++) {
        u8 t = E[d * NL + i] && alive[i] && !B[d * NL + i];
        act[i] = t;
        n += t;
    }
    if (n)
        for (i64 i = 0; i < NL; i++) C[d * NL + i] = 0;
    return n;
}
SI i64 jump(u8 *act, const u8 *P, u8 *X, i64 k, i64 pn, i64 g, i64 gp, i64 NL) {
    i64 n = 0;
    for (i64 i = 0; i < NL; i++) {
        if (act[i] && P[pn * NL + i] && (g < 0 || P[g * NL + i] == gp)) { X[k * NL + i] = 1; act[i] = 0; }
        n += act[i];
    }
    return n;
}
SI i64 ret(u8 *act, u8 *alive, const u8 *P, i64 g, i64 gp, i64 NL) {
    i64 n = 0;
    for (i64 i = 0; i < NL; i++) {
        if (act[i] && (g < 0 || P[g * NL + i] == gp)) { alive[i] = 0; act[i] = 0; }
        n += act[i];
    }
    return n;
}
SI void extract(i64 *R, i64 t, i64 n, i64 off, i64 mask, i64 NL) {
    for (i64 i = 0; i < NL; i++) R[t * NL + i] = (R[n * NL + i] >> off) & mask;
}
SI void insert(i64 *R, const u8 *P, const u8 *act, i64 g, i64 gp, i64 n, i64 t, i64 off, i64 mask, i64 NL) {
    for (i64 i = 0; i < NL; i++)
        if (act[i] && (g < 0 || P[g * NL + i] == gp))
            R[n * NL + i] = (R[n * NL + i] & ~(mask << off) & M32) | ((R[t * NL + i] & mask) << off);
}
SI void trap(i64 *status, i64 code, i64 wg, i64 pc) { status[0] = code; status[1] = wg; status[2] = pc; }
"""
