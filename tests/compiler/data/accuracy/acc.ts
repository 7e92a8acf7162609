/** @kernel */
export function acc(x: Float32Array, y: Float32Array, o: Float32Array, n: u32): void {
  const i = wave.global_id(0);
  if (i < n) {
    const v = x[i];
    o[i] = Math.exp(v);
    o[n + i] = wave.exp2(v);
    o[2 * n + i] = Math.log(v);
    o[3 * n + i] = Math.log2(v);
    o[4 * n + i] = Math.sin(v);
    o[5 * n + i] = Math.cos(v);
    o[6 * n + i] = Math.sqrt(v);
    o[7 * n + i] = wave.rsqrt(v);
  }
}
