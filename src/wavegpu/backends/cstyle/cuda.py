"""CUDA C++ dialect (for nvcc and NVRTC): warps of 32, `__activemask()` for the active lanes,
`*_sync` warp intrinsics; wave operations without a single intrinsic loop over the active lanes."""

from __future__ import annotations

from ...errors import WaveError
from ...isa.registers import SReg
from ...isa.vocabulary import AtomOp, Op, ReduceOp, Scope
from ...wbin.program import Kernel
from .prelude import HELPERS
from .render import Dialect, GenericPointers

HEADER = r"""
#include <cuda_fp16.h>
#pragma nv_diag_suppress 177  /* helpers a kernel does not call */
#pragma nv_diag_suppress 550  /* registers a kernel sets but never reads */
#pragma nv_diag_suppress 186  /* comparisons of an unsigned register with an immediate 0 */
typedef unsigned int uint;
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
WV_FN uint D2H_BITS(double x) { return (uint)__half_as_ushort(__double2half(x)); }
WV_FN float H2F_BITS(uint u) { return __half2float(__ushort_as_half((unsigned short)u)); }
/* wave primitives: the active mask, a shuffle among active lanes, votes */
typedef uint wv_mask;
#define WV_LANES 32
#define WV_ACTIVE() __activemask()
#define WV_SHFL(m, x, i) __shfl_sync(m, x, i)
#define WV_SHFL_XOR(m, x, k) __shfl_xor_sync(m, x, k)
#define WV_FULL(m) ((m) == 0xFFFFFFFFu)
#define WV_BALLOT(m, p) __ballot_sync(m, p)
#define WV_ANY(m, p) __any_sync(m, p)
#define WV_ALL(m, p) __all_sync(m, p)
WV_FN uint wv_lane() { return (threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) & 31u; }
"""

# Reductions and the prefix sum over the active lanes (no single intrinsic keeps WAVE's NaN and
# identity rules), shared by CUDA, HIP and Metal through the WV_* primitives. When the whole wave
# is active (WV_FULL) a butterfly over WV_SHFL_XOR (log2 W steps) and a Kogge-Stone scan do it;
# otherwise a loop visits the active lanes, since a lane that is not running has no value to give.
# Every operator here is associative and commutative (wv_fmin/wv_fmax order -0 below +0 and skip
# NaNs), so both paths give the emulator's bits.
LOOPS = r"""
WV_FN uint wv_op_u(uint a, uint b, int op) {
    return op == 0 ? a + b : op == 1 ? (b < a ? b : a) : op == 2 ? (b > a ? b : a)
        : op == 3 ? (a & b) : op == 4 ? (a | b) : (a ^ b);
}
WV_FN uint wv_reduce_u(wv_mask m, uint x, int op) {
    if (WV_FULL(m)) {
        for (int k = WV_LANES / 2; k > 0; k >>= 1) x = wv_op_u(x, WV_SHFL_XOR(m, x, k), op);
        return x;
    }
    uint acc = op == 0 ? 0u : op == 1 ? 0xFFFFFFFFu : op == 3 ? 0xFFFFFFFFu : 0u;
    for (int i = 0; i < WV_LANES; i++)
        if ((m >> i) & 1u) acc = wv_op_u(acc, WV_SHFL(m, x, i), op);
    return acc;
}
WV_FN int wv_op_i(int a, int b, int op) { return op == 1 ? (b < a ? b : a) : (b > a ? b : a); }
WV_FN int wv_reduce_i(wv_mask m, int x, int op) {
    if (WV_FULL(m)) {
        for (int k = WV_LANES / 2; k > 0; k >>= 1) x = wv_op_i(x, WV_SHFL_XOR(m, x, k), op);
        return x;
    }
    int acc = op == 1 ? 0x7FFFFFFF : (int)0x80000000;
    for (int i = 0; i < WV_LANES; i++)
        if ((m >> i) & 1u) acc = wv_op_i(acc, WV_SHFL(m, x, i), op);
    return acc;
}
WV_FN float wv_op_f(float a, float b, int op) { return op == 1 ? wv_fmin(a, b) : wv_fmax(a, b); }
WV_FN float wv_reduce_f(wv_mask m, float x, int op) {
    if (WV_FULL(m)) {
        for (int k = WV_LANES / 2; k > 0; k >>= 1) x = wv_op_f(x, WV_SHFL_XOR(m, x, k), op);
        return x;
    }
    float acc = F(0x7FC00000u);
    for (int i = 0; i < WV_LANES; i++)
        if ((m >> i) & 1u) acc = wv_op_f(acc, WV_SHFL(m, x, i), op);
    return acc;
}
WV_FN uint wv_prefix(wv_mask m, uint x, uint me) {
    if (WV_FULL(m)) {  /* inclusive Kogge-Stone scan, then drop the lane's own value */
        uint s = x;
        for (uint k = 1u; k < (uint)WV_LANES; k <<= 1) {
            uint v = WV_SHFL(m, s, me >= k ? me - k : me);
            if (me >= k) s += v;
        }
        return s - x;
    }
    uint acc = 0u;
    for (int i = 0; i < WV_LANES; i++)
        if (((m >> i) & 1u) && (uint)i < me) acc += WV_SHFL(m, x, i);
    return acc;
}
"""

_SREG = {
    SReg.TID_X: "threadIdx.x",
    SReg.TID_Y: "threadIdx.y",
    SReg.TID_Z: "threadIdx.z",
    SReg.CTAID_X: "blockIdx.x",
    SReg.CTAID_Y: "blockIdx.y",
    SReg.CTAID_Z: "blockIdx.z",
    SReg.NTID_X: "blockDim.x",
    SReg.NTID_Y: "blockDim.y",
    SReg.NTID_Z: "blockDim.z",
    SReg.NCTAID_X: "gridDim.x",
    SReg.NCTAID_Y: "gridDim.y",
    SReg.NCTAID_Z: "gridDim.z",
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
    """Wave operations over the WV_* primitives (WV_ACTIVE, WV_SHFL, WV_BALLOT, WV_ANY, WV_ALL) and
    the LOOPS helpers: CUDA, HIP and Metal."""

    def shuffle(self, x: str, src: str) -> str:
        return f"WV_SHFL(WV_ACTIVE(), {x}, {src})"

    def group_reduce(self, op: ReduceOp, ctype: str, x: str) -> str:
        fn = {"float": "wv_reduce_f", "int": "wv_reduce_i", "uint": "wv_reduce_u"}[ctype]
        return f"{fn}(WV_ACTIVE(), {x}, {_OPS[op]})"

    def prefix_add(self, x: str) -> str:
        return f"wv_prefix(WV_ACTIVE(), {x}, {self.lane})"

    def vote(self, op: Op, p: str) -> str:
        if op is Op.BALLOT:
            return f"(uint)WV_BALLOT(WV_ACTIVE(), {p})"
        return f"(bool)WV_{op.name}(WV_ACTIVE(), {p})"


class CUDA(LaneLoops, GenericPointers):
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
        return HEADER + HELPERS + LOOPS  # the loops call the helpers' wv_fmin/wv_fmax

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
        if sid == SReg.WAVE_WIDTH:
            return f"{w}u"
        if sid == SReg.LID:
            return "wv_lane()"
        if sid == SReg.WID:
            return f"((threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) / {w}u)"
        if sid == SReg.NWAVES:
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
