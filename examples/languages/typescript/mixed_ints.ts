// Signed and unsigned 32-bit arithmetic that wraps: a hash, shifts, masks and a compare.
// Math.imul multiplies modulo 2**32; >>> 0 and | 0 read the bits as u32 and i32.

/** @kernel */
export function mixed_ints(a: Int32Array, b: Uint32Array, out_i: Int32Array, out_u: Uint32Array, n: u32): void {
  const i = wave.global_id(0);
  if (i < n) {
    const h = (Math.imul(a[i], 2654435761) + b[i]) >>> 0;
    out_u[i] = (h >>> 7) ^ (h << 3);
    let s = (a[i] >> 3) ^ (b[i] & 255);
    if (a[i] < 0) {
      s = (s - 1000) | 0;
    }
    out_i[i] = Math.imul(s, -3);
  }
}
