"""OpenCL C 3.0 dialect: sub-group built-ins (non-uniform, so only active lanes take part),
`intel_reqd_sub_group_size` to set W, one device-memory buffer plus the register arguments."""

from __future__ import annotations

from ...wbin.program import Kernel
from .render import Dialect

PRELUDE = r"""
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define F(x) as_float((uint)(x))
#define U(x) as_uint(x)
#define D(x) as_double((ulong)(x))
#define UL(x) as_ulong(x)
#define DBL(x) ((double)(x))
#define CVT_F_S(x) ((float)(int)(x))
#define CVT_F_U(x) ((float)(uint)(x))
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

static inline uint wv_c32(float x) { return isnan(x) ? 0x7FFFFFFFu : as_uint(x); }
static inline int wv_sat_i(double v) {
    if (isnan(v)) return 0;
    if (v <= -2147483648.0) return (int)0x80000000;
    if (v >= 2147483647.0) return 0x7FFFFFFF;
    return (int)v;
}
static inline uint wv_sat_u(double v) {
    if (isnan(v) || v <= 0.0) return 0u;
    if (v >= 4294967295.0) return 0xFFFFFFFFu;
    return (uint)v;
}
static inline float wv_f32_rtz(double x) {
    float r = (float)x;
    if (!isnan(x) && fabs((double)r) > fabs(x)) r = nextafter(r, 0.0f);
    return r;
}
static inline ulong wv_c64(double x) { return isnan(x) ? 0x7FFFFFFFFFFFFFFFul : as_ulong(x); }
static inline uint wv_div_u32(uint a, uint b) { return b ? a / b : 0xFFFFFFFFu; }
static inline uint wv_rem_u32(uint a, uint b) { return b ? a % b : a; }
static inline uint wv_div_s32(uint a, uint b) {
    int x = (int)a, y = (int)b;
    if (y == 0) return 0xFFFFFFFFu;
    if (x == (int)0x80000000 && y == -1) return a;
    return (uint)(x / y);
}
static inline uint wv_rem_s32(uint a, uint b) {
    int x = (int)a, y = (int)b;
    if (y == 0) return a;
    if (x == (int)0x80000000 && y == -1) return 0u;
    return (uint)(x % y);
}
static inline uint wv_abs_s32(uint a) { return (int)a < 0 ? 0u - a : a; }
static inline int wv_min_i(int a, int b) { return a < b ? a : b; }
static inline int wv_max_i(int a, int b) { return a > b ? a : b; }
static inline uint wv_min_u(uint a, uint b) { return a < b ? a : b; }
static inline uint wv_max_u(uint a, uint b) { return a > b ? a : b; }
static inline uint wv_shl(uint a, uint b) { return b > 31u ? 0u : a << b; }
static inline uint wv_shr_u(uint a, uint b) { return b > 31u ? 0u : a >> b; }
static inline uint wv_shr_s(uint a, uint b) { return (uint)((int)a >> (b > 31u ? 31u : b)); }
static inline uint wv_popc(uint a) { return popcount(a); }
static inline uint wv_clz(uint a) { return a ? clz(a) : 32u; }
static inline uint wv_brev(uint v) {
    v = ((v >> 1) & 0x55555555u) | ((v & 0x55555555u) << 1);
    v = ((v >> 2) & 0x33333333u) | ((v & 0x33333333u) << 2);
    v = ((v >> 4) & 0x0F0F0F0Fu) | ((v & 0x0F0F0F0Fu) << 4);
    v = ((v >> 8) & 0x00FF00FFu) | ((v & 0x00FF00FFu) << 8);
    return (v >> 16) | (v << 16);
}
static inline uint wv_bfe(uint a, uint b, uint c, int sgn) {
    uint pos = b & 0xFFu, len = c & 0xFFu, out = 0u, sbit = 0u;
    if (sgn && len) sbit = (a >> min(pos + len - 1u, 31u)) & 1u;
    for (uint i = 0; i < 32u; i++) {
        uint bit = (i < len && pos + i <= 31u) ? (a >> (pos + i)) & 1u : sbit;
        out |= bit << i;
    }
    return out;
}
static inline uint wv_bfi(uint ins, uint b, uint c, uint base) {
    uint pos = b & 0xFFu, len = c & 0xFFu, out = base;
    for (uint i = 0; i < len && pos + i <= 31u; i++)
        out = (out & ~(1u << (pos + i))) | (((ins >> i) & 1u) << (pos + i));
    return out;
}
static inline uint wv_dp4a_s(uint a, uint b, uint c) {
    int acc = (int)c;
    for (int i = 0; i < 4; i++) acc += (int)(char)(a >> (8 * i)) * (int)(char)(b >> (8 * i));
    return (uint)acc;
}
static inline uint wv_dp4a_u(uint a, uint b, uint c) {
    uint acc = c;
    for (int i = 0; i < 4; i++) acc += ((a >> (8 * i)) & 0xFFu) * ((b >> (8 * i)) & 0xFFu);
    return acc;
}
static inline float wv_fmin(float a, float b) {
    if (isnan(a)) return b;
    if (isnan(b)) return a;
    if (a == 0.0f && b == 0.0f) return (signbit(a) || signbit(b)) ? -0.0f : 0.0f;
    return a < b ? a : b;
}
static inline float wv_fmax(float a, float b) {
    if (isnan(a)) return b;
    if (isnan(b)) return a;
    if (a == 0.0f && b == 0.0f) return (signbit(a) && signbit(b)) ? -0.0f : 0.0f;
    return a > b ? a : b;
}
static inline double wv_dmin(double a, double b) {
    if (isnan(a)) return b;
    if (isnan(b)) return a;
    if (a == 0.0 && b == 0.0) return (signbit(a) || signbit(b)) ? -0.0 : 0.0;
    return a < b ? a : b;
}
static inline double wv_dmax(double a, double b) {
    if (isnan(a)) return b;
    if (isnan(b)) return a;
    if (a == 0.0 && b == 0.0) return (signbit(a) && signbit(b)) ? -0.0 : 0.0;
    return a > b ? a : b;
}
static inline uint wv_fract(uint a) {
    float x = F(a);
    if (isinf(x) || isnan(x)) return 0x7FFFFFFFu;
    float r = x - floor(x);
    return as_uint(r < as_float(0x3F7FFFFFu) ? r : as_float(0x3F7FFFFFu));
}
static inline uint wv_sat(uint a) {
    float x = F(a);
    if (isnan(x)) return 0u;
    return as_uint(fmin(fmax(x, 0.0f), 1.0f));
}
/* p + c rounded to odd in double (p, c exact): makes one later rounding to <= 51 bits correct */
static inline double wv_rto(double p, double c) {
    double s = p + c;
    double bb = s - p;
    double e = (p - (s - bb)) + (c - bb);
    if (e != 0.0 && isfinite(s) && (as_ulong(s) & 1ul) == 0ul)
        s = nextafter(s, e > 0.0 ? (double)INFINITY : -(double)INFINITY);
    return s;
}
static inline uint wv_d2h(double x) {
    if (isnan(x)) return 0x7FFFu;
    ushort h;
    vstore_half_rte(x, 0, (__private half*)&h);
    return (uint)h;
}
static inline double wv_h2d(uint h) { ushort s = (ushort)h; return (double)vload_half(0, (__private const half*)&s); }
static inline float wv_h2f(uint h) { ushort s = (ushort)h; return vload_half(0, (__private const half*)&s); }
static inline uint wv_d2b(double x) {
    if (isnan(x)) return 0x7FFFu;
    double y;
    if (fabs(x) < 0x1p-126) {
        y = rint(x * 0x1p133) * 0x1p-133;
        if (y == 0.0) y = copysign(0.0, x);
    } else {
        ulong b = as_ulong(x);
        b = ((b + ((1ul << 44) - 1ul) + ((b >> 45) & 1ul)) >> 45) << 45;
        y = as_double(b);
    }
    return as_uint((float)y) >> 16;
}
static inline double wv_b2d(uint h) { return (double)as_float((h & 0xFFFFu) << 16); }
static inline double wv_half_op(int op, double a, double b, double c) {
    if (op == 0) return wv_rto(a, b);
    if (op == 1) return a * b;
    if (op == 3) return wv_rto(a, -b);
    return wv_rto(a * b, c);
}
static inline uint wv_h1(int op, uint a, uint b, uint c) {
    return wv_d2h(wv_half_op(op, wv_h2d(a & 0xFFFFu), wv_h2d(b & 0xFFFFu), wv_h2d(c & 0xFFFFu)));
}
static inline uint wv_h2(int op, uint a, uint b, uint c) {
    return wv_h1(op, a, b, c) | (wv_h1(op, a >> 16, b >> 16, c >> 16) << 16);
}
static inline uint wv_b1(int op, uint a, uint b, uint c) {
    return wv_d2b(wv_half_op(op, wv_b2d(a), wv_b2d(b), wv_b2d(c)));
}
static inline uint wv_b2(int op, uint a, uint b, uint c) {
    return wv_b1(op, a, b, c) | (wv_b1(op, a >> 16, b >> 16, c >> 16) << 16);
}
static inline uint wv_atomic_addf_g(volatile __global uint* p, uint v) {
    uint old = *p, prev;
    do { prev = old; old = atomic_cmpxchg(p, prev, wv_c32(as_float(prev) + as_float(v))); } while (old != prev);
    return old;
}
static inline uint wv_atomic_addf_l(volatile __local uint* p, uint v) {
    uint old = *p, prev;
    do { prev = old; old = atomic_cmpxchg(p, prev, wv_c32(as_float(prev) + as_float(v))); } while (old != prev);
    return old;
}
"""

_SREG = {
    0: "get_local_id(0)",
    1: "get_local_id(1)",
    2: "get_local_id(2)",
    3: "get_sub_group_id()",
    4: "get_sub_group_local_id()",
    5: "get_group_id(0)",
    6: "get_group_id(1)",
    7: "get_group_id(2)",
    8: "get_local_size(0)",
    9: "get_local_size(1)",
    10: "get_local_size(2)",
    11: "get_num_groups(0)",
    12: "get_num_groups(1)",
    13: "get_num_groups(2)",
    14: "get_num_sub_groups()",
}

_ATOM = {
    "add": "atomic_add",
    "sub": "atomic_sub",
    "min": "atomic_min",
    "max": "atomic_max",
    "and": "atomic_and",
    "or": "atomic_or",
    "xor": "atomic_xor",
    "exch": "atomic_xchg",
}


class OpenCL(Dialect):
    name = "opencl"
    unsupported = {"mma.m16n8k8.f32.f16": "OpenCL C has no matrix multiply-accumulate on sub-groups"}

    def prelude(self) -> str:
        return PRELUDE

    def kernel_open(self, k: Kernel, params: list[str], wave_width: int) -> str:
        attrs = [f"__attribute__((intel_reqd_sub_group_size({wave_width})))"]
        if k.workgroup_size is not None:
            attrs.append("__attribute__((reqd_work_group_size({}, {}, {})))".format(*k.workgroup_size))
        args = ["__global uchar* restrict mem", "__global const uchar* restrict cmem", *(f"uint {p}" for p in params)]
        return f"{' '.join(attrs)}\n__kernel void {k.name}({', '.join(args)}) {{"

    def sreg(self, sid: int, wave_width: int) -> str:
        if sid == 16:
            return f"{wave_width}u"
        return f"(uint){_SREG[sid]}"

    def _base(self, space: str) -> str:
        return {"global": "mem", "local": "lmem", "const": "cmem"}[space]

    def ptr(self, space: str, ctype: str, addr: str) -> str:
        q = {"global": "__global", "local": "__local", "const": "__global const"}[space]
        return f"(({q} {ctype}*)({self._base(space)} + ({addr})))"

    def load(self, space: str, ctype: str, addr: str) -> str:
        return f"(*{self.ptr(space, ctype, addr)})"

    def atomic(self, space: str, op: str, ctype: str, addr: str, args: list[str]) -> str:
        q = "__global" if space == "global" else "__local"
        p = f"((volatile {q} {ctype}*)({self._base(space)} + ({addr})))"
        if op == "addf":
            return (
                f"wv_atomic_addf_{'g' if space == 'global' else 'l'}(((volatile {q} uint*)({self._base(space)} + "
                f"({addr}))), {args[0]})"
            )
        if op == "cas":
            return f"atomic_cmpxchg({p}, ({ctype}){args[0]}, ({ctype}){args[1]})"
        return f"{_ATOM[op]}({p}, ({ctype}){args[0]})"

    def wave(self, op: str, args: list[str], wave_width: int) -> str:
        w = wave_width
        lane = "get_sub_group_local_id()"
        if op.startswith("reduce."):
            o, t = op.split(".")[1:]
            if t == "f32":
                return f"wv_c32(sub_group_non_uniform_reduce_{o}(F({args[0]})))"
            ct = "int" if t == "s32" else "uint"
            return f"(uint)sub_group_non_uniform_reduce_{o}(({ct}){args[0]})"
        if op == "prefix.add.u32":
            return f"sub_group_non_uniform_scan_exclusive_add({args[0]})"
        if op in ("shuffle.b32", "broadcast.b32"):
            return f"sub_group_shuffle({args[0]}, ({args[1]}) % {w}u)"
        if op == "shuffle.xor.b32":
            return f"sub_group_shuffle({args[0]}, (({lane} ^ ({args[1]})) < {w}u) ? ({lane} ^ ({args[1]})) : {lane})"
        if op == "shuffle.up.b32":
            return f"sub_group_shuffle({args[0]}, (({args[1]}) <= {lane}) ? ({lane} - ({args[1]})) : {lane})"
        if op == "shuffle.down.b32":
            return f"sub_group_shuffle({args[0]}, (({args[1]}) < {w}u - {lane}) ? ({lane} + ({args[1]})) : {lane})"
        if op == "ballot.b32":
            return f"sub_group_ballot({args[0]}).x"
        if op == "any":
            return f"(bool)sub_group_non_uniform_any({args[0]})"
        if op == "all":
            return f"(bool)sub_group_non_uniform_all({args[0]})"
        raise KeyError(op)

    def barrier(self) -> str:
        return "barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);"

    def fence(self, scope: str) -> str:
        return "mem_fence(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);"

    def local_decl(self, nbytes: int) -> str:
        words = (nbytes + 7) // 8
        return f"__local ulong lmem_[{words}]; __local uchar* lmem = (__local uchar*)lmem_;"
