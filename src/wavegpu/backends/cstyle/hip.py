"""HIP dialect (for hipcc / clang on AMD GPUs), as the backends document maps it: uint32_t
registers, `__uint_as_float`, `extern __shared__` local memory sized at launch, `__shfl*`,
butterfly reductions over `__shfl_xor`, and `warpSize` wherever the wave width appears, so one
source runs on wave32 (RDNA) and wave64 (CDNA, GCN) hardware with the results the emulator
gives at that width. WAVE's active set is tracked explicitly (lift.MaskPlan), from `__ballot(1)`
at entry, rather than read from the exec mask where a wave operation runs."""

from __future__ import annotations

from ...errors import WaveError
from ...isa.registers import SRegId
from ...wbin.program import Kernel
from .cuda import CUDA, CUDA_SHARED
from .prelude import HELPERS

HEADER = (
    r"""
#include <hip/hip_runtime.h>
/* clang contracts a * b + c into an fma across statements for HIP unless told not to */
#pragma clang fp contract(off)
/* generated code: helpers a kernel does not call, registers set but never read, p1 != p1 */
#pragma clang diagnostic ignored "-Wunused-function"
#pragma clang diagnostic ignored "-Wunused-variable"
#pragma clang diagnostic ignored "-Wunused-but-set-variable"
#pragma clang diagnostic ignored "-Wtautological-compare"
"""
    + CUDA_SHARED
    + r"""WV_FN uint D2H_BITS(double x) { return (uint)__builtin_bit_cast(unsigned short, (_Float16)x); }
WV_FN float H2F_BITS(uint u) { return (float)__builtin_bit_cast(_Float16, (unsigned short)u); }
/* wave primitives on WAVE's active set, tracked by the kernel in a wv_mask: AMD lanes run in
   lockstep under the exec mask, which __ballot(1) reads at entry; ballots keep only the mask's lanes */
typedef unsigned long long wv_mask;
#define WV_LANES warpSize
#define WV_ENTRY() __ballot(1)
#define WV_SHFL(m, x, i) __shfl(x, (int)(i))
#define WV_SHFL_XOR(m, x, k) __shfl_xor(x, k)
#define WV_FULL(m) ((m) == (warpSize == 64 ? ~0ull : 0xFFFFFFFFull))
#define WV_BALLOT(m, p) (__ballot(p) & (m))
#define WV_ANY(m, p) (WV_BALLOT(m, p) != 0ull)
#define WV_ALL(m, p) (WV_BALLOT(m, p) == (m))
WV_FN uint wv_lane() { return (uint)__lane_id(); }
"""
)


class HIP(CUDA):
    name = "hip"
    exprs: dict[str, str] = {}  # plain operators: the pragma above keeps them uncontracted
    width_at_run_time = True

    def prelude(self) -> str:
        return HEADER + HELPERS + self.loops()

    def check_width(self, wave_width: int) -> None:
        if wave_width not in (32, 64):
            raise WaveError(f"hip: AMD waves have 32 or 64 lanes; cannot render for a wave width of {wave_width}")

    def width(self, wave_width: int) -> str:
        return "(uint)warpSize"

    def sreg(self, sid: int, wave_width: int) -> str:
        if sid == SRegId.WAVE_WIDTH:
            return "(uint)warpSize"
        if sid == SRegId.WID:
            return "((threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) / (uint)warpSize)"
        if sid == SRegId.NWAVES:
            return "((blockDim.x * blockDim.y * blockDim.z + (uint)warpSize - 1u) / (uint)warpSize)"
        return super().sreg(sid, wave_width)

    def kernel_open(self, k: Kernel, params: list[str], wave_width: int) -> str:
        head = super().kernel_open(k, params, wave_width)  # checks the width: 32 or 64, the same source
        if k.local_memory:  # the dynamic shared memory the launch must give
            head = f"/* {k.name}: launch with {k.local_memory} bytes of dynamic shared memory */\n" + head
        return head

    def local_decl(self, nbytes: int) -> str:
        return "extern __shared__ __attribute__((aligned(16))) uchar shared_mem[]; uchar* lmem = shared_mem;"
