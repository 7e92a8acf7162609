// wave.hpp: the WAVE kernel language's builtins, declared for C++ compilers and editors.
//
// WAVE compiles the kernels itself (wave compile k.cpp, wg.load_kernels("k.cpp")); this header
// only lets g++/clang++ check them (`g++ -std=c++20 -fsyntax-only -Wno-attributes=wave:: -I<dir>`)
// and gives editors completion. Nothing here is ever linked: the functions have no definitions.
//
//   [[wave::kernel]] void vector_add(const float* a, const float* b, float* out, uint32_t n) {
//       uint32_t i = wave::global_id(0);
//       if (i < n) out[i] = a[i] + b[i];
//   }
//
// The ids are uint32_t; atomics take an element's address (&a[i], v) or (a, i, v) and return the
// old value; fence takes a wave::scope. `__kernel`/`__global__` mark kernels and `__shared__`
// declares workgroup-shared arrays (empty macros here, as are OpenCL's `__global` and `__private`). Define WAVE_USING_NAMESPACE before
// including it (or with -D) to use the builtins unqualified without `using namespace wave;`.
#ifndef WAVE_HPP
#define WAVE_HPP

#include <cstdint>

#ifndef __CUDACC__
#ifndef __kernel
#define __kernel
#endif
#define __global__
#define __device__
#define __shared__
#define __forceinline__ inline
float rsqrtf(float x);  // CUDA's device function: wave::rsqrt(x)
#endif
#ifndef __global
#define __global
#endif
#ifndef __private
#define __private
#endif

namespace wave {

#if defined(__FLT16_MAX__) || defined(__clang__)
using half = _Float16;  // IEEE binary16; WAVE rounds after every half operation
#else
struct half {
    half() = default;
    half(float);
    operator float() const;
};
#endif

// ---- ids and sizes (axis 0, 1 or 2: a constant) ----
uint32_t thread_id(uint32_t axis = 0);
uint32_t workgroup_id(uint32_t axis = 0);
uint32_t workgroup_size(uint32_t axis = 0);
uint32_t grid_size(uint32_t axis = 0);
uint32_t global_id(uint32_t axis = 0);    // workgroup_id * workgroup_size + thread_id
uint32_t global_size(uint32_t axis = 0);  // grid_size * workgroup_size
uint32_t lane_id();
uint32_t wave_id();
uint32_t wave_width();

// ---- synchronisation ----
enum class scope { wave, workgroup, device };
void barrier();
void fence(scope s = scope::device);

// ---- workgroup-shared arrays: auto s = wave::local_array<float, 256>(); ----
template <class T, uint32_t N>
T* local_array();

// ---- atomics: the element's old value ----
#define WAVE_ATOMIC(NAME)                               \
    int32_t NAME(int32_t* p, int32_t v);                \
    uint32_t NAME(uint32_t* p, uint32_t v);             \
    float NAME(float* p, float v);                      \
    int32_t NAME(int32_t* a, uint32_t i, int32_t v);    \
    uint32_t NAME(uint32_t* a, uint32_t i, uint32_t v); \
    float NAME(float* a, uint32_t i, float v);
WAVE_ATOMIC(atomic_add)
WAVE_ATOMIC(atomic_sub)
WAVE_ATOMIC(atomic_min)
WAVE_ATOMIC(atomic_max)
WAVE_ATOMIC(atomic_and)
WAVE_ATOMIC(atomic_or)
WAVE_ATOMIC(atomic_xor)
WAVE_ATOMIC(atomic_exchange)
#undef WAVE_ATOMIC
int32_t atomic_cas(int32_t* p, int32_t expected, int32_t desired);
uint32_t atomic_cas(uint32_t* p, uint32_t expected, uint32_t desired);
float atomic_cas(float* p, float expected, float desired);
int32_t atomic_cas(int32_t* a, uint32_t i, int32_t expected, int32_t desired);
uint32_t atomic_cas(uint32_t* a, uint32_t i, uint32_t expected, uint32_t desired);
float atomic_cas(float* a, uint32_t i, float expected, float desired);

// ---- wave operations (int32_t, uint32_t, float; and/or/prefix: integers) ----
#define WAVE_OP1(NAME)      \
    int32_t NAME(int32_t);  \
    uint32_t NAME(uint32_t); \
    float NAME(float);
#define WAVE_OP2(NAME)                 \
    int32_t NAME(int32_t, uint32_t);   \
    uint32_t NAME(uint32_t, uint32_t); \
    float NAME(float, uint32_t);
WAVE_OP1(wave_reduce_add)
WAVE_OP1(wave_reduce_min)
WAVE_OP1(wave_reduce_max)
WAVE_OP1(wave_reduce_and)
WAVE_OP1(wave_reduce_or)
WAVE_OP1(wave_prefix_add)
WAVE_OP2(wave_shuffle)
WAVE_OP2(wave_shuffle_up)
WAVE_OP2(wave_shuffle_down)
WAVE_OP2(wave_shuffle_xor)
WAVE_OP2(wave_broadcast)
#undef WAVE_OP1
#undef WAVE_OP2
uint32_t wave_ballot(bool c);
bool wave_any(bool c);
bool wave_all(bool c);

// ---- math (float; sqrt, floor and ceil also double: the device has no other double math) ----
#define WAVE_MATH(NAME) \
    float NAME(float);  \
    double NAME(double);
WAVE_MATH(sqrt)
WAVE_MATH(rsqrt)
WAVE_MATH(sin)
WAVE_MATH(cos)
WAVE_MATH(exp)
WAVE_MATH(exp2)
WAVE_MATH(log)
WAVE_MATH(log2)
WAVE_MATH(floor)
WAVE_MATH(ceil)
#undef WAVE_MATH
float fma(float a, float b, float c);
double fma(double a, double b, double c);
int32_t abs(int32_t x);
float abs(float x);
double abs(double x);
half abs(half x);
template <class T>
T min(T a, T b);
template <class T>
T max(T a, T b);

// ---- more math: float and double like <cmath> (round: ties away from zero, as roundf; rint and
// nearbyint: ties to even). The <cmath>/<bit> spellings work too: powf, std::pow, roundf,
// std::round, truncf, rintf, std::clamp, std::isnan, __builtin_popcount, std::popcount,
// __builtin_clz, std::countl_zero, __builtin_ctz, std::countr_zero, __builtin_powif. ----
float pow(float x, float y);
double pow(double x, double y);
#define WAVE_MATH(NAME) \
    float NAME(float);  \
    double NAME(double);
WAVE_MATH(round)
WAVE_MATH(trunc)
WAVE_MATH(rint)
WAVE_MATH(nearbyint)
WAVE_MATH(round_half_up)  // JavaScript's Math.round: ties toward +infinity
#undef WAVE_MATH
bool isnan(float x);
bool isnan(double x);
template <class T>
T clamp(T x, T lo, T hi);  // min(max(x, lo), hi) with the device's min and max
template <class T>
T sign(T x);  // 1, -1, or x itself (a zero keeps its sign, a NaN stays NaN)
float signum(float x);  // Rust's f32::signum: +-1 with x's sign, zeros included; NaN for NaN
template <class T>
T min_first(T a, T b);  // b < a ? b : a (std::min's meaning: NaN and -0.0 by argument order)
template <class T>
T max_first(T a, T b);  // a < b ? b : a (std::max's meaning)
template <class T>
T clamp_keep_nan(T x, T lo, T hi);  // x < lo ? lo : hi < x ? hi : x (std::clamp's meaning)
// bit counts of the 32 bits (clz(0) = ctz(0) = 32: defined here, unlike __builtin_clz(0))
int popcount(uint32_t x);
int clz(uint32_t x);
int ctz(uint32_t x);

// ---- conversions by the kernel language's names (static_cast<T>(x) is the same) ----
template <class T>
int32_t i32(T x);
template <class T>
uint32_t u32(T x);
template <class T>
float f32(T x);
template <class T>
half f16(T x);
template <class T>
double f64(T x);

// ---- constants (float) ----
inline constexpr float pi = 3.14159265358979323846f;
inline constexpr float e = 2.71828182845904523536f;
inline constexpr float tau = 6.28318530717958647692f;
inline constexpr float inf = __builtin_huge_valf();
inline constexpr float nan = __builtin_nanf("");

}  // namespace wave

using wave::half;

#ifdef WAVE_USING_NAMESPACE
using namespace wave;
#endif

#endif  // WAVE_HPP
