"""CUDA C++ dialect (for nvcc and NVRTC): warps of 32, `*_sync` warp intrinsics on WAVE's active
set tracked explicitly (never `__activemask()`, which under independent thread scheduling is
whichever threads happen to run together); wave operations without a single intrinsic loop over
the active lanes."""

from __future__ import annotations

from ...errors import WaveError
from ...isa import semantics as sem
from ...isa.registers import SRegId
from ...isa.table import ROWS, InstrSpec
from ...isa.types import DataType
from ...isa.vocabulary import AtomOp, Op, ReduceOp, Scope
from ...wbin.program import Kernel
from .prelude import HELPERS
from .render import EXPR, Dialect, GenericPointers, combine

CUDA_SHARED = r"""typedef unsigned int uint;
typedef unsigned long long wv_ulong;
#define ulong wv_ulong
typedef unsigned char uchar;
typedef unsigned short ushort;
#define WV_FN static __device__ __forceinline__
#define F(x) __uint_as_float((uint)(x))
#define U(x) __float_as_uint(x)
#define D(x) __longlong_as_double((long long)(ulong)(x))
#define UL(x) ((ulong)__double_as_longlong(x))
#define POPC(x) ((uint)__popc(x))
#define CLZ(x) ((uint)__clz(x))
#define BREV(x) __brev(x)
#define NEXT_F(a, b) nextafterf((float)(a), (float)(b))
#define NEXT_D(a, b) nextafter((double)(a), (double)(b))
#define WV_INF __longlong_as_double(0x7FF0000000000000ll)
#define GLOBAL_ATOMIC_PTR uint*
#define LOCAL_ATOMIC_PTR uint*
#define ATOMIC_CAS(p, c, v) atomicCAS(p, c, v)
"""
"""The lines of the CUDA and HIP headers that are spelled alike: integer typedefs, the WV_FN helper
qualifier, bit casts, bit intrinsics and the atomic macros."""

HEADER = (
    r"""
/* no #include: NVRTC compiles this without a CUDA toolkit's headers (f16 by inline PTX cvt) */
#pragma nv_diag_suppress 177  /* helpers a kernel does not call */
#pragma nv_diag_suppress 550  /* registers a kernel sets but never reads */
#pragma nv_diag_suppress 186  /* comparisons of an unsigned register with an immediate 0 */
"""
    + CUDA_SHARED
    + r"""WV_FN uint D2H_BITS(double x) { unsigned short h; asm("cvt.rn.f16.f64 %0, %1;" : "=h"(h) : "d"(x)); return h; }
WV_FN float H2F_BITS(uint u) { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"((unsigned short)u)); return f; }
/* wave primitives: the active mask, a shuffle among active lanes, votes */
typedef uint wv_mask;
#define WV_LANES 32
WV_FN uint wv_entry() {  /* the warp's threads that exist: all 32 but in a block's last partial warp */
    uint lin = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    uint n = blockDim.x * blockDim.y * blockDim.z - (lin & ~31u);
    return n >= 32u ? 0xFFFFFFFFu : (1u << n) - 1u;
}
#define WV_ENTRY() wv_entry()
#define WV_SHFL(m, x, i) __shfl_sync(m, x, i)
#define WV_SHFL_XOR(m, x, k) __shfl_xor_sync(m, x, k)
#define WV_FULL(m) ((m) == 0xFFFFFFFFu)
#define WV_BALLOT(m, p) __ballot_sync(m, p)
#define WV_ANY(m, p) __any_sync(m, p)
#define WV_ALL(m, p) __all_sync(m, p)
WV_FN uint wv_lane() { return (threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) & 31u; }
"""
)

# Reductions and the prefix sum over the active lanes, shared by CUDA, HIP and Metal through the
# WV_* primitives: one function per operator of isa.semantics.REDUCTIONS, its identity taken from
# the table and its combine from the C rendering of the ALU row computing the same operator (so
# wave.reduce.min.f32 combines as min.f32 does: NaN skipped, -0 below +0, canonical NaN). When
# the whole wave is active (WV_FULL) a butterfly over WV_SHFL_XOR (log2 W steps) and a
# Kogge-Stone scan do it; otherwise a loop visits the lanes of the mask, since a lane that is not
# running has no value to give. Every operator is associative and commutative, so both paths
# give the emulator's bits. Every lane of the mask executes every WV_SHFL/WV_SHFL_XOR call: a
# `*_sync` primitive whose mask names a lane that does not reach the same call is undefined
# under independent thread scheduling (CUDA), and a shuffle reads 0 from a lane the exec mask
# has switched off (AMD) or undefined bits (Metal). So a condition around a call may depend only
# on the mask and loop counters (uniform); a lane-dependent choice (the scan's "lanes below me")
# selects after the call. tests/backends/test_wave_helpers.py checks this statically and by
# running the helpers under a model of independent thread scheduling.
_LOOP = """
WV_FN uint {fn}(wv_mask m, uint x) {{
    if (WV_FULL(m)) {{
        for (int k = WV_LANES / 2; k > 0; k >>= 1) {{ uint a = x, b = WV_SHFL_XOR(m, x, k); x = {combine}; }}
        return x;
    }}
    uint acc = 0x{identity:x}u;
    for (int i = 0; i < WV_LANES; i++)
        if ((m >> i) & 1u) {{ uint a = acc, b = WV_SHFL(m, x, i); acc = {combine}; }}
    return acc;
}}
"""
_SCAN = """
WV_FN uint {fn}(wv_mask m, uint x, uint me) {{
    if (WV_FULL(m)) {{  /* inclusive Kogge-Stone scan, then each lane takes its left neighbour's */
        uint s = x;
        for (uint k = 1u; k < (uint)WV_LANES; k <<= 1) {{
            uint b = WV_SHFL(m, s, me >= k ? me - k : me);
            if (me >= k) {{ uint a = s; s = {combine}; }}
        }}
        uint left = WV_SHFL(m, s, me > 0u ? me - 1u : 0u);
        return me > 0u ? left : 0x{identity:x}u;
    }}
    uint acc = 0x{identity:x}u;
    for (int i = 0; i < WV_LANES; i++)
        if ((m >> i) & 1u) {{  /* every lane of m shuffles; the lanes above i take the value */
            uint b = WV_SHFL(m, x, i);
            if ((uint)i < me) {{ uint a = acc; acc = {combine}; }}
        }}
    return acc;
}}
"""


def loop_name(red: sem.Reduction, prefix: bool = False) -> str:
    return f"wv_{'prefix' if prefix else 'reduce'}_{red.op.value}_{red.dtype.text}"


def lane_loops(exprs: dict[str, str]) -> str:
    """The reduction and scan functions for every REDUCTIONS entry, combining with exprs' templates."""
    out = []
    prefix = {(r.variant, r.dtype) for r in ROWS if r.op is Op.PREFIX}
    for key, red in sem.REDUCTIONS.items():
        comb = combine(exprs, red.op, red.dtype, "a", "b")
        out.append(_LOOP.format(fn=loop_name(red), identity=red.identity, combine=comb))
        if key in prefix:
            out.append(_SCAN.format(fn=loop_name(red, True), identity=red.identity, combine=comb))
    return "".join(out)


LOOPS = lane_loops(EXPR)

_SREG: dict[int, str] = {
    SRegId.TID_X: "threadIdx.x",
    SRegId.TID_Y: "threadIdx.y",
    SRegId.TID_Z: "threadIdx.z",
    SRegId.CTAID_X: "blockIdx.x",
    SRegId.CTAID_Y: "blockIdx.y",
    SRegId.CTAID_Z: "blockIdx.z",
    SRegId.NTID_X: "blockDim.x",
    SRegId.NTID_Y: "blockDim.y",
    SRegId.NTID_Z: "blockDim.z",
    SRegId.NCTAID_X: "gridDim.x",
    SRegId.NCTAID_Y: "gridDim.y",
    SRegId.NCTAID_Z: "gridDim.z",
}
_ATOM = {
    AtomOp.ADD: "atomicAdd",
    AtomOp.SUB: "atomicSub",
    AtomOp.MIN: "atomicMin",
    AtomOp.MAX: "atomicMax",
    AtomOp.AND: "atomicAnd",
    AtomOp.OR: "atomicOr",
    AtomOp.XOR: "atomicXor",
    AtomOp.EXCH: "atomicExch",
}
_OPS = {ReduceOp.ADD: 0, ReduceOp.MIN: 1, ReduceOp.MAX: 2, ReduceOp.AND: 3, ReduceOp.OR: 4, ReduceOp.XOR: 5}


class LaneLoops(Dialect):
    """Wave operations over the WV_* primitives (WV_ENTRY, WV_BALLOT, WV_SHFL, WV_ANY, WV_ALL) and
    the lane_loops helpers, on the active set the renderer tracks (explicit_mask): CUDA, HIP and
    Metal, whose own notion of the running lanes (`__activemask()` under independent thread
    scheduling) is not WAVE's active set."""

    explicit_mask = True

    def shuffle(self, x: str, src: str) -> str:
        return f"WV_SHFL({self.mask}, {x}, {src})"

    def reduce(self, spec: InstrSpec, x: str) -> str:
        return f"{loop_name(sem.reduction_of(spec))}({self.mask}, {x})"

    def group_reduce(self, op: ReduceOp, ctype: str, x: str) -> str:
        raise AssertionError("lane loops reduce on raw bits (reduce)")

    def prefix_add(self, x: str) -> str:
        red = sem.REDUCTIONS[(ReduceOp.ADD, DataType.U32)]
        return f"{loop_name(red, True)}({self.mask}, {x}, {self.lane})"

    def vote(self, op: Op, p: str) -> str:
        if op is Op.BALLOT:
            return f"(uint)WV_BALLOT({self.mask}, {p})"
        return f"(bool)WV_{op.name}({self.mask}, {p})"

    def loops(self) -> str:
        return lane_loops({**EXPR, **self.exprs})


class CUDA(LaneLoops, GenericPointers):
    vector_types = {2: "uint2", 4: "uint4"}  # the built-in vector types: one 64- or 128-bit access
    name = "cuda"
    # nvcc and NVRTC contract a * b + c into an fma across statements by default (-fmad=true);
    # the _rn intrinsics are never contracted, so results stay those of separate roundings.
    exprs = {
        "add.f32": "wv_c32(__fadd_rn(F({a}), F({b})))",
        "sub.f32": "wv_c32(__fsub_rn(F({a}), F({b})))",
        "mul.f32": "wv_c32(__fmul_rn(F({a}), F({b})))",
        "add.f64": "wv_c64(__dadd_rn(D({a}), D({b})))",
        "sub.f64": "wv_c64(__dsub_rn(D({a}), D({b})))",
        "mul.f64": "wv_c64(__dmul_rn(D({a}), D({b})))",
    }

    def prelude(self) -> str:
        return HEADER + HELPERS + self.loops()  # the loops call the helpers' wv_fmin/wv_fmax

    def check_width(self, wave_width: int) -> None:
        if wave_width != 32:
            raise WaveError(f"cuda: NVIDIA warps have 32 lanes; cannot render for a wave width of {wave_width}")

    def kernel_open(self, k: Kernel, params: list[str], wave_width: int) -> str:
        self.check_width(wave_width)
        args = ["uchar* __restrict__ mem", "const uchar* __restrict__ cmem", *(f"uint {p}" for p in params)]
        bounds = ""
        if k.workgroup_size is not None:
            bounds = f"__launch_bounds__({k.workgroup_size[0] * k.workgroup_size[1] * k.workgroup_size[2]}) "
        return f'extern "C" __global__ void {bounds}{k.name}({", ".join(args)}) {{'

    def sreg(self, sid: int, wave_width: int) -> str:
        w = wave_width
        if sid == SRegId.WAVE_WIDTH:
            return f"{w}u"
        if sid == SRegId.LID:
            return "wv_lane()"
        if sid == SRegId.WID:
            return f"((threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) / {w}u)"
        if sid == SRegId.NWAVES:
            return f"((blockDim.x * blockDim.y * blockDim.z + {w - 1}u) / {w}u)"
        return f"(uint){_SREG[sid]}"

    lane = "wv_lane()"

    def int_atomic(self, op: AtomOp, ctype: str, p: str, args: list[str]) -> str:
        if op is AtomOp.CAS:
            return f"atomicCAS({p}, ({ctype}){args[0]}, ({ctype}){args[1]})"
        if op is AtomOp.SUB:
            return f"atomicSub((uint*){p}, (uint){args[0]})"
        return f"{_ATOM[op]}({p}, ({ctype}){args[0]})"

    def trap(self, why: str) -> str | None:
        return f"__builtin_trap(); /* {why} */"

    def barrier(self) -> str:
        return "__syncthreads();"

    def fence(self, scope: Scope) -> str:
        return "__threadfence();" if scope is Scope.DEVICE else "__threadfence_block();"

    def local_decl(self, nbytes: int) -> str:
        words = (nbytes + 7) // 8
        return f"__shared__ ulong lmem_[{words}]; uchar* lmem = (uchar*)lmem_;"
