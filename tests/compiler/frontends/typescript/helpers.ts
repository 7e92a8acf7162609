// Helper functions and arrow functions, inlined: helpers calling helpers, early returns inside
// loops and branches, typed arrays passed by reference (their length read in the helper).

function sq(v: number): number {
  return v * v;
}

function norm2(a: number, b: number): number {
  return sq(a) + sq(b);
}

/** The first index at or after `from` whose element exceeds `limit`, or the array's length. */
function firstAbove(x: Float32Array, from: number, limit: number): number {
  for (let i = from; i < x.length; i++) {
    if (x[i] > limit) {
      return i;
    }
  }
  return x.length;
}

function clampTo(v: number, lo: number, hi: number): number {
  if (v < lo) {
    return lo;
  }
  if (v > hi) {
    return hi;
  }
  return v;
}

function sumWindow(x: Float32Array, start: number, n: number): f32 {
  let s: f32 = 0;
  let k: i32 = 0;
  while (k < n) {
    if (start + k >= x.length) {
      break;
    }
    s = Math.fround(s + x[start + k]);
    k++;
  }
  return s;
}

function bump(counts: Uint32Array, i: number): void {
  if (i >= counts.length) {
    return;
  }
  Atomics.add(counts, i, 1);
}

function isOdd(k: number): boolean {
  return k % 2 === 1;
}

/** @kernel @workgroup 128 */
export function helpers(
  x: Float32Array,
  y: Float32Array,
  out: Float32Array,
  pos: Uint32Array,
  counts: Uint32Array,
  n: u32,
): void {
  const i = wave.global_id(0);
  if (i >= n) {
    return;
  }
  const scale = 0.5;
  const half = (v: number) => v * scale;
  const twice = (v: number): number => v + v;
  const r = Math.fround(norm2(x[i], y[i]));
  out[i] = Math.fround(clampTo(half(r), 0.25, 8) + sumWindow(x, i, 4)) + twice(1.5);
  pos[i] = firstAbove(x, i, 0.75);
  if (isOdd(i) && sq(x[i]) > 0.25) {
    bump(counts, i % 4);
  }
}

function total(s: Float32Array, n: number): number {
  let acc: f32 = 0;
  for (let k = 0; k < n; k++) {
    acc = Math.fround(acc + s[k]);
  }
  return acc;
}

/** A workgroup-shared array passed to a helper; an arrow function reading a captured array's length. */
/** @kernel @workgroup 8 */
export function tiles(x: Float32Array, o: Float32Array): void {
  const i = wave.thread_id(0);
  const tile = wave.local_array(Float32Array, 8);
  const lastOf = () => x[x.length - 1];
  tile[i] = x[i];
  wave.barrier();
  o[i] = Math.fround(total(tile, 8) + lastOf());
}
