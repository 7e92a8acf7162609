// wave.d.ts: the WAVE kernel language's declarations for TypeScript (docs/compiler.md, "The kernel
// language in TypeScript"). With it, `tsc --noEmit --strict --lib esnext wave.d.ts kernel.ts`
// type-checks a kernel, and an editor completes the builtins. It declares globals only (no module),
// so a kernel needs no import: `wave.global_id(0)`, `Math.fround(x)`, or a bare `thread_id()`.
//
// The scalar aliases are plain numbers to TypeScript; to the WAVE compiler a parameter or a
// variable declared with one holds that machine type, and an assignment to such a variable converts
// as a store into a typed array of that type does (f32: Math.fround, i32: ToInt32, u32: ToUint32).

type f32 = number;
type f64 = number;
type f16 = number;
type i32 = number;
type u32 = number;

/** An axis of the launch grid. */
type WaveAxis = 0 | 1 | 2;
/** The scope of a memory fence. */
type WaveScope = "wave" | "workgroup" | "device";
/** Arrays a kernel indexes: typed arrays (parameters and local arrays) and the `f32[]` spelling. */
type WaveArray =
  | Float32Array
  | Float64Array
  | Float16Array
  | Int32Array
  | Uint32Array
  | Int16Array
  | Uint16Array
  | Int8Array
  | Uint8Array
  | number[];
/** Arrays atomics work on (i32, u32; f32 for add, exchange and cas). */
type WaveAtomicArray = Int32Array | Uint32Array | Float32Array | number[];

declare namespace wave {
  /** The thread's index within its workgroup along an axis (default 0). */
  function thread_id(axis?: WaveAxis): i32;
  /** The workgroup's index within the grid. */
  function workgroup_id(axis?: WaveAxis): i32;
  /** The number of threads of a workgroup along an axis. */
  function workgroup_size(axis?: WaveAxis): i32;
  /** The number of workgroups of the grid along an axis. */
  function grid_size(axis?: WaveAxis): i32;
  /** workgroup_id * workgroup_size + thread_id. */
  function global_id(axis?: WaveAxis): i32;
  /** grid_size * workgroup_size: the stride of a grid-stride loop. */
  function global_size(axis?: WaveAxis): i32;
  function lane_id(): i32;
  function wave_id(): i32;
  function wave_width(): i32;

  /** Waits for every thread of the workgroup (local memory writes become visible). */
  function barrier(): void;
  function fence(scope?: WaveScope): void;
  /** Workgroup-shared memory: `const buf = wave.local_array(Float32Array, 256)` (count constant). */
  function local_array<T extends WaveArray>(type: { new (length: number): T }, count: number): T;

  /** Atomics: each returns the element's old value. */
  function atomic_add(array: WaveAtomicArray, index: number, value: number): number;
  function atomic_sub(array: WaveAtomicArray, index: number, value: number): number;
  function atomic_min(array: WaveAtomicArray, index: number, value: number): number;
  function atomic_max(array: WaveAtomicArray, index: number, value: number): number;
  function atomic_and(array: WaveAtomicArray, index: number, value: number): number;
  function atomic_or(array: WaveAtomicArray, index: number, value: number): number;
  function atomic_xor(array: WaveAtomicArray, index: number, value: number): number;
  function atomic_exchange(array: WaveAtomicArray, index: number, value: number): number;
  function atomic_cas(array: WaveAtomicArray, index: number, expected: number, desired: number): number;

  /** Wave operations on i32, u32 and f32 values. */
  function wave_reduce_add(x: number): number;
  function wave_reduce_min(x: number): number;
  function wave_reduce_max(x: number): number;
  function wave_reduce_and(x: number): number;
  function wave_reduce_or(x: number): number;
  /** The exclusive prefix sum over the wave's lanes. */
  function wave_prefix_add(x: number): number;
  function wave_shuffle(x: number, lane: number): number;
  function wave_shuffle_up(x: number, delta: number): number;
  function wave_shuffle_down(x: number, delta: number): number;
  function wave_shuffle_xor(x: number, mask: number): number;
  function wave_broadcast(x: number, lane: number): number;
  function wave_ballot(c: boolean | number): u32;
  function wave_any(c: boolean | number): boolean;
  function wave_all(c: boolean | number): boolean;

  /** The device's f32 math: the argument is rounded to f32 first (Math.fround). */
  function sqrt(x: number): f32;
  function rsqrt(x: number): f32;
  function sin(x: number): f32;
  function cos(x: number): f32;
  function exp(x: number): f32;
  function exp2(x: number): f32;
  function log(x: number): f32;
  function log2(x: number): f32;
  function floor(x: number): f32;
  function ceil(x: number): f32;
  /** a * b + c in f32 with one rounding. */
  function fma(a: number, b: number, c: number): f32;
  function abs(x: number): number;
  function min(...xs: number[]): number;
  function max(...xs: number[]): number;
  /** min(max(x, lo), hi) in the arguments' common type. */
  function clamp(x: number, lo: number, hi: number): number;
  /** 1, -1, or x itself (a zero keeps its sign, NaN stays NaN): Math.sign. */
  function sign(x: number): number;
  /** Number.isNaN(x). */
  function isnan(x: number): boolean;
  /** The device's f32 power (the arguments are rounded to f32 first). */
  function pow(x: number, y: number): f32;
  /** Rounding to an integral value of the argument rounded to f32: toward zero (Math.trunc), ties
   * to even, ties away from zero, ties toward +Infinity (Math.round). */
  function trunc(x: number): f32;
  function round_even(x: number): f32;
  function round_away(x: number): f32;
  function round_half_up(x: number): f32;
  /** Rust's f32::signum: 1 or -1 with x's sign, zeros included; NaN for NaN. */
  function signum(x: number): f32;
  /** b < a ? b : a and a < b ? b : a (Python's min/max, C++'s std::min/std::max: NaN and -0 by
   * argument order; Math.min/Math.max propagate NaN instead). */
  function min_first(a: number, b: number): number;
  function max_first(a: number, b: number): number;
  /** x < lo ? lo : hi < x ? hi : x (Rust's f32::clamp, C++'s std::clamp: a NaN x stays NaN). */
  function clamp_keep_nan(x: number, lo: number, hi: number): number;
  /** Bit counts of an i32 or u32: set bits, leading zeros (Math.clz32), trailing zeros. */
  function popcount(x: number): i32;
  function clz(x: number): i32;
  function ctz(x: number): i32;

  /** Conversions: i32 = x | 0, u32 = x >>> 0, f32 = Math.fround, f16 = Math.f16round. */
  function i32(x: number): i32;
  function u32(x: number): u32;
  function f32(x: number): f32;
  function f16(x: number): f16;
  function f64(x: number): f64;
  function bool(x: boolean | number): boolean;
}

// The same builtins by their bare names (the Rust toolchain's kernels call `thread_id()`).
declare const thread_id: typeof wave.thread_id;
declare const workgroup_id: typeof wave.workgroup_id;
declare const workgroup_size: typeof wave.workgroup_size;
declare const grid_size: typeof wave.grid_size;
declare const global_id: typeof wave.global_id;
declare const global_size: typeof wave.global_size;
declare const lane_id: typeof wave.lane_id;
declare const wave_id: typeof wave.wave_id;
declare const wave_width: typeof wave.wave_width;
declare const barrier: typeof wave.barrier;
declare const fence: typeof wave.fence;
declare const local_array: typeof wave.local_array;
declare const atomic_add: typeof wave.atomic_add;
declare const atomic_sub: typeof wave.atomic_sub;
declare const atomic_min: typeof wave.atomic_min;
declare const atomic_max: typeof wave.atomic_max;
declare const atomic_and: typeof wave.atomic_and;
declare const atomic_or: typeof wave.atomic_or;
declare const atomic_xor: typeof wave.atomic_xor;
declare const atomic_exchange: typeof wave.atomic_exchange;
declare const atomic_cas: typeof wave.atomic_cas;
declare const wave_reduce_add: typeof wave.wave_reduce_add;
declare const wave_reduce_min: typeof wave.wave_reduce_min;
declare const wave_reduce_max: typeof wave.wave_reduce_max;
declare const wave_reduce_and: typeof wave.wave_reduce_and;
declare const wave_reduce_or: typeof wave.wave_reduce_or;
declare const wave_prefix_add: typeof wave.wave_prefix_add;
declare const wave_shuffle: typeof wave.wave_shuffle;
declare const wave_shuffle_up: typeof wave.wave_shuffle_up;
declare const wave_shuffle_down: typeof wave.wave_shuffle_down;
declare const wave_shuffle_xor: typeof wave.wave_shuffle_xor;
declare const wave_broadcast: typeof wave.wave_broadcast;
declare const wave_ballot: typeof wave.wave_ballot;
declare const wave_any: typeof wave.wave_any;
declare const wave_all: typeof wave.wave_all;
declare const rsqrt: typeof wave.rsqrt;
declare const exp2: typeof wave.exp2;
declare const fma: typeof wave.fma;
