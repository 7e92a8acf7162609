// bins[data[i] % nbins] += 1 by atomics (JavaScript's own Atomics.add on a Uint32Array).

/** @kernel */
export function histogram(data: Uint32Array, bins: Uint32Array, n: u32, nbins: u32): void {
  const i = wave.global_id(0);
  if (i < n) {
    Atomics.add(bins, (data[i] % nbins) >>> 0, 1);
  }
}
