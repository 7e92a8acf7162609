// The exclusive prefix sum of x within each wave (u32, wrapping).

/** @kernel */
export function wave_scan(x: Uint32Array, out: Uint32Array, n: u32): void {
  const i = wave.global_id(0);
  const v = i < n ? x[i] : 0;
  const p = wave.wave_prefix_add(v);
  if (i < n) {
    out[i] = p;
  }
}
