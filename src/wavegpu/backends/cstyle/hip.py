"""HIP dialect (for hipcc / clang on AMD GPUs): waves of 32 (RDNA) or 64 (CDNA, GCN), the
execution mask through `__ballot(1)`, `__shfl`, and the CUDA dialect's loops and spellings."""

from __future__ import annotations

from ...errors import WaveError
from ...wbin.program import Kernel
from .cuda import CUDA, LOOPS
from .prelude import HELPERS

HEADER = r"""
#include <hip/hip_runtime.h>
/* clang contracts a * b + c into an fma across statements for HIP unless told not to */
#pragma clang fp contract(off)
/* generated code: helpers a kernel does not call, registers set but never read, p1 != p1 */
#pragma clang diagnostic ignored "-Wunused-function"
#pragma clang diagnostic ignored "-Wunused-variable"
#pragma clang diagnostic ignored "-Wunused-but-set-variable"
#pragma clang diagnostic ignored "-Wtautological-compare"
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
WV_FN uint D2H_BITS(double x) { return (uint)__builtin_bit_cast(unsigned short, (_Float16)x); }
WV_FN float H2F_BITS(uint u) { return (float)__builtin_bit_cast(_Float16, (unsigned short)u); }
/* wave primitives: AMD lanes run in lockstep under the exec mask, which __ballot(1) reads */
typedef unsigned long long wv_mask;
#define WV_LANES 64
#define WV_ACTIVE() __ballot(1)
#define WV_SHFL(m, x, i) __shfl(x, (int)(i))
#define WV_BALLOT(m, p) __ballot(p)
#define WV_ANY(m, p) __any(p)
#define WV_ALL(m, p) __all(p)
WV_FN uint wv_lane() { return (uint)__lane_id(); }
"""


class HIP(CUDA):
    name = "hip"
    exprs: dict[str, str] = {}  # plain operators: the pragma above keeps them uncontracted

    def prelude(self) -> str:
        return HEADER + HELPERS + LOOPS

    def check_width(self, wave_width: int) -> None:
        if wave_width not in (32, 64):
            raise WaveError(f"hip: AMD waves have 32 or 64 lanes; cannot render for a wave width of {wave_width}")

    def kernel_open(self, k: Kernel, params: list[str], wave_width: int) -> str:
        # the kernel is only right on hardware whose wave is as wide as the one it was rendered for
        guard = (
            f"#if defined(__AMDGCN_WAVEFRONT_SIZE) && __AMDGCN_WAVEFRONT_SIZE != {wave_width}\n"
            f'#error "{k.name} was translated for waves of {wave_width} lanes; compile for a target with that '
            f'wave size (-mwavefrontsize64 / -mno-wavefrontsize64)"\n#endif\n'
        )
        return guard + super().kernel_open(k, params, wave_width)
