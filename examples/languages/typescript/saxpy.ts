// y[i] = alpha * x[i] + y[i] for i < n (a multiply, then an add: no fused multiply-add).
// JavaScript computes alpha * x[i] + y[i] in f64 and rounds once; Math.fround rounds the product
// to f32 first, as an f32 kernel does. Each step is one f32 operation.

/** @kernel */
export function saxpy(alpha: f32, x: Float32Array, y: Float32Array, n: u32): void {
  const i = wave.global_id(0);
  if (i < n) {
    y[i] = Math.fround(alpha * x[i]) + y[i];
  }
}
