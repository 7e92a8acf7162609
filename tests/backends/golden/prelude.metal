
#include <metal_stdlib>
using namespace metal;
#ifdef __METAL_VERSION__
#pragma METAL fp math_mode(safe)
#pragma METAL fp contract(off)
#endif
#define WV_FN static inline
#define F(x) as_type<float>((uint)(x))
#define U(x) as_type<uint>((float)(x))
#define POPC(x) popcount((uint)(x))
#define CLZ(x) clz((uint)(x))
#define BREV(x) reverse_bits((uint)(x))
/* wave primitives on WAVE's active set, tracked by the kernel in a wv_mask: SIMD-groups of 32,
   all of whose existing threads run at entry; ballots keep only the mask's lanes */
typedef uint wv_mask;
#define WV_LANES 32
#define WV_ENTRY() ((uint)(simd_vote::vote_t)simd_active_threads_mask())
#define WV_SHFL(m, x, i) simd_shuffle(x, (ushort)(i))
#define WV_SHFL_XOR(m, x, k) simd_shuffle_xor(x, (ushort)(k))
#define WV_FULL(m) ((m) == 0xFFFFFFFFu)
#define WV_BALLOT(m, p) ((uint)(simd_vote::vote_t)simd_ballot(p) & (m))
#define WV_ANY(m, p) (WV_BALLOT(m, p) != 0u)
#define WV_ALL(m, p) (WV_BALLOT(m, p) == (m))

#define CVT_F_S(x) ((float)(int)(x))
#define CVT_F_U(x) ((float)(uint)(x))
WV_FN uint wv_c32(float x) { return isnan(x) ? 0x7FFFFFFFu : U(x); }
WV_FN uint wv_div_u32(uint a, uint b) { return b ? a / b : 0xFFFFFFFFu; }
WV_FN uint wv_rem_u32(uint a, uint b) { return b ? a % b : a; }
WV_FN uint wv_div_s32(uint a, uint b) {
    int x = (int)a, y = (int)b;
    if (y == 0) return 0xFFFFFFFFu;
    if (x == (int)0x80000000 && y == -1) return a;
    return (uint)(x / y);
}
WV_FN uint wv_rem_s32(uint a, uint b) {
    int x = (int)a, y = (int)b;
    if (y == 0) return a;
    if (x == (int)0x80000000 && y == -1) return 0u;
    return (uint)(x % y);
}
WV_FN uint wv_abs_s32(uint a) { return (int)a < 0 ? 0u - a : a; }
WV_FN int wv_min_i(int a, int b) { return a < b ? a : b; }
WV_FN int wv_max_i(int a, int b) { return a > b ? a : b; }
WV_FN uint wv_min_u(uint a, uint b) { return a < b ? a : b; }
WV_FN uint wv_max_u(uint a, uint b) { return a > b ? a : b; }
WV_FN uint wv_shl(uint a, uint b) { return b > 31u ? 0u : a << b; }
WV_FN uint wv_shr_u(uint a, uint b) { return b > 31u ? 0u : a >> b; }
WV_FN uint wv_shr_s(uint a, uint b) { return (uint)((int)a >> (b > 31u ? 31u : b)); }
WV_FN uint wv_popc(uint a) { return POPC(a); }
WV_FN uint wv_clz(uint a) { return a ? CLZ(a) : 32u; }
#ifdef BREV
WV_FN uint wv_brev(uint v) { return BREV(v); }
#else
WV_FN uint wv_brev(uint v) {
    v = ((v >> 1) & 0x55555555u) | ((v & 0x55555555u) << 1);
    v = ((v >> 2) & 0x33333333u) | ((v & 0x33333333u) << 2);
    v = ((v >> 4) & 0x0F0F0F0Fu) | ((v & 0x0F0F0F0Fu) << 4);
    v = ((v >> 8) & 0x00FF00FFu) | ((v & 0x00FF00FFu) << 8);
    return (v >> 16) | (v << 16);
}
#endif
WV_FN uint wv_bfe(uint a, uint b, uint c, int sgn) {
    uint pos = b & 0xFFu, len = c & 0xFFu, out = 0u, sbit = 0u;
    if (sgn && len) sbit = (a >> (pos + len - 1u < 31u ? pos + len - 1u : 31u)) & 1u;
    for (uint i = 0; i < 32u; i++) {
        uint bit = (i < len && pos + i <= 31u) ? (a >> (pos + i)) & 1u : sbit;
        out |= bit << i;
    }
    return out;
}
WV_FN uint wv_bfi(uint ins, uint b, uint c, uint base) {
    uint pos = b & 0xFFu, len = c & 0xFFu, out = base;
    for (uint i = 0; i < len && pos + i <= 31u; i++)
        out = (out & ~(1u << (pos + i))) | (((ins >> i) & 1u) << (pos + i));
    return out;
}
WV_FN uint wv_dp4a_s(uint a, uint b, uint c) {
    int acc = (int)c;
    for (int i = 0; i < 4; i++) acc += (int)(char)(a >> (8 * i)) * (int)(char)(b >> (8 * i));
    return (uint)acc;
}
WV_FN uint wv_dp4a_u(uint a, uint b, uint c) {
    uint acc = c;
    for (int i = 0; i < 4; i++) acc += ((a >> (8 * i)) & 0xFFu) * ((b >> (8 * i)) & 0xFFu);
    return acc;
}
WV_FN float wv_fmin(float a, float b) {
    if (isnan(a)) return b;
    if (isnan(b)) return a;
    if (a == 0.0f && b == 0.0f) return (signbit(a) || signbit(b)) ? -0.0f : 0.0f;
    return a < b ? a : b;
}
WV_FN float wv_fmax(float a, float b) {
    if (isnan(a)) return b;
    if (isnan(b)) return a;
    if (a == 0.0f && b == 0.0f) return (signbit(a) && signbit(b)) ? -0.0f : 0.0f;
    return a > b ? a : b;
}
WV_FN uint wv_fract(uint a) {
    float x = F(a);
    if (isinf(x) || isnan(x)) return 0x7FFFFFFFu;
    float r = x - floor(x);
    return U(r < F(0x3F7FFFFFu) ? r : F(0x3F7FFFFFu));
}
WV_FN uint wv_sat(uint a) {
    float x = F(a);
    if (isnan(x)) return 0u;
    return U(fmin(fmax(x, 0.0f), 1.0f));
}

WV_FN int wv_sat_if(float v) {
    if (isnan(v)) return 0;
    if (v <= -2147483648.0f) return (int)0x80000000u;
    if (v >= 2147483648.0f) return 0x7FFFFFFF;
    return (int)v;
}
WV_FN uint wv_sat_uf(float v) {
    if (isnan(v) || v <= 0.0f) return 0u;
    if (v >= 4294967296.0f) return 0xFFFFFFFFu;
    return (uint)v;
}
#define SAT_I_RTZ(x) wv_sat_if(trunc(x))
#define SAT_I_RTE(x) wv_sat_if(rint(x))
#define SAT_I_RTN(x) wv_sat_if(floor(x))
#define SAT_I_RTP(x) wv_sat_if(ceil(x))
#define SAT_U_RTZ(x) wv_sat_uf(trunc(x))
#define SAT_U_RTE(x) wv_sat_uf(rint(x))
#define SAT_U_RTN(x) wv_sat_uf(floor(x))
#define SAT_U_RTP(x) wv_sat_uf(ceil(x))
/* of q and its neighbours, the candidate whose exact residual r(c) is smallest (ties: even) */
WV_FN float wv_pick(float q, float lo, float hi, float rq, float rlo, float rhi) {
    float best = q, rb = fabs(rq);
    if (fabs(rlo) < rb || (fabs(rlo) == rb && (as_type<uint>(lo) & 1u) == 0u)) { best = lo; rb = fabs(rlo); }
    if (fabs(rhi) < rb || (fabs(rhi) == rb && (as_type<uint>(hi) & 1u) == 0u)) best = hi;
    return best;
}
WV_FN float wv_divf(float a, float b) {
    float q = a / b;
    if (!isfinite(q) || q == 0.0f || !isfinite(a) || !isfinite(b)) return q;
    float lo = nextafter(q, -INFINITY), hi = nextafter(q, INFINITY);
    return wv_pick(q, lo, hi, fma(-q, b, a), fma(-lo, b, a), fma(-hi, b, a));
}
WV_FN float wv_sqrtf(float x) {
    float s = sqrt(x);
    if (!isfinite(s) || s == 0.0f) return s;
    float lo = nextafter(s, 0.0f), hi = nextafter(s, INFINITY);
    return wv_pick(s, lo, hi, fma(-s, s, x), fma(-lo, lo, x), fma(-hi, hi, x));
}
WV_FN float wv_h2f(uint h) { return (float)as_type<half>((ushort)(h & 0xFFFFu)); }
WV_FN float wv_b2f(uint h) { return F((h & 0xFFFFu) << 16); }
WV_FN uint wv_f2h(float x) { return isnan(x) ? 0x7FFFu : (uint)as_type<ushort>((half)x); }
WV_FN uint wv_f2b(float x) {
    if (isnan(x)) return 0x7FFFu;
    uint u = U(x);
    return (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
}
typedef float wv_wide;  /* 24 bits >= 2p + 2 for f16 and bf16; products exact (bf16 ones unless they underflow) */
#define WIDE_EVEN(s) ((U(s) & 1u) == 0u)
#define WIDE_NEXT(a, b) nextafter(a, b)
#define WIDE_INF INFINITY
#define WV_FROM_H(h) wv_h2f(h)
#define WV_TO_H(x) wv_f2h(x)
#define WV_FROM_B(h) wv_b2f(h)
#define WV_TO_B(x) wv_f2b(x)

/* f16/bf16 arithmetic in wv_wide (double; float on Metal): products are exact, a sum is rounded
   to odd (p + c exact in, correct for one later rounding to <= p - 2 bits), one final rounding */
WV_FN wv_wide wv_rto(wv_wide p, wv_wide c) {
    wv_wide s = p + c;
    wv_wide bb = s - p;
    wv_wide e = (p - (s - bb)) + (c - bb);
    if (e != (wv_wide)0 && isfinite(s) && WIDE_EVEN(s))
        s = WIDE_NEXT(s, e > (wv_wide)0 ? WIDE_INF : -WIDE_INF);
    return s;
}
WV_FN wv_wide wv_half_op(int op, wv_wide a, wv_wide b, wv_wide c) {
    if (op == 0) return wv_rto(a, b);
    if (op == 1) return a * b;
    if (op == 3) return wv_rto(a, -b);
    return wv_rto(a * b, c);
}
WV_FN uint wv_h1(int op, uint a, uint b, uint c) {
    return WV_TO_H(wv_half_op(op, WV_FROM_H(a), WV_FROM_H(b), WV_FROM_H(c)));
}
WV_FN uint wv_h2(int op, uint a, uint b, uint c) {
    return wv_h1(op, a, b, c) | (wv_h1(op, a >> 16, b >> 16, c >> 16) << 16);
}
WV_FN uint wv_b1(int op, uint a, uint b, uint c) {
    return WV_TO_B(wv_half_op(op, WV_FROM_B(a), WV_FROM_B(b), WV_FROM_B(c)));
}
WV_FN uint wv_b2(int op, uint a, uint b, uint c) {
    return wv_b1(op, a, b, c) | (wv_b1(op, a >> 16, b >> 16, c >> 16) << 16);
}

WV_FN uint wv_cas_g(device atomic_uint* p, uint cmp, uint v) {
    uint e = cmp;
    while (!atomic_compare_exchange_weak_explicit(p, &e, v, memory_order_relaxed, memory_order_relaxed)) {
        if (e != cmp) return e;
    }
    return cmp;
}
WV_FN uint wv_atomic_addf_g(device atomic_uint* p, uint v) {
    uint old = atomic_load_explicit(p, memory_order_relaxed), prev;
    do { prev = old; old = wv_cas_g(p, prev, wv_c32(F(prev) + F(v))); } while (old != prev);
    return old;
}
WV_FN uint wv_cas_l(threadgroup atomic_uint* p, uint cmp, uint v) {
    uint e = cmp;
    while (!atomic_compare_exchange_weak_explicit(p, &e, v, memory_order_relaxed, memory_order_relaxed)) {
        if (e != cmp) return e;
    }
    return cmp;
}
WV_FN uint wv_atomic_addf_l(threadgroup atomic_uint* p, uint v) {
    uint old = atomic_load_explicit(p, memory_order_relaxed), prev;
    do { prev = old; old = wv_cas_l(p, prev, wv_c32(F(prev) + F(v))); } while (old != prev);
    return old;
}
WV_FN uint wv_reduce_add_u32(wv_mask m, uint x) {
    if (WV_FULL(m)) {
        for (int k = WV_LANES / 2; k > 0; k >>= 1) { uint a = x, b = WV_SHFL_XOR(m, x, k); x = (a + b); }
        return x;
    }
    uint acc = 0x0u;
    for (int i = 0; i < WV_LANES; i++)
        if ((m >> i) & 1u) { uint a = acc, b = WV_SHFL(m, x, i); acc = (a + b); }
    return acc;
}

WV_FN uint wv_prefix_add_u32(wv_mask m, uint x, uint me) {
    if (WV_FULL(m)) {  /* inclusive Kogge-Stone scan, then each lane takes its left neighbour's */
        uint s = x;
        for (uint k = 1u; k < (uint)WV_LANES; k <<= 1) {
            uint b = WV_SHFL(m, s, me >= k ? me - k : me);
            if (me >= k) { uint a = s; s = (a + b); }
        }
        uint left = WV_SHFL(m, s, me > 0u ? me - 1u : 0u);
        return me > 0u ? left : 0x0u;
    }
    uint acc = 0x0u;
    for (int i = 0; i < WV_LANES; i++)
        if ((m >> i) & 1u) {  /* every lane of m shuffles; the lanes above i take the value */
            uint b = WV_SHFL(m, x, i);
            if ((uint)i < me) { uint a = acc; acc = (a + b); }
        }
    return acc;
}

WV_FN uint wv_reduce_min_s32(wv_mask m, uint x) {
    if (WV_FULL(m)) {
        for (int k = WV_LANES / 2; k > 0; k >>= 1) { uint a = x, b = WV_SHFL_XOR(m, x, k); x = (uint)wv_min_i((int)a, (int)b); }
        return x;
    }
    uint acc = 0x7fffffffu;
    for (int i = 0; i < WV_LANES; i++)
        if ((m >> i) & 1u) { uint a = acc, b = WV_SHFL(m, x, i); acc = (uint)wv_min_i((int)a, (int)b); }
    return acc;
}

WV_FN uint wv_reduce_max_s32(wv_mask m, uint x) {
    if (WV_FULL(m)) {
        for (int k = WV_LANES / 2; k > 0; k >>= 1) { uint a = x, b = WV_SHFL_XOR(m, x, k); x = (uint)wv_max_i((int)a, (int)b); }
        return x;
    }
    uint acc = 0x80000000u;
    for (int i = 0; i < WV_LANES; i++)
        if ((m >> i) & 1u) { uint a = acc, b = WV_SHFL(m, x, i); acc = (uint)wv_max_i((int)a, (int)b); }
    return acc;
}

WV_FN uint wv_reduce_min_u32(wv_mask m, uint x) {
    if (WV_FULL(m)) {
        for (int k = WV_LANES / 2; k > 0; k >>= 1) { uint a = x, b = WV_SHFL_XOR(m, x, k); x = wv_min_u(a, b); }
        return x;
    }
    uint acc = 0xffffffffu;
    for (int i = 0; i < WV_LANES; i++)
        if ((m >> i) & 1u) { uint a = acc, b = WV_SHFL(m, x, i); acc = wv_min_u(a, b); }
    return acc;
}

WV_FN uint wv_reduce_max_u32(wv_mask m, uint x) {
    if (WV_FULL(m)) {
        for (int k = WV_LANES / 2; k > 0; k >>= 1) { uint a = x, b = WV_SHFL_XOR(m, x, k); x = wv_max_u(a, b); }
        return x;
    }
    uint acc = 0x0u;
    for (int i = 0; i < WV_LANES; i++)
        if ((m >> i) & 1u) { uint a = acc, b = WV_SHFL(m, x, i); acc = wv_max_u(a, b); }
    return acc;
}

WV_FN uint wv_reduce_and_b32(wv_mask m, uint x) {
    if (WV_FULL(m)) {
        for (int k = WV_LANES / 2; k > 0; k >>= 1) { uint a = x, b = WV_SHFL_XOR(m, x, k); x = (a & b); }
        return x;
    }
    uint acc = 0xffffffffu;
    for (int i = 0; i < WV_LANES; i++)
        if ((m >> i) & 1u) { uint a = acc, b = WV_SHFL(m, x, i); acc = (a & b); }
    return acc;
}

WV_FN uint wv_reduce_or_b32(wv_mask m, uint x) {
    if (WV_FULL(m)) {
        for (int k = WV_LANES / 2; k > 0; k >>= 1) { uint a = x, b = WV_SHFL_XOR(m, x, k); x = (a | b); }
        return x;
    }
    uint acc = 0x0u;
    for (int i = 0; i < WV_LANES; i++)
        if ((m >> i) & 1u) { uint a = acc, b = WV_SHFL(m, x, i); acc = (a | b); }
    return acc;
}

WV_FN uint wv_reduce_xor_b32(wv_mask m, uint x) {
    if (WV_FULL(m)) {
        for (int k = WV_LANES / 2; k > 0; k >>= 1) { uint a = x, b = WV_SHFL_XOR(m, x, k); x = (a ^ b); }
        return x;
    }
    uint acc = 0x0u;
    for (int i = 0; i < WV_LANES; i++)
        if ((m >> i) & 1u) { uint a = acc, b = WV_SHFL(m, x, i); acc = (a ^ b); }
    return acc;
}

WV_FN uint wv_reduce_min_f32(wv_mask m, uint x) {
    if (WV_FULL(m)) {
        for (int k = WV_LANES / 2; k > 0; k >>= 1) { uint a = x, b = WV_SHFL_XOR(m, x, k); x = wv_c32(wv_fmin(F(a), F(b))); }
        return x;
    }
    uint acc = 0x7fffffffu;
    for (int i = 0; i < WV_LANES; i++)
        if ((m >> i) & 1u) { uint a = acc, b = WV_SHFL(m, x, i); acc = wv_c32(wv_fmin(F(a), F(b))); }
    return acc;
}

WV_FN uint wv_reduce_max_f32(wv_mask m, uint x) {
    if (WV_FULL(m)) {
        for (int k = WV_LANES / 2; k > 0; k >>= 1) { uint a = x, b = WV_SHFL_XOR(m, x, k); x = wv_c32(wv_fmax(F(a), F(b))); }
        return x;
    }
    uint acc = 0x7fffffffu;
    for (int i = 0; i < WV_LANES; i++)
        if ((m >> i) & 1u) { uint a = acc, b = WV_SHFL(m, x, i); acc = wv_c32(wv_fmax(F(a), F(b))); }
    return acc;
}
