// f64 and f16 arithmetic: out_d = d * d + 1/3 in f64 (JavaScript's own numbers);
// out_h = h * h + h in f16, rounded after each operation (Math.f16round, then the Float16Array store).

/** @kernel */
export function precision(h: Float16Array, d: Float64Array, out_h: Float16Array, out_d: Float64Array, n: u32): void {
  const i = wave.global_id(0);
  if (i < n) {
    out_d[i] = d[i] * d[i] + 1.0 / 3.0;
    out_h[i] = Math.f16round(h[i] * h[i]) + h[i];
  }
}
