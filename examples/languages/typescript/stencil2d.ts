// A 4-point average on the interior of a w x h grid: out = (up + down + left + right) * 0.25.
// Every sum is rounded to f32 (f32 variables), as an f32 kernel computes it.

/** @kernel */
export function stencil2d(inp: Float32Array, out: Float32Array, w: u32, h: u32): void {
  const x = wave.global_id(0);
  const y = wave.global_id(1);
  if (x > 0 && y > 0 && x < w - 1 && y < h - 1) {
    const c = y * w + x;
    let s: f32 = inp[c - w] + inp[c + w];
    s = s + inp[c - 1];
    s = s + inp[c + 1];
    out[c] = s * 0.25;
  }
}
