// One thread per row: y = exp(x - max(x)) / sum(exp(x - max(x))), in f32.
// wave.exp is the device's f32 exponential (its argument rounded to f32: here one f32 subtract).

/** @kernel */
export function softmax_rows(x: Float32Array, y: Float32Array, rows: u32, cols: u32): void {
  const r = wave.global_id(0);
  if (r < rows) {
    const base = r * cols;
    let m = x[base];
    for (let j = 1; j < cols; j++) {
      m = Math.max(m, x[base + j]);
    }
    let s: f32 = 0;
    for (let j = 0; j < cols; j++) {
      const e = wave.exp(x[base + j] - m);
      y[base + j] = e;
      s = s + e;
    }
    for (let j = 0; j < cols; j++) {
      y[base + j] = y[base + j] / s;
    }
  }
}
