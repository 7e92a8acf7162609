// Each 256-thread workgroup sums its 256 elements by a tree in local memory: partial[g].

/** @kernel */
export function reduce_sum(data: Float32Array, partial: Float32Array, n: u32): void {
  const buf = wave.local_array(Float32Array, 256);
  const t = wave.thread_id(0);
  const i = wave.global_id(0);
  buf[t] = i < n ? data[i] : 0;
  wave.barrier();
  for (let s = 128; s > 0; s >>= 1) {
    if (t < s) {
      buf[t] = buf[t] + buf[t + s];
    }
    wave.barrier();
  }
  if (t === 0) {
    partial[wave.workgroup_id(0)] = buf[0];
  }
}
