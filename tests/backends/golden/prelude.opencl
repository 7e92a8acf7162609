
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable
#define F(x) as_float((uint)(x))
#define U(x) as_uint(x)
#define D(x) as_double((ulong)(x))
#define UL(x) as_ulong(x)

#define WV_FN static inline
#define POPC(x) popcount(x)
#define CLZ(x) clz(x)
#define NEXT_F(a, b) nextafter((float)(a), (float)(b))
#define NEXT_D(a, b) nextafter((double)(a), (double)(b))
#define WV_INF ((double)INFINITY)
#define GLOBAL_ATOMIC_PTR volatile __global uint*
#define LOCAL_ATOMIC_PTR volatile __local uint*
#define ATOMIC_CAS(p, c, v) atomic_cmpxchg(p, c, v)
/* and/or/xor over the active lanes, in lane order: Intel's CPU runtime has no
   sub_group_non_uniform_reduce_and/or/xor for sub-groups of 32 or 64 on SSE4.2 hosts (the JIT
   fails on the missing symbols), so these never depend on the host's vector ISA */
WV_FN uint wv_sg_bits(int op, uint x) {
    uint4 b = sub_group_ballot(1);
    ulong m = (ulong)b.x | ((ulong)b.y << 32);
    uint r = op == 0 ? 0xFFFFFFFFu : 0u;
    for (uint i = 0u; m != 0ul; i++, m >>= 1) {
        if (m & 1ul) {
            uint v = sub_group_non_uniform_broadcast(x, i);
            r = op == 0 ? (r & v) : op == 1 ? (r | v) : (r ^ v);
        }
    }
    return r;
}
/* the thread's first out-of-bounds or misaligned access (once per thread, at its end): the minima of (thread << 32 | address)
   and (thread << 32 | pc) in the fault slot, 64-bit word err of mem (runtime/faults.py) */
WV_FN void wv_fault(__global uchar* mem, uint err, uint a, uint pc) {
    ulong g = ((ulong)get_group_id(2) * get_num_groups(1) + get_group_id(1)) * get_num_groups(0) + get_group_id(0);
    ulong t = g * (get_local_size(0) * get_local_size(1) * get_local_size(2)) + get_local_linear_id();
    volatile __global ulong* e = (volatile __global ulong*)mem + err;
    atom_min(e, (t << 32) | a);
    atom_min(e + 1, (t << 32) | pc);
}
#define WV_REPORT() if (wv_bad) wv_fault(mem, wv_err, wv_fa, wv_fpc)
WV_FN uint D2H_BITS(double x) { ushort h; vstore_half_rte(x, 0, (__private half*)&h); return (uint)h; }
WV_FN float H2F_BITS(uint u) { ushort s = (ushort)u; return vload_half(0, (__private const half*)&s); }

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

#define DBL(x) ((double)(x))
/* saturating conversions by hand: Intel's CPU runtime lacks vectorised convert_*_sat_* symbols */
#define SAT_I_RTZ(x) wv_sat_i(trunc((double)(x)))
#define SAT_I_RTE(x) wv_sat_i(rint((double)(x)))
#define SAT_I_RTN(x) wv_sat_i(floor((double)(x)))
#define SAT_I_RTP(x) wv_sat_i(ceil((double)(x)))
#define SAT_U_RTZ(x) wv_sat_u(trunc((double)(x)))
#define SAT_U_RTE(x) wv_sat_u(rint((double)(x)))
#define SAT_U_RTN(x) wv_sat_u(floor((double)(x)))
#define SAT_U_RTP(x) wv_sat_u(ceil((double)(x)))
#define SAT_I_RTZ_D(x) wv_sat_i(trunc(x))
#define SAT_U_RTZ_D(x) wv_sat_u(trunc(x))
#define F32_RTZ(x) wv_f32_rtz(x)
WV_FN int wv_sat_i(double v) {
    if (isnan(v)) return 0;
    if (v <= -2147483648.0) return (int)0x80000000;
    if (v >= 2147483647.0) return 0x7FFFFFFF;
    return (int)v;
}
WV_FN uint wv_sat_u(double v) {
    if (isnan(v) || v <= 0.0) return 0u;
    if (v >= 4294967295.0) return 0xFFFFFFFFu;
    return (uint)v;
}
WV_FN float wv_f32_rtz(double x) {
    float r = (float)x;
    if (!isnan(x) && fabs((double)r) > fabs(x)) r = NEXT_F(r, 0.0f);
    return r;
}
WV_FN ulong wv_c64(double x) { return isnan(x) ? 0x7FFFFFFFFFFFFFFFul : UL(x); }
WV_FN double wv_dmin(double a, double b) {
    if (isnan(a)) return b;
    if (isnan(b)) return a;
    if (a == 0.0 && b == 0.0) return (signbit(a) || signbit(b)) ? -0.0 : 0.0;
    return a < b ? a : b;
}
WV_FN double wv_dmax(double a, double b) {
    if (isnan(a)) return b;
    if (isnan(b)) return a;
    if (a == 0.0 && b == 0.0) return (signbit(a) && signbit(b)) ? -0.0 : 0.0;
    return a > b ? a : b;
}
WV_FN uint wv_d2h(double x) {
    if (isnan(x)) return 0x7FFFu;
    return D2H_BITS(x);
}
WV_FN double wv_h2d(uint h) { return (double)H2F_BITS(h & 0xFFFFu); }
WV_FN float wv_h2f(uint h) { return H2F_BITS(h & 0xFFFFu); }
WV_FN uint wv_d2b(double x) {
    if (isnan(x)) return 0x7FFFu;
    double y;
    if (fabs(x) < 0x1p-126) {
        y = rint(x * 0x1p133) * 0x1p-133;
        if (y == 0.0) y = copysign(0.0, x);
    } else {
        ulong b = UL(x);
        b = ((b + ((1ul << 44) - 1ul) + ((b >> 45) & 1ul)) >> 45) << 45;
        y = D(b);
    }
    return U((float)y) >> 16;
}
WV_FN double wv_b2d(uint h) { return (double)F((h & 0xFFFFu) << 16); }
typedef double wv_wide;
#define WIDE_EVEN(s) ((UL(s) & 1ul) == 0ul)
#define WIDE_NEXT(a, b) NEXT_D(a, b)
#define WIDE_INF WV_INF
#define WV_FROM_H(h) wv_h2d(h)
#define WV_TO_H(x) wv_d2h(x)
#define WV_FROM_B(h) wv_b2d(h)
#define WV_TO_B(x) wv_d2b(x)

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

WV_FN uint wv_atomic_addf_g(GLOBAL_ATOMIC_PTR p, uint v) {
    uint old = *p, prev;
    do { prev = old; old = ATOMIC_CAS(p, prev, wv_c32(F(prev) + F(v))); } while (old != prev);
    return old;
}
WV_FN uint wv_atomic_addf_l(LOCAL_ATOMIC_PTR p, uint v) {
    uint old = *p, prev;
    do { prev = old; old = ATOMIC_CAS(p, prev, wv_c32(F(prev) + F(v))); } while (old != prev);
    return old;
}

/* f32 bits -> an int ordered as WAVE's min/max order floats (-0 below +0); a NaN -> nan */
WV_FN int wv_fkey(uint u, int nan) {
    return (u & 0x7FFFFFFFu) > 0x7F800000u ? nan : (int)(u ^ ((uint)((int)u >> 31) >> 1));
}
/* the inverse of wv_fkey; the NaN identities (INT_MAX, INT_MIN) give the canonical NaN */
WV_FN uint wv_funkey(int k) {
    uint u = (uint)k ^ ((uint)(k >> 31) >> 1);
    return (u & 0x7FFFFFFFu) > 0x7F800000u ? 0x7FFFFFFFu : u;
}

WV_FN bool wv_in(uint a, uint w, uint lo, uint last) {
    return a >= lo && (ulong)a + (ulong)(w - 1u) <= (ulong)last && (a & (w - 1u)) == 0u;
}
#define WV_NOTE(ok, a, pc) if (!(ok) && !wv_bad) { wv_bad = true; wv_fa = (a); wv_fpc = (pc); }
