// out[i] = a[i] + b[i] for i < n.
// One + of two f32 values, stored into a Float32Array: computed in f32 (exactly what the f64 sum
// rounded to f32 gives).

/** @kernel */
export function vector_add(a: Float32Array, b: Float32Array, out: Float32Array, n: u32): void {
  const i = wave.global_id(0);
  if (i < n) {
    out[i] = a[i] + b[i];
  }
}
