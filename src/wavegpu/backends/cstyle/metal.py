"""Metal Shading Language dialect: `as_type` bit casts, `device`/`threadgroup`/`constant` pointers
into one device buffer, `simd_*` SIMD-group functions (W = 32), `threadgroup_barrier`.

Apple GPUs have no double precision, so the double-based helpers of the prelude (WIDE) are
replaced here by float ones: correctly rounded division and square root by picking, among the
hardware result and its two neighbours, the one with the smallest exact (fma) residual; f16 and
bf16 arithmetic with exact float products and sums rounded to odd in float (24 bits >= 2p + 2 for
both formats, so the final rounding is correct); saturating conversions compared in float.
Rows on f64 are refused with a diagnostic. The output must be compiled with fast math off
(`MTLCompileOptions.mathMode = .safe`): the header also asks for it with Metal's pragmas.
"""

from __future__ import annotations

from ...errors import WaveError
from ...isa.registers import SRegId
from ...isa.table import ROWS
from ...isa.types import DataType
from ...isa.vocabulary import AtomOp, Scope
from ...wbin.program import Kernel
from .cuda import LaneLoops
from .prelude import CORE, HALF, float_add
from .render import EXPR

HEADER = r"""
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
"""

# The float replacements of the prelude's WIDE part (same names where the renderer calls them),
# with wv_wide = float for the shared HALF arithmetic.
FLOAT = r"""
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
"""

# Atomics on `device` and `threadgroup` memory: the old value of a CAS, and f32 add by CAS.
ATOMICS = "".join(
    f"""
WV_FN uint wv_cas_{s}({q} atomic_uint* p, uint cmp, uint v) {{
    uint e = cmp;
    while (!atomic_compare_exchange_weak_explicit(p, &e, v, memory_order_relaxed, memory_order_relaxed)) {{
        if (e != cmp) return e;
    }}
    return cmp;
}}
WV_FN uint wv_atomic_addf_{s}({q} atomic_uint* p, uint v) {{
    uint old = atomic_load_explicit(p, memory_order_relaxed), prev;
    do {{ prev = old; old = wv_cas_{s}(p, prev, {float_add(EXPR, "prev", "v")}); }} while (old != prev);
    return old;
}}"""
    for s, q in (("g", "device"), ("l", "threadgroup"))
)

_SREG: dict[int, str] = {
    SRegId.TID_X: "wv_tid.x",
    SRegId.TID_Y: "wv_tid.y",
    SRegId.TID_Z: "wv_tid.z",
    SRegId.WID: "wv_wid",
    SRegId.LID: "wv_lane",
    SRegId.CTAID_X: "wv_ctaid.x",
    SRegId.CTAID_Y: "wv_ctaid.y",
    SRegId.CTAID_Z: "wv_ctaid.z",
    SRegId.NTID_X: "wv_ntid.x",
    SRegId.NTID_Y: "wv_ntid.y",
    SRegId.NTID_Z: "wv_ntid.z",
    SRegId.NCTAID_X: "wv_nctaid.x",
    SRegId.NCTAID_Y: "wv_nctaid.y",
    SRegId.NCTAID_Z: "wv_nctaid.z",
    SRegId.NWAVES: "wv_nwaves",
    SRegId.WAVE_WIDTH: "32u",
}
_SPACE = {"global": ("device", "mem"), "local": ("threadgroup", "lmem"), "const": ("constant", "cmem")}
_NO_F64 = "Apple GPUs have no double precision (Metal has no double type)"

# the kernel's inputs: the buffers, then the positions Metal provides as attributes
PARAMS = (
    "device uchar* mem [[buffer(0)]]",
    "constant uchar* cmem [[buffer(1)]]",
    "constant uint* wv_args [[buffer(2)]]",
    "uint3 wv_tid [[thread_position_in_threadgroup]]",
    "uint3 wv_ctaid [[threadgroup_position_in_grid]]",
    "uint3 wv_ntid [[threads_per_threadgroup]]",
    "uint3 wv_nctaid [[threadgroups_per_grid]]",
    "uint wv_lane [[thread_index_in_simdgroup]]",
    "uint wv_wid [[simdgroup_index_in_threadgroup]]",
    "uint wv_nwaves [[simdgroups_per_threadgroup]]",
)


class Metal(LaneLoops):
    vector_types = {2: "uint2", 4: "uint4"}  # the built-in vector types: one 64- or 128-bit access
    name = "metal"
    unsupported = {r.key: _NO_F64 for r in ROWS if any(o.dtype is DataType.F64 for o in r.operands)}
    unsupported["mma.m16n8k8.f32.f16"] = "its exact f32 result needs double-precision sums (Apple GPUs have none)"
    exprs = {
        "div.f32": "wv_c32(wv_divf(F({a}), F({b})))",
        "sqrt.f32": "wv_c32(wv_sqrtf(F({a})))",
        "rcp.f32": "wv_c32(wv_divf(1.0f, F({a})))",
        "rsqrt.f32": "wv_c32(wv_divf(1.0f, wv_sqrtf(F({a}))))",
        "sin.f32": "wv_c32(precise::sin(F({a})))",
        "cos.f32": "wv_c32(precise::cos(F({a})))",
        "exp2.f32": "wv_c32(precise::exp2(F({a})))",
        "log2.f32": "wv_c32(precise::log2(F({a})))",
        "cvt.f16.f32": "wv_f2h(F({a}))",
        "cvt.bf16.f32": "wv_f2b(F({a}))",
    }
    lane = "wv_lane"

    def prelude(self) -> str:
        return HEADER + CORE + FLOAT + HALF + ATOMICS + self.loops()

    def kernel_open(self, k: Kernel, params: list[str], wave_width: int) -> str:
        if wave_width != 32:
            raise WaveError(f"metal: SIMD-groups have 32 lanes; cannot render for a wave width of {wave_width}")
        head = f"kernel void {k.name}(\n    " + ",\n    ".join(PARAMS) + ") {"
        return head + "".join(f"\n    const uint {p} = wv_args[{i}];" for i, p in enumerate(params))

    def sreg(self, sid: int, wave_width: int) -> str:
        return _SREG[sid]

    def ptr(self, space: str, ctype: str, addr: str) -> str:
        q, base = _SPACE[space]
        return f"(({q} {ctype}*)({base} + ({addr})))"

    def load(self, space: str, ctype: str, addr: str) -> str:
        return f"(*{self.ptr(space, ctype, addr)})"

    def atomic(self, space: str, op: AtomOp, ctype: str, addr: str, args: list[str]) -> str:
        s = "g" if space == "global" else "l"
        if ctype == "float":
            return f"wv_atomic_addf_{s}({self.ptr(space, 'atomic_uint', addr)}, {args[0]})"
        if op is AtomOp.CAS:
            return f"wv_cas_{s}({self.ptr(space, 'atomic_uint', addr)}, {args[0]}, {args[1]})"
        at = "atomic_int" if ctype == "int" else "atomic_uint"
        fn = "exchange" if op is AtomOp.EXCH else f"fetch_{op.value}"
        return f"atomic_{fn}_explicit({self.ptr(space, at, addr)}, ({ctype}){args[0]}, memory_order_relaxed)"

    def barrier(self) -> str:
        return "threadgroup_barrier(mem_flags::mem_device | mem_flags::mem_threadgroup);"

    def fence(self, scope: Scope) -> str:
        ts = {Scope.WAVE: "thread_scope_simdgroup", Scope.WORKGROUP: "thread_scope_threadgroup"}.get(
            scope, "thread_scope_device"
        )
        return f"atomic_thread_fence(mem_flags::mem_device | mem_flags::mem_threadgroup, memory_order_seq_cst, {ts});"

    def local_decl(self, nbytes: int) -> str:
        words = (nbytes + 7) // 8
        return f"threadgroup ulong lmem_[{words}]; threadgroup uchar* lmem = (threadgroup uchar*)lmem_;"
