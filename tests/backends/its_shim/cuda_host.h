// What the CUDA backend's output needs from the CUDA runtime, on the host, for its.h's model:
// the built-ins, positions (one workgroup at a time), atomics, fences. Written for wavegpu's tests.
#pragma once
#include "its.h"
#define __device__
#define __global__
#define __forceinline__ inline
#define __restrict__ __restrict
#define __launch_bounds__(n)
#define __shared__ static
struct dim3 { unsigned x, y, z; };
struct alignas(8) uint2 { unsigned x, y; };  // CUDA's vector types (the backend's .v2/.v4 accesses)
struct alignas(16) uint4 { unsigned x, y, z, w; };
inline thread_local dim3 threadIdx;
inline dim3 blockIdx, blockDim, gridDim;
template <class T, class S> static inline T its_bits(S s) { T t; memcpy(&t, &s, sizeof t); return t; }
#define __uint_as_float(x) its_bits<float>((unsigned)(x))
#define __float_as_uint(x) its_bits<unsigned>((float)(x))
#define __longlong_as_double(x) its_bits<double>((long long)(x))
#define __double_as_longlong(x) its_bits<long long>((double)(x))
#define __popc(x) __builtin_popcount(x)
#define __clz(x) ((x) ? __builtin_clz(x) : 32)
static inline unsigned __brev(unsigned v) {
    unsigned r = 0;
    for (int i = 0; i < 32; i++) r |= ((v >> i) & 1u) << (31 - i);
    return r;
}
#define __fadd_rn(a, b) ((float)(a) + (float)(b))
#define __fsub_rn(a, b) ((float)(a) - (float)(b))
#define __fmul_rn(a, b) ((float)(a) * (float)(b))
#define __dadd_rn(a, b) ((double)(a) + (double)(b))
#define __dsub_rn(a, b) ((double)(a) - (double)(b))
#define __dmul_rn(a, b) ((double)(a) * (double)(b))
#define __threadfence() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define __threadfence_block() __atomic_thread_fence(__ATOMIC_SEQ_CST)
template <class T> T atomicAdd(T* p, T v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
template <class T> T atomicSub(T* p, T v) { return __atomic_fetch_sub(p, v, __ATOMIC_SEQ_CST); }
template <class T> T atomicAnd(T* p, T v) { return __atomic_fetch_and(p, v, __ATOMIC_SEQ_CST); }
template <class T> T atomicOr(T* p, T v) { return __atomic_fetch_or(p, v, __ATOMIC_SEQ_CST); }
template <class T> T atomicXor(T* p, T v) { return __atomic_fetch_xor(p, v, __ATOMIC_SEQ_CST); }
template <class T> T atomicExch(T* p, T v) { return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST); }
template <class T> T atomicCAS(T* p, T c, T v) { __atomic_compare_exchange_n(p, &c, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); return c; }
template <class T> T atomicMin(T* p, T v) { T o = *p; while (!__atomic_compare_exchange_n(p, &o, o < v ? o : v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {} return o; }
template <class T> T atomicMax(T* p, T v) { T o = *p; while (!__atomic_compare_exchange_n(p, &o, o > v ? o : v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {} return o; }
